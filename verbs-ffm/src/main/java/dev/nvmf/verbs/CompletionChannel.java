package dev.nvmf.verbs;

/**
 * A completion event channel ({@code struct ibv_comp_channel}). A poller with nothing to do arms its CQ
 * ({@link CompletionQueue#requestNotify}), polls once more, then waits here.
 */
public interface CompletionChannel extends AutoCloseable {
    /** The channel's file descriptor (for the ffm provider), or -1. */
    int fd();

    /**
     * Waits up to {@code timeoutMillis} for a CQ event; when one arrives it is read (ibv_get_cq_event) and
     * acknowledged, and its CQ is returned. Returns null on timeout. 0 = do not block.
     */
    CompletionQueue awaitEvent(long timeoutMillis);

    /** Wakes a thread blocked in {@link #awaitEvent} from another thread (it then returns null). */
    void wakeup();

    @Override
    void close();
}
