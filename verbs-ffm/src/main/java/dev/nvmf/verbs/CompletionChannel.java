package dev.nvmf.verbs;

/**
 * A completion event channel ({@code struct ibv_comp_channel}). A poller with nothing to do arms its CQ
 * ({@link CompletionQueue#requestNotify}), polls once more, then waits here.
 */
public interface CompletionChannel extends AutoCloseable, EventSource {
    /** {@link #nextEvent}: an event was read and acknowledged; {@link #eventQueue()} names its CQ. */
    int EVENT = 1;

    /** The channel's file descriptor (for the ffm provider), or -1. */
    int fd();

    /**
     * Waits up to {@code timeoutMillis} for a CQ event; when one arrives it is read (ibv_get_cq_event) and
     * acknowledged, and its CQ is returned. Returns null on timeout. 0 = do not block.
     *
     * @throws VerbsException when ibv_get_cq_event fails (see {@link #nextEvent}, which reports it as a code)
     */
    CompletionQueue awaitEvent(long timeoutMillis);

    /**
     * The hot-path form of {@link #awaitEvent}: waits up to {@code timeoutMillis} (0 = look once, negative = no
     * limit) for a CQ event, reads and acknowledges it. Allocates nothing and never throws for a channel failure.
     *
     * @return {@link #EVENT} (the CQ is {@link #eventQueue()}); 0 on timeout or {@link #wakeup()}; or a negative
     *         errno when ibv_get_cq_event failed. A failed channel does not recover: it means its device is dead
     *         (removed or fatally broken), so stop waiting on it, treat every queue on the device as failed and
     *         tear them down with a bound (their completions may never come)
     */
    int nextEvent(long timeoutMillis);

    /** The CQ of the event the last {@link #nextEvent} returned {@link #EVENT} for; the waiting thread only. */
    CompletionQueue eventQueue();

    /** Readable while CQ events are pending, or once the channel failed. */
    @Override
    int readinessFd();

    /** Wakes a thread blocked in {@link #awaitEvent} from another thread (it then returns null). */
    void wakeup();

    @Override
    void close();
}
