package dev.nvmf.verbs;

/**
 * A reliable-connected queue pair ({@code struct ibv_qp}), created on a {@link CmId}.
 *
 * <p>Hot-path calls return 0 or an errno value and allocate nothing. A post beyond the queue's capacity fails
 * with ENOMEM, as hardware does; the caller's send budget must make that impossible (thread "two initiators":
 * send-queue space is fed back by completions).
 * Posting to a QP in the error state succeeds; the work completes with {@link WcStatus#WR_FLUSH_ERR}.
 */
public interface QueuePair {
    int qpNum();

    /** The capacities granted at creation (may exceed those asked for). */
    QpCapabilities capabilities();

    /**
     * Posts a chain of send work requests (ibv_post_send) starting at {@code first}; the chain follows the
     * native {@code next} pointers.
     *
     * @return 0, or an errno value; on failure nothing from the failing request on was posted
     */
    int postSend(SendWorkRequest first);

    /** Posts a chain of receive work requests (ibv_post_recv). Same return convention as postSend. */
    int postRecv(RecvWorkRequest first);

    /** Moves the QP to the error state (ibv_modify_qp to IBV_QPS_ERR): every outstanding WR will be flushed. */
    void moveToError();

    /** The current state as the provider knows it (ibv_query_qp). */
    QpState state();
}
