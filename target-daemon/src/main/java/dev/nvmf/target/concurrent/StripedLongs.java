package dev.nvmf.target.concurrent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A row of monotonic counters that the I/O path adds to from a few long-lived threads (pollers, backend
 * completion threads) and that a scrape or a log page reads now and then. Each writing thread gets a stripe of its
 * own, a {@code long[]} that only it writes: adding is an opaque load and store (plain instructions on x86), where
 * a {@code LongAdder} or an {@code AtomicLong} is a locked instruction per add. That was five per 4 KiB I/O before
 * (the namespace's SMART counters, the latency histogram's bucket and sum, the byte counter): a full fence each on
 * x86 (docs/performance.md, section 2).
 *
 * <p>A thread finds its stripe from its thread id (unique for the life of the JVM): the id hashes to a home slot,
 * and a slot holds the stripe of the thread that claimed it, its id stored beside the counters. The common case
 * is a field load, a multiply and two array loads; a {@code ThreadLocal} lookup, what this used first, cost a
 * tenth of the poller's time in a profile with 64 connections (docs/performance.md, section 2). A thread whose
 * home slot another took probes the next slots (a few compares per add, no allocation); a stripe is allocated on
 * a thread's first add to this row and then reused, so a warm thread allocates nothing. Slots are never given
 * back (a thread's exit has no hook), so once {@link #MAX_STRIPES} threads have added to a row over the life of
 * the process (the tests start many), later ones add to one shared stripe with atomic adds: slower, never wrong.
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
    /** Threads that get a stripe of their own in one row, over the life of the process (a power of two). */
    public static final int MAX_STRIPES = 64;
    /** 64 bytes of padding after a stripe's counters: two threads' stripes never share a cache line. */
    private static final int PAD = 8;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    /** Where a stripe keeps its owner's thread id: after the counters, in the padding. */
    private static final int OWNER = 0;
    private static final int HASH_SHIFT = Long.SIZE - Integer.numberOfTrailingZeros(MAX_STRIPES);

    private final int width;
    /** The stripes by slot, null until a thread claims the slot (then never changed). */
    private final AtomicReferenceArray<long[]> stripes = new AtomicReferenceArray<>(MAX_STRIPES);
    private final long[] shared;
    /** Index of the owner's thread id in a stripe. */
    private final int owner;

    /** @param width how many counters the row has (indexes 0 to width - 1) */
    public StripedLongs(int width) {
        if (width <= 0) throw new IllegalArgumentException("width must be > 0: " + width);
        this.width = width;
        this.owner = width + OWNER;
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

    /** The current thread's stripe: the one its id claimed, claimed now on its first add, or the shared one. */
    private long[] stripe() {
        long id = Thread.currentThread().threadId();
        int home = (int) ((id * 0x9E3779B97F4A7C15L) >>> HASH_SHIFT);
        long[] s = stripes.getAcquire(home);
        if (s != null && s[owner] == id) {
            return s;
        }
        return claim(id, home);
    }

    /** Finds or claims the thread's slot, from its home slot on; the shared stripe when every slot is taken. */
    private long[] claim(long id, int home) {
        long[] mine = null;
        for (int k = 0; k < MAX_STRIPES; k++) {
            int slot = (home + k) & (MAX_STRIPES - 1);
            long[] s = stripes.getAcquire(slot);
            if (s == null) {
                if (mine == null) {
                    mine = new long[width + PAD];
                    mine[owner] = id;
                }
                if (stripes.compareAndSet(slot, null, mine)) return mine;
                s = stripes.getAcquire(slot); // another thread claimed it first
            }
            if (s[owner] == id) return s;
        }
        return shared;
    }
}
