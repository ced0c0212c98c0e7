package dev.nvmf.verbs;

/**
 * An RDMA CM event channel ({@code struct rdma_event_channel}). The target's CM thread owns one; tests on the
 * soft provider drive it with {@code pollEvent(0)}.
 */
public interface CmEventChannel extends AutoCloseable, EventSource {
    /** Creates a CM id for reliable-connected service (RDMA_PS_TCP) on this channel. */
    CmId createId(Object context);

    /**
     * Returns the next CM event, or null if none arrives within {@code timeoutMillis} (0 = do not block).
     * The returned event holds copies of its private data and parameters; it must still be {@link CmEvent#ack()
     * acknowledged}, after which its CM id may be destroyed.
     */
    CmEvent pollEvent(long timeoutMillis);

    /** Wakes a thread blocked in {@link #pollEvent} (it then returns null). Safe from any thread. */
    void wakeup();

    /** The channel's file descriptor, or -1 for providers without one. */
    int fd();

    /** Readable while CM events are queued (the channel's fd on the ffm provider, an eventfd on the soft one). */
    @Override
    int readinessFd();

    @Override
    void close();
}
