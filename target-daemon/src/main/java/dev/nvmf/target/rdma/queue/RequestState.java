package dev.nvmf.target.rdma.queue;

/**
 * Where one command context of a queue is in its life. {@link RdmaQueue#advance} is the one function that moves
 * a context from state to state (as SPDK's {@code nvmf_rdma_request_process} does, SPDK rdma.c); completions and
 * the core's answers only set the state they report and call it. What a context holds follows from its state:
 * a posted receive in {@link #RECV_POSTED}; a data buffer from {@link #NEED_BUFFER} (once granted) to
 * {@link #COMPLETED}; one READ credit and one send-queue slot in {@link #READING}; the send-queue slots of its
 * response chain in {@link #SENDING}; the core has it in {@link #EXECUTING}. Which list a context is on follows
 * too: the queue's free stack ({@link #FREE}), its repost chain ({@link #RECV_PENDING}), the capsules kept before
 * ESTABLISHED ({@link #PARKED}), its buffer pool's waiters ({@link #NEED_BUFFER} without a buffer), the READ
 * waiters ({@link #READ_PENDING}), the send waiters ({@link #SEND_PENDING}).
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
    /** Has a buffer for host data: waits, in order, for a READ credit and a send-queue slot. */
    READ_PENDING,
    /** Its RDMA READ of host data is posted; the READ completion comes next. */
    READING,
    /** Its data, if any, is in place. Passed through at once. */
    READY_TO_EXECUTE,
    /** The core holds it: begin() refused it or execute() runs; the core's complete() has not come back yet. */
    EXECUTING,
    /** The core's complete() reached the poller: the response is written. Passed through at once. */
    EXECUTED,
    /** Waits, in order, for send-queue slots for its response chain (RDMA WRITE of data, then SEND). */
    SEND_PENDING,
    /** Its response chain is posted; the signaled SEND's completion (or flush) ends it. */
    SENDING,
    /** Done: its buffer goes back, then the context is reused. Passed through at once. */
    COMPLETED;

    static final RequestState[] ALL = values();
}
