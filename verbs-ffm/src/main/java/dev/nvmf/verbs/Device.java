package dev.nvmf.verbs;

/**
 * An opened device context ({@code struct ibv_context}). One instance per context: the provider hands out
 * the same object for every CM id on that device, so it can key per-device resources (PD, CQs, slabs).
 */
public interface Device extends AutoCloseable, EventSource {
    String name();

    DeviceAttributes attributes();

    ProtectionDomain allocProtectionDomain();

    /** A completion channel: the file descriptor a poller blocks on when it is idle. */
    CompletionChannel createCompletionChannel();

    /**
     * Creates a completion queue of at least {@code minEntries} entries.
     *
     * @param channel channel to report events on, or null for a poll-only CQ
     */
    CompletionQueue createCompletionQueue(int minEntries, CompletionChannel channel);

    /**
     * Returns the next asynchronous event (ibv_get_async_event), or null when none arrives within the timeout;
     * the event is acknowledged before it is returned. {@code IBV_EVENT_COMM_EST} is the one the target answers
     * (with {@link CmId#notifyEstablished()}; thread "posting send requests in RTR").
     */
    AsyncEvent pollAsyncEvent(long timeoutMillis);

    /** Readable while asynchronous events are queued (the context's async_fd, made non-blocking, on the ffm provider). */
    @Override
    int readinessFd();

    /** Closes the context. Contexts obtained from a CM id are owned by the provider and ignore close(). */
    @Override
    void close();
}
