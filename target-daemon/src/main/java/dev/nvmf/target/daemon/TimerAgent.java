package dev.nvmf.target.daemon;

import dev.nvmf.target.rdma.NotifyingIdleStrategy;
import org.agrona.concurrent.Agent;

import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The daemon's timers (keep-alive expiry) as an agent that sleeps until its next deadline. Keep-alive can only
 * expire a controller at the end of one of its windows ({@code KeepAliveTimer.windowEndNanos}), so the agent runs
 * a turn at the earliest window end the core reports and parks until then; with no controller it parks with no
 * timeout at all. An idle daemon's timer thread therefore makes no wake-ups (before, it woke every 100 ms). What
 * can move the deadline earlier (a new controller, a Set Features that shortens KATO) calls {@link #wake} from the
 * queue's poller, as does stopping. The kernel target arms one delayed work per controller for the same reason
 * (kernel core.c, {@code nvmet_start_keep_alive_timer}).
 */
final class TimerAgent implements Agent, NotifyingIdleStrategy.Sleeper {
    private final LongSupplier clock;
    private final LongSupplier nextDeadline;
    private final LongConsumer turn;
    private volatile Thread owner;
    private volatile boolean woken = true;
    private volatile boolean stopping;
    private long dueNanos;

    /**
     * @param clock        nanoseconds, the same clock as the deadlines
     * @param nextDeadline the earliest time a turn can find something to do, {@link Long#MAX_VALUE} for never
     *                     (until {@link #wake})
     * @param turn         one turn of the timers, given the time
     */
    TimerAgent(LongSupplier clock, LongSupplier nextDeadline, LongConsumer turn) {
        this.clock = clock;
        this.nextDeadline = nextDeadline;
        this.turn = turn;
    }

    @Override
    public void onStart() {
        owner = Thread.currentThread();
    }

    @Override
    public int doWork() {
        long now = clock.getAsLong();
        boolean due = woken || now - dueNanos >= 0;
        if (!due) {
            return 0;
        }
        // Cleared before the turn: a wake() during the turn makes the next pass look again.
        woken = false;
        turn.accept(now);
        dueNanos = nextDeadline.getAsLong();
        return 1;
    }

    @Override
    public boolean prepareToBlock() {
        return !woken && !stopping;
    }

    @Override
    public void block() {
        long due = dueNanos;
        if (due == Long.MAX_VALUE) {
            LockSupport.park(this);
        } else {
            long wait = due - clock.getAsLong();
            if (wait > 0) {
                LockSupport.parkNanos(this, wait);
            }
        }
    }

    /** Any thread: look at the deadlines again now (they may have moved earlier). */
    void wake() {
        woken = true;
        Thread t = owner;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** Any thread, before the runner is closed: the agent stops blocking so that its thread can end at once. */
    void stopping() {
        stopping = true;
        wake();
    }

    @Override
    public String roleName() {
        return "nvmf-timers";
    }
}
