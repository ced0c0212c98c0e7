package dev.nvmf.verbs;

/**
 * A shared receive queue ({@code struct ibv_srq}): receive work requests that any QP created on it consumes, in
 * posting order, when a SEND arrives for that QP (IBA chapter 10, shared receive queues). The receive completion goes
 * to the consuming QP's receive CQ and carries that QP's number ({@code ibv_wc.qp_num}), the only way to tell which
 * connection the message came on.
 *
 * <p>Semantics a consumer relies on: a QP on an SRQ has no receive queue of its own (its max_recv_wr is 0 and
 * {@link QueuePair#postRecv} is refused); when such a QP goes to the error state, only what it already took from the
 * SRQ completes flushed, while the receives still on the SRQ stay there for the other QPs (IBA chapter 10, QP error
 * with an SRQ; the kernel's ib_drain_qp drains the receive queue only of QPs without an SRQ); when the SRQ is empty an
 * arriving SEND is answered with RNR NAK and retried by the sender, as on an ordinary empty receive queue. The SRQ may
 * be destroyed only after every QP created on it is (ibv_destroy_srq(3): EBUSY otherwise).
 *
 * <p>Hot-path calls return 0 or an errno value and allocate nothing; control-path calls throw
 * {@link VerbsException}.
 */
public interface SharedReceiveQueue extends AutoCloseable {
    /** Receive work requests the SRQ holds at most (max_wr as granted; may exceed what was asked for). */
    int maxWr();

    /** Scatter/gather entries per receive (max_sge as granted). */
    int maxSge();

    /**
     * Posts a chain of receive work requests (ibv_post_srq_recv, static inline in verbs.h over the context's
     * ops.post_srq_recv). Same convention as {@link QueuePair#postRecv}: 0, or an errno value with
     * {@link #postedBeforeFailure()} requests at the head of the chain posted.
     */
    int postRecv(RecvWorkRequest first);

    /** After a failed {@link #postRecv}: how many requests at the head of that chain were posted (bad_wr). */
    int postedBeforeFailure();

    /** Destroys the SRQ (ibv_destroy_srq); only once every QP on it is destroyed. */
    @Override
    void close();
}
