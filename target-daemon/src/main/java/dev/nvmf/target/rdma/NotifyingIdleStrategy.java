package dev.nvmf.target.rdma;

import org.agrona.concurrent.IdleStrategy;

import java.util.function.LongSupplier;

/**
 * How the transport's agents wait when a duty cycle found nothing to do: keep polling for a configured time after
 * the last work (the busy-poll period: at queue depth 1 a host's next command usually comes back within
 * microseconds, and taking it by polling saves the event, the re-arming and the scheduler's wake-up), then let the
 * agent arm its notification, look once more, and block on its event sources with no timeout
 * ({@link dev.nvmf.verbs.EventWaiter}: epoll over its channels, a timer for its deadlines and a wakeup). Arming
 * before the last look matters: a completion that arrived between the last poll and the arming raises no event, so
 * only the second look finds it ({@code ibv_req_notify_cq(3)}, {@code ibv_get_cq_event(3)}). Once the period is
 * over nothing is timed: an idle daemon uses no CPU and makes no wake-ups.
 *
 * <p>The period runs from the first empty duty cycle after work; the clock is read only in empty cycles, and not
 * at all with a period of 0 (block at once). The kernel's socket busy polling ({@code net.core.busy_poll}, in µs)
 * and SPDK's pollers make the same trade: CPU for a while after work, against the latency of a wake-up.
 */
public final class NotifyingIdleStrategy implements IdleStrategy {
    /** An agent that can sleep on its event sources. Called on the agent's own thread. */
    public interface Sleeper {
        /**
         * Arms notification and looks once more for work (doing what it finds). Returns whether the agent may
         * block now: false when there was work, or when it is being stopped.
         */
        boolean prepareToBlock();

        /** Blocks until an event, a deadline of the agent's, or a wakeup from another thread. */
        void block();
    }

    /** {@link #idleSince} while the agent is not in an empty stretch. */
    private static final long WORKING = Long.MIN_VALUE;

    private final Sleeper sleeper;
    private final long busyPollNanos;
    private final LongSupplier clock;
    /** The clock at the first empty duty cycle after work, or {@link #WORKING}. */
    private long idleSince = WORKING;

    /** Blocks at once when a duty cycle found nothing (agents whose work never comes back within microseconds). */
    public NotifyingIdleStrategy(Sleeper sleeper) {
        this(sleeper, 0, System::nanoTime);
    }

    /**
     * @param busyPollNanos how long to keep polling after the last work before blocking (0: block at once)
     * @param clock         nanoseconds ({@link System#nanoTime} in production; a virtual clock in tests)
     */
    public NotifyingIdleStrategy(Sleeper sleeper, long busyPollNanos, LongSupplier clock) {
        if (busyPollNanos < 0) throw new IllegalArgumentException("negative busy-poll period");
        this.sleeper = sleeper;
        this.busyPollNanos = busyPollNanos;
        this.clock = clock;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            idleSince = WORKING;
            return;
        }
        idle();
    }

    @Override
    public void idle() {
        if (busyPollNanos > 0) {
            long now = clock.getAsLong();
            if (idleSince == WORKING) idleSince = now;
            if (now - idleSince < busyPollNanos) {
                Thread.onSpinWait();
                return;
            }
        }
        idleSince = WORKING; // a wake-up is something happening: the next empty stretch polls for a period again
        if (sleeper.prepareToBlock()) sleeper.block();
    }

    @Override
    public void reset() {
        idleSince = WORKING;
    }

    /** The busy-poll period in nanoseconds (0: block at once). */
    public long busyPollNanos() { return busyPollNanos; }

    @Override
    public String alias() {
        return "notifying";
    }
}
