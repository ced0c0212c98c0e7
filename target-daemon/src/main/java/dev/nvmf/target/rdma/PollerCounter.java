package dev.nvmf.target.rdma;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A counter of the I/O path with one slot per poller: a poller adds to its own slot with an opaque read and write
 * (a plain load and store on x86: no locked instruction, no contention), because only the poller's thread writes
 * it; any other writer (a test's thread, a control-path caller without a poller) uses the shared slot, with an
 * atomic add. {@link #sum} adds the slots up with opaque reads, which is enough for a monotonic counter read at
 * scrape time. Slots are a cache line apart, so two pollers never write the same line.
 *
 * <p>It replaces the LongAdders the transport bumped several times per I/O: each of those is a compare-and-set
 * (about 11 ns here, against under 1 ns: docs/performance.md, section 2), and with several pollers they shared
 * lines between cores until the adder grew cells. Agrona's counters make the same single-writer choice
 * ({@code AtomicCounter.incrementOrdered}).
 */
public final class PollerCounter {
    /** Pollers a transport may have ({@code RdmaTransportConfig.pollers}, 1..256). */
    public static final int MAX_POLLERS = 256;
    /** The slot of writers that are not a poller. */
    public static final int SHARED = -1;
    /** Longs per slot: 64 bytes, one cache line. */
    private static final int STRIDE = 8;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(long[].class);

    /** Slot 0 is the shared one; poller {@code i} writes slot {@code i + 1}. */
    private final long[] slots = new long[(MAX_POLLERS + 1) * STRIDE];

    /** Adds {@code n} as poller {@code poller} (its index; {@link #SHARED} or any index out of range: atomic). */
    public void add(int poller, long n) {
        if (poller >= 0 && poller < MAX_POLLERS) {
            int i = (poller + 1) * STRIDE;
            SLOTS.setOpaque(slots, i, (long) SLOTS.getOpaque(slots, i) + n);
        } else {
            SLOTS.getAndAdd(slots, 0, n);
        }
    }

    public void increment(int poller) {
        add(poller, 1);
    }

    /** The total over every slot (any thread). */
    public long sum() {
        long s = 0;
        for (int i = 0; i < slots.length; i += STRIDE) {
            s += (long) SLOTS.getOpaque(slots, i);
        }
        return s;
    }
}
