package dev.nvmf.target.rdma.queue;

/**
 * The 64-bit {@code wr_id} of every work request the transport posts. A work completion carries it back unchanged
 * and it is all a poller learns about the completed work (verbs.h, {@code struct ibv_wc}: {@code wr_id}), so it
 * names the queue (its slot on the poller), the kind of work and the command context:
 * {@code slot << 32 | kind << 24 | context index}. Pure; allocation-free.
 */
public final class WrId {
    /** A receive of a command capsule. */
    public static final int RECV = 1;
    /** The response SEND (or SEND_WITH_INV) that ends a response chain; always signaled. */
    public static final int SEND = 2;
    /** The last RDMA READ of a chain that fetches a write command's host data; signaled. */
    public static final int READ = 3;
    /** An RDMA WRITE of a read command's data; unsignaled, so it completes only in error or flushed. */
    public static final int WRITE = 4;
    /**
     * An RDMA READ before the last of its chain (one per SGL descriptor); unsignaled, so it completes only in error
     * or flushed. Its own kind tells the poller that the chain's signaled READ is still to come.
     */
    public static final int READ_UNSIGNALED = 5;
    /**
     * A receive posted to the poller's shared receive queue: its index is the buffer's in {@link SharedReceives}, its
     * slot is 0 (any QP on the SRQ may consume it; the completion's qp_num names the queue).
     */
    public static final int SHARED_RECV = 6;

    /** Contexts of one queue are numbered below this (24 bits). */
    public static final int MAX_CONTEXTS = 1 << 24;

    private WrId() {}

    public static long of(int slot, int kind, int index) {
        return (long) slot << 32 | (long) kind << 24 | index;
    }

    public static int slot(long wrId) { return (int) (wrId >>> 32); }

    public static int kind(long wrId) { return (int) (wrId >>> 24) & 0xFF; }

    public static int index(long wrId) { return (int) wrId & 0xFFFFFF; }
}
