package dev.nvmf.target.rdma.queue;

/** A queue's life (docs/architecture.md "A queue's life"). */
public enum QueueState {
    /** Receives posted, accept sent; capsules that arrive are kept in order: the host may send before
     * the target sees ESTABLISHED (thread "posting send requests in RTR"). */
    CONNECTING,
    /** ESTABLISHED seen (or COMM_EST answered by rdma_notify); capsules flow. */
    LIVE,
    /** QP in error; waiting for every posted WR to come back flushed and for the core to return its requests. */
    DRAINING,
    /** Drained; the CM thread destroys the QP and CM id and returns the memory. */
    CLOSED
}
