package dev.nvmf.verbs;

/**
 * A reliable-connected queue pair ({@code struct ibv_qp}), created on a {@link CmId}.
 *
 * <p>Hot-path calls return 0 or an errno value and allocate nothing. A post beyond the queue's capacity fails
 * with ENOMEM, as hardware does; the caller's send budget must make that impossible (thread "two initiators":
 * send-queue space is fed back by completions).
 * Posting to a QP in the error state succeeds; the work completes with {@link WcStatus#WR_FLUSH_ERR}.
 *
 * <p>A failed post of a chain is a partial post (ibv_post_send(3): {@code bad_wr} names the first request that
 * was not posted). The requests before it are on the queue: they execute (or flush) and complete like any other,
 * so nothing they use (buffers, keys, send-queue slots) may be released before their completions. The failing
 * request and every one after it were not posted and will never complete. {@link #postedBeforeFailure()} says
 * where the cut is.
 */
public interface QueuePair {
    int qpNum();

    /** The capacities granted at creation (may exceed those asked for). */
    QpCapabilities capabilities();

    /**
     * Posts a chain of send work requests (ibv_post_send) starting at {@code first}; the chain follows the
     * native {@code next} pointers.
     *
     * @return 0, or an errno value; on failure the first {@link #postedBeforeFailure()} requests of the chain were
     *         posted (and will complete), the rest were not
     */
    int postSend(SendWorkRequest first);

    /** Posts a chain of receive work requests (ibv_post_recv). Same return convention as postSend. */
    int postRecv(RecvWorkRequest first);

    /**
     * After a {@link #postSend} or {@link #postRecv} that returned non-zero: how many requests at the head of that
     * chain were posted before the one the provider refused ({@code bad_wr}); 0 when nothing was posted. Valid on
     * the posting thread until its next post on this QP; undefined after a successful post. Allocation-free (the
     * ffm provider counts the chain up to {@code bad_wr} when the post fails). When a provider reports no
     * {@code bad_wr} at all the whole chain counts as posted: memory is then never released early, and the
     * caller's drain bound ends the wait for completions that may never come.
     */
    int postedBeforeFailure();

    /** Moves the QP to the error state (ibv_modify_qp to IBV_QPS_ERR): every outstanding WR will be flushed. */
    void moveToError();

    /** The current state as the provider knows it (ibv_query_qp). */
    QpState state();
}
