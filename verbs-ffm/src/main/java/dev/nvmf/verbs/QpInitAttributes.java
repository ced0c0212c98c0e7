package dev.nvmf.verbs;

/**
 * What {@link CmId#createQueuePair} needs: a reliable-connected QP on the given CQs.
 *
 * @param pd              protection domain (must be on the CM id's device)
 * @param sendCq          CQ for send completions
 * @param recvCq          CQ for receive completions (may be the same as sendCq)
 * @param capabilities    requested capacities
 * @param signalAll       sq_sig_all: true = every send WR is signaled regardless of its flags
 * @param srq             the shared receive queue its receives come from (ibv_qp_init_attr.srq), or null for a
 *                        receive queue of its own; with an SRQ, max_recv_wr and max_recv_sge are ignored (0)
 */
public record QpInitAttributes(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                               QpCapabilities capabilities, boolean signalAll, SharedReceiveQueue srq) {
    /** A QP with a receive queue of its own. */
    public QpInitAttributes(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                            QpCapabilities capabilities, boolean signalAll) {
        this(pd, sendCq, recvCq, capabilities, signalAll, null);
    }
}
