package dev.nvmf.target.rdma.queue;

/**
 * What a queue is opened with: the validated connect request and the sizes the CM derived from it and the device.
 *
 * @param portId             the configured port the connection arrived on
 * @param qid                queue id from the private data (0 = admin)
 * @param depth              entries of the queue (hsqsize + 1): receives posted at all times, credits of the host
 * @param inCapsuleDataSize  bytes of in-capsule data a capsule may carry after its SQE
 * @param maxIoSize          largest transfer a keyed SGL may describe
 * @param readDepth          RDMA READs the queue may have outstanding (the negotiated initiator depth)
 * @param sendBudget         send-queue WRs (the QP's max_send_wr): every chain is reserved whole against it
 * @param remoteInvalidation answer an invalidate-key SGL with SEND_WITH_INV
 * @param peer               the host's address, for logs
 */
public record QueueParameters(int portId, int qid, int depth, int inCapsuleDataSize, int maxIoSize, int readDepth,
                              int sendBudget, boolean remoteInvalidation, String peer) {
    /** Response buffers are 16 bytes; a cache line each keeps neighbours apart. */
    public static final int RESPONSE_SLOT = 64;

    public QueueParameters {
        if (depth < 1 || contextCount(depth) >= WrId.MAX_CONTEXTS) throw new IllegalArgumentException("depth " + depth);
    }

    /**
     * Contexts of a queue: twice its depth. A receive is reposted, with another context's buffer, as soon as a
     * capsule arrives, and the arrived context keeps its buffer until its response SEND completes (kernel rdma.c
     * allocates twice the receive queue size of response contexts for the same reason).
     */
    public static int contextCount(int depth) { return 2 * depth; }

    public int contextCount() { return contextCount(depth); }

    /** A receive buffer: the 64-byte SQE and the in-capsule data, rounded up to a cache line. */
    public int recvBufferSize() { return recvBufferSize(inCapsuleDataSize); }

    /** A receive buffer for {@code inCapsuleDataSize} bytes of in-capsule data after the SQE. */
    public static int recvBufferSize(int inCapsuleDataSize) { return (64 + inCapsuleDataSize + 63) / 64 * 64; }

    /** CQ entries the queue may need at once: every send WR and every receive. */
    public int cqEntries() { return sendBudget + depth; }

    /**
     * Contexts of a queue whose capsules come from a shared receive queue: one per command the host may have without
     * a response (depth: the credits) and one per response chain that may be on the send queue (sendBudget: each holds
     * at least one slot until its completion). A capsule therefore always finds a free context; there is no receive
     * of the queue's own to hold back while none is (the SRQ's buffer is already taken).
     */
    public int contextCountSharing() { return depth + sendBudget; }

    /** CQ entries a queue on a shared receive queue needs: its send WRs (its poller reserved the SRQ's receives). */
    public int cqEntriesSharing() { return sendBudget; }
}
