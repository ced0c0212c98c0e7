package dev.nvmf.target.concurrent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A row of monotonic counters that the I/O path adds to from a few long-lived threads (pollers, backend
 * completion threads) and that a scrape or a log page reads now and then. Each writing thread gets a stripe of its
 * own, a {@code long[]} that only it writes: adding is an opaque load and store (plain instructions on x86), where
 * a {@code LongAdder} or an {@code AtomicLong} is a locked instruction per add. That was five per 4 KiB I/O before
 * (the namespace's SMART counters, the latency histogram's bucket and sum, the byte counter): a full fence each on
 * x86 (docs/performance.md, section 5).
 *
 * <p>A thread's stripe number comes from a thread-local, taken once per {@link #add} call, however many counters
 * that call adds to; the stripe itself is allocated on the thread's first add and then reused, so a warm thread
 * allocates nothing. Stripe numbers are never given back (a thread's exit has no hook), so a process that has
 * started more than {@link #MAX_STRIPES} writing threads over its life (the tests do) sends the later ones to one
 * shared stripe updated with atomic adds: slower, never wrong.
 *
 * <p>Why not the transport's {@code PollerCounter}, which keys its slots by poller index: these counters are added
 * to by whichever thread completes a command (a poller for a RAM namespace, an I/O worker or librbd's callback
 * thread for the others), and the core that owns them knows no poller index.
 *
 * <p>Reads ({@link #sum}) add up every stripe with opaque loads. Each counter is monotonic, so a reader sees a
 * value that some moment between its first and its last load had; two counters of a row may be one add apart,
 * as Prometheus allows for a histogram's buckets and its sum.
 */
public final class StripedLongs {
    /** Threads that get a stripe of their own, over the life of the process. */
    public static final int MAX_STRIPES = 64;
    /** The stripe number of threads that came after {@link #MAX_STRIPES}: they share one, with atomic adds. */
    private static final int SHARED = -1;
    /** 64 bytes of padding after a stripe's counters: two threads' stripes never share a cache line. */
    private static final int PAD = 8;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    private static final AtomicInteger NEXT_STRIPE = new AtomicInteger();
    /** The current thread's stripe number (an Integer from the small-value cache: reading it allocates nothing). */
    private static final ThreadLocal<Integer> STRIPE = ThreadLocal.withInitial(() -> {
        int s = NEXT_STRIPE.getAndIncrement();
        return s < MAX_STRIPES ? s : SHARED;
    });

    private final int width;
    /** Stripe {@code s} of thread-stripe number {@code s}, null until that thread first adds. */
    private final AtomicReferenceArray<long[]> stripes = new AtomicReferenceArray<>(MAX_STRIPES);
    private final long[] shared;

    /** @param width how many counters the row has (indexes 0 to width - 1) */
    public StripedLongs(int width) {
        if (width <= 0) throw new IllegalArgumentException("width must be > 0: " + width);
        this.width = width;
        this.shared = new long[width + PAD];
    }

    public int width() { return width; }

    /** Adds {@code n} to counter {@code i} (any thread). */
    public void add(int i, long n) {
        long[] s = stripe();
        if (s == shared) {
            LONGS.getAndAdd(s, i, n);
        } else {
            LONGS.setOpaque(s, i, (long) LONGS.getOpaque(s, i) + n);
        }
    }

    /** Adds {@code n} to counter {@code i} and {@code m} to counter {@code j}, with one stripe lookup. */
    public void add(int i, long n, int j, long m) {
        long[] s = stripe();
        if (s == shared) {
            LONGS.getAndAdd(s, i, n);
            LONGS.getAndAdd(s, j, m);
        } else {
            LONGS.setOpaque(s, i, (long) LONGS.getOpaque(s, i) + n);
            LONGS.setOpaque(s, j, (long) LONGS.getOpaque(s, j) + m);
        }
    }

    /** Adds {@code n}, {@code m} and {@code o} to counters {@code i}, {@code j} and {@code k}, with one lookup. */
    public void add(int i, long n, int j, long m, int k, long o) {
        long[] s = stripe();
        if (s == shared) {
            LONGS.getAndAdd(s, i, n);
            LONGS.getAndAdd(s, j, m);
            LONGS.getAndAdd(s, k, o);
        } else {
            LONGS.setOpaque(s, i, (long) LONGS.getOpaque(s, i) + n);
            LONGS.setOpaque(s, j, (long) LONGS.getOpaque(s, j) + m);
            LONGS.setOpaque(s, k, (long) LONGS.getOpaque(s, k) + o);
        }
    }

    /** Counter {@code i} over every stripe (any thread). */
    public long sum(int i) {
        if (i < 0 || i >= width) throw new IndexOutOfBoundsException(i);
        long total = (long) LONGS.getOpaque(shared, i);
        for (int s = 0; s < MAX_STRIPES; s++) {
            long[] stripe = stripes.getAcquire(s);
            if (stripe != null) {
                total += (long) LONGS.getOpaque(stripe, i);
            }
        }
        return total;
    }

    /** The current thread's stripe, allocated on its first add (only that thread ever stores it). */
    private long[] stripe() {
        int n = STRIPE.get();
        if (n == SHARED) {
            return shared;
        }
        long[] s = stripes.getPlain(n);
        if (s == null) {
            s = new long[width + PAD];
            stripes.setRelease(n, s);
        }
        return s;
    }
}
