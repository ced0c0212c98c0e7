package dev.nvmf.verbs;

/**
 * What {@link CmId#createQueuePair} needs: a reliable-connected QP on the given CQs.
 *
 * @param pd              protection domain (must be on the CM id's device)
 * @param sendCq          CQ for send completions
 * @param recvCq          CQ for receive completions (may be the same as sendCq)
 * @param capabilities    requested capacities
 * @param signalAll       sq_sig_all: true = every send WR is signaled regardless of its flags
 */
public record QpInitAttributes(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                               QpCapabilities capabilities, boolean signalAll) {}
