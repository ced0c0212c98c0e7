package dev.nvmf.verbs;

/**
 * One thread's blocking wait on several {@link EventSource}s, a one-shot timer and a wakeup together, so that a
 * control thread (the CM events, every device's asynchronous events, the keep-alive and drain deadlines) sleeps
 * with no wake-ups at all while nothing happens, and wakes at once when something does. Created by
 * {@link RdmaProvider#createEventWaiter()}; on both providers it is epoll(7) with a timerfd and an eventfd.
 *
 * <p>{@link #await} and {@link #ready} belong to the waiting thread and allocate nothing; {@link #timerAt},
 * {@link #cancelTimer} and {@link #wakeup} may be called from any thread and allocate nothing; {@link #add} and
 * {@link #remove} are control-path calls (any thread) and throw {@link VerbsException}. Readiness is
 * level-triggered: a source is reported again by every await until its events have been taken.
 */
public interface EventWaiter extends AutoCloseable {
    /** The token {@link #ready} reports when the timer set by {@link #timerAt} expired (it is then disarmed). */
    int TIMER = -1;
    /** The token {@link #ready} reports after {@link #wakeup()}. */
    int WAKEUP = -2;

    /** Watches {@code source}: {@link #await} reports {@code token} (0 or more, chosen by the caller) while it has events. */
    void add(EventSource source, int token);

    /** Stops watching {@code source} (do it before closing the source). Unknown sources are ignored. */
    void remove(EventSource source);

    /** Arms the one-shot timer to expire at {@code deadlineNanos} ({@link System#nanoTime()} clock), replacing any earlier deadline; a deadline in the past expires at once. */
    void timerAt(long deadlineNanos);

    /** Disarms the timer. */
    void cancelTimer();

    /**
     * Blocks until a source is ready, the timer expires or {@link #wakeup()} is called, or {@code timeoutMillis}
     * passes (negative = no limit, 0 = look only).
     *
     * @return how many tokens are ready (read them with {@link #ready}); 0 when the time ran out (or a signal
     *         interrupted the wait); a negative errno if the wait itself failed
     */
    int await(long timeoutMillis);

    /** The {@code index}-th token the last {@link #await} reported: a source's token, {@link #TIMER} or {@link #WAKEUP}. */
    int ready(int index);

    /** Makes the current or next {@link #await} return with {@link #WAKEUP}. Any thread. */
    void wakeup();

    /** How many times the underlying wait returned: what an idle waiter must not increase. */
    long wakeups();

    @Override
    void close();
}
