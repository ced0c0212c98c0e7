package dev.nvmf.target.rdma;

import org.agrona.concurrent.IdleStrategy;

/**
 * How the transport's agents wait when a duty cycle found nothing to do: spin a little (work usually comes back
 * within microseconds under load), then let the agent arm its notification, look once more, and block on its
 * event channel with a timeout. Arming before the last look matters: a completion that arrived between the last
 * poll and the arming raises no event, so only the second look finds it ({@code ibv_req_notify_cq(3)},
 * {@code ibv_get_cq_event(3)}). An idle daemon uses no CPU.
 */
public final class NotifyingIdleStrategy implements IdleStrategy {
    /** An agent that can sleep on its event channel. Called on the agent's own thread. */
    public interface Sleeper {
        /**
         * Arms notification and looks once more for work (doing what it finds). Returns whether the agent may
         * block now: false when there was work, or when it is being stopped.
         */
        boolean prepareToBlock();

        /** Blocks until an event, a wakeup from another thread, or {@code timeoutMillis}. */
        void block(long timeoutMillis);
    }

    private final Sleeper sleeper;
    private final int spins;
    private final long timeoutMillis;
    private int idleCycles;

    /**
     * @param spins         idle duty cycles that only spin before the agent blocks (0: block at once)
     * @param timeoutMillis the longest one block lasts
     */
    public NotifyingIdleStrategy(Sleeper sleeper, int spins, long timeoutMillis) {
        this.sleeper = sleeper;
        this.spins = spins;
        this.timeoutMillis = timeoutMillis;
    }

    @Override
    public void idle(int workCount) {
        if (workCount > 0) {
            idleCycles = 0;
            return;
        }
        idle();
    }

    @Override
    public void idle() {
        if (idleCycles < spins) {
            idleCycles++;
            Thread.onSpinWait();
            return;
        }
        idleCycles = 0;
        if (sleeper.prepareToBlock()) sleeper.block(timeoutMillis);
    }

    @Override
    public void reset() {
        idleCycles = 0;
    }

    @Override
    public String alias() {
        return "notifying";
    }
}
