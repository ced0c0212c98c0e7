package dev.nvmf.verbs;

/** A completion queue ({@code struct ibv_cq}). Owned by exactly one poller thread. */
public interface CompletionQueue extends AutoCloseable {
    /** The number of entries the CQ was created with (may exceed what was asked). */
    int capacity();

    /**
     * Polls up to {@code completions.capacity()} completions into the native array (ibv_poll_cq).
     * Hot path: allocates nothing.
     *
     * @return the number of completions written (0 when empty), or a negative value when the CQ failed (a CQ
     *         error: overrun, or the device died; IBV_EVENT_CQ_ERR is reported on the device too). A failed CQ
     *         delivers nothing more: the QPs on it cannot drain, so tear them down with a bound
     */
    int poll(WorkCompletion completions);

    /**
     * Arms the CQ so that the next completion raises an event on its channel (ibv_req_notify_cq).
     *
     * @return 0 or an errno value
     */
    int requestNotify(boolean solicitedOnly);

    @Override
    void close();
}
