package dev.nvmf.target.rdma.poller;

import org.agrona.concurrent.NanoClock;

import java.util.function.LongSupplier;

/**
 * The poller's clock, read at most once per pass on the poller's own thread: every command received in a pass is
 * stamped with the same time, a completion in that pass is timed against it, and an empty pass's busy-poll check
 * reads it once. Per I/O that is one read per pass instead of two per command (its start and its completion, for
 * the latency histogram), which at queue depth 32 is a read per 10-30 commands. A clock read costs tens of
 * nanoseconds with the TSC in the vDSO; where the kernel's clocksource cannot be read from user space (the HPET,
 * which the lab's TCG guest falls back to: "tsc: Marking TSC unstable"), each is a system call and a device read.
 * Linux 6.9 does the same for the block layer: "block: cache current nsec time in struct blk_plug" (Jens Axboe,
 * linux-block, January 2024), one ktime read per plug of requests instead of one per request.
 *
 * <p>What it costs in accuracy: a command that arrives late in a long pass is stamped with the pass's start, and a
 * completion is timed at the start of the pass that took it, so a latency is off by at most one pass's duration
 * (microseconds; a command completed in the pass that received it, as a RAM namespace does, shows 0). Deadlines
 * (keep-alive, the CM's timers) do not read it.
 *
 * <p>Any other thread (a backend completing a command on its own thread) reads the source itself: only the owner
 * sees the cached value, so no thread reads another's pass.
 */
public final class PassClock implements NanoClock {
    private final LongSupplier source;
    /** The poller's thread (set when its agent starts); null until then, so every read goes to the source. */
    private volatile Thread owner;
    private long now;
    private boolean read;

    /** @param source nanoseconds ({@link System#nanoTime} in production, a virtual clock in tests) */
    public PassClock(LongSupplier source) {
        this.source = source;
    }

    /** The calling thread owns this clock from now on (the poller's, when its agent starts). */
    void ownedByCurrentThread() { owner = Thread.currentThread(); }

    /** A pass begins: the next read on the owner's thread goes to the source. Owner thread. */
    void newPass() { read = false; }

    @Override
    public long nanoTime() {
        if (Thread.currentThread() != owner) return source.getAsLong();
        if (!read) {
            now = source.getAsLong();
            read = true;
        }
        return now;
    }
}
