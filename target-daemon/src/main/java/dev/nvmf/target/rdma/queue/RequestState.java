package dev.nvmf.target.rdma.queue;

/**
 * Where one command context of a queue is in its life. {@link RdmaQueue#advance} is the one function that moves a
 * context from state to state (as SPDK's {@code nvmf_rdma_request_process} does, SPDK rdma.c); completions and the
 * core's answers only set the state they report and call it. What a context holds follows from its state: a posted
 * receive in {@link #RECV_POSTED}; a data buffer from {@link #NEED_BUFFER} (once granted) to {@link #COMPLETED};
 * a READ credit and a send-queue slot per READ of its part in {@link #READ_CHAINED} and {@link #READING}; the
 * send-queue slots of its response chain in {@link #SEND_CHAINED} and {@link #SENDING}; the core has it in
 * {@link #EXECUTING}. Which list a context is on follows too: the queue's free stack ({@link #FREE}), its repost
 * chain ({@link #RECV_PENDING}), the capsules kept before ESTABLISHED ({@link #PARKED}), its buffer pool's waiters
 * ({@link #NEED_BUFFER} without a buffer), the READ waiters ({@link #READ_PENDING}), the send waiters
 * ({@link #SEND_PENDING}), the queue's send chain, not yet posted ({@link #READ_CHAINED}, {@link #SEND_CHAINED}).
 */
public enum RequestState {
    /** Unused; on the free stack. */
    FREE,
    /** Its receive goes out with the queue's next chain of receives (posted once per completion batch). */
    RECV_PENDING,
    /** Its receive buffer is posted: the next capsule may land in it. */
    RECV_POSTED,
    /** A capsule arrived in its buffer (credits counted, another receive reposted). Passed through at once. */
    NEW,
    /** Arrived before the queue was established: kept, in arrival order, until it is. */
    PARKED,
    /** The core accepted it and it has host data to move: waits for a registered data buffer. */
    NEED_BUFFER,
    /** Has a buffer for host data: waits, in order, for READ credits and send-queue slots (one each per READ). */
    READ_PENDING,
    /**
     * The READs of its next part hold their credits and slots and are linked into the queue's send chain, which is
     * posted once at the end of the poller's pass ({@link RdmaQueue#flushSends}); the post makes it {@link #READING}.
     */
    READ_CHAINED,
    /**
     * RDMA READs of host data are posted, one per descriptor of a part (all of them when credits allow); the part's
     * signaled READ completion comes next, and sends it back to {@link #READ_PENDING} if descriptors are left.
     */
    READING,
    /** Its data, if any, is in place. Passed through at once. */
    READY_TO_EXECUTE,
    /** The core holds it: begin() refused it or execute() runs; the core's complete() has not come back yet. */
    EXECUTING,
    /** The core's complete() reached the poller: the response is written. Passed through at once. */
    EXECUTED,
    /** Waits, in order, for the send-queue slots of its response chain (an RDMA WRITE per descriptor, then SEND). */
    SEND_PENDING,
    /**
     * Its response chain holds its slots and is linked into the queue's send chain, posted once at the end of the
     * poller's pass; the post makes it {@link #SENDING}. Its buffer and response are final from here.
     */
    SEND_CHAINED,
    /** Its response chain is posted; the signaled SEND's completion (or flush) ends it. */
    SENDING,
    /** Done: its buffer goes back, then the context is reused. Passed through at once. */
    COMPLETED;

    static final RequestState[] ALL = values();
}
