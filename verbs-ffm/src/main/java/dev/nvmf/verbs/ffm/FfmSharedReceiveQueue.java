package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.SharedReceiveQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * An ibv_srq made by ibv_create_srq. ibv_post_srq_recv is static inline in verbs.h and calls the context's
 * {@code ops.post_srq_recv}: its function pointer is read once here and the bad_wr out-pointer preallocated, so
 * posting allocates nothing (as {@link FfmQueuePair} does for post_recv).
 */
final class FfmSharedReceiveQueue implements SharedReceiveQueue {
    private final FfmDevice device;
    private final MemorySegment srq;
    private final int maxWr;
    private final int maxSge;
    private final MemorySegment postSrqRecv;
    /** The bad_wr out-pointer; freed with the SRQ, never left to the collector. */
    private final Arena arena = Arena.ofShared();
    private final MemorySegment badRecvWr;
    private int postedBeforeFailure;
    private boolean closed;

    private FfmSharedReceiveQueue(FfmDevice device, MemorySegment srq, int maxWr, int maxSge) {
        this.device = device;
        this.srq = srq.reinterpret(NativeLayout.IBV_SRQ_SIZE);
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        MemorySegment context = this.srq.get(ADDRESS, NativeLayout.IBV_SRQ_CONTEXT);
        this.postSrqRecv = DataPath.function(context, NativeLayout.IBV_CONTEXT_OPS_POST_SRQ_RECV);
        this.badRecvWr = arena.allocate(ADDRESS);
    }

    static FfmSharedReceiveQueue create(FfmDevice device, MemorySegment pd, int maxWr, int maxSge) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment init = a.allocate(NativeLayout.IBV_SRQ_INIT_ATTR_SIZE, 8);
            init.set(JAVA_INT, NativeLayout.IBV_SRQ_INIT_ATTR_MAX_WR, maxWr);
            init.set(JAVA_INT, NativeLayout.IBV_SRQ_INIT_ATTR_MAX_SGE, maxSge);
            init.set(JAVA_INT, NativeLayout.IBV_SRQ_INIT_ATTR_SRQ_LIMIT, 0);
            MemorySegment srq = device.rdma().pointer("ibv_create_srq", pd, init);
            // ibv_create_srq(3): on success max_wr and max_sge hold what was granted (at least what was asked).
            return new FfmSharedReceiveQueue(device, srq, init.get(JAVA_INT, NativeLayout.IBV_SRQ_INIT_ATTR_MAX_WR),
                    init.get(JAVA_INT, NativeLayout.IBV_SRQ_INIT_ATTR_MAX_SGE));
        }
    }

    MemorySegment srq() { return srq; }

    @Override
    public int maxWr() { return maxWr; }

    @Override
    public int maxSge() { return maxSge; }

    @Override
    public int postRecv(RecvWorkRequest first) {
        badRecvWr.set(JAVA_LONG, 0, 0L);
        int rc;
        try {
            rc = (int) DataPath.POST_SRQ_RECV.invokeExact(postSrqRecv, srq, first.segment(), badRecvWr);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            postedBeforeFailure = FfmQueuePair.postedBefore(first.address(), badRecvWr.get(JAVA_LONG, 0),
                    RecvWorkRequest.NEXT_OFFSET);
        }
        return rc;
    }

    @Override
    public int postedBeforeFailure() { return postedBeforeFailure; }

    @Override
    public synchronized void close() {
        if (closed) return;
        device.rdma().check("ibv_destroy_srq", srq);
        closed = true;
        arena.close();
    }

    @Override
    public String toString() { return "FfmSharedReceiveQueue[max_wr=" + maxWr + "]"; }
}
