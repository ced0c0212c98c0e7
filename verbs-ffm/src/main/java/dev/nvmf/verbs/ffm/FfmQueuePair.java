package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.SendWorkRequest;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * An RC ibv_qp created by rdma_create_qp. post_send / post_recv go through the context's ops table, with the
 * function pointers read once here and the bad_wr out-pointers preallocated: posting allocates nothing.
 *
 * <p>bad_wr: the out-pointer is cleared before each post, so a provider that fails without setting it is told
 * apart from one that names a request; after a failure the chain is walked from its first request to bad_wr
 * (verbs.h: {@code *bad_wr} is the first request not posted) to count what was posted.
 */
final class FfmQueuePair implements QueuePair {
    private final FfmDevice device;
    private final MemorySegment qp;
    private final int qpNum;
    private final QpCapabilities capabilities;
    private final MemorySegment postSend;
    private final MemorySegment postRecv;
    /**
     * The two bad_wr out-pointers. Freed when the QP is destroyed ({@link #release()}), not by the collector: a
     * daemon whose I/O path allocates nothing may not collect for hours, and it creates and destroys QPs all the
     * time.
     */
    private final Arena arena = Arena.ofShared();
    private final MemorySegment badSendWr;
    private final MemorySegment badRecvWr;
    private int postedBeforeFailure;

    FfmQueuePair(FfmDevice device, MemorySegment qp, QpCapabilities capabilities) {
        this.device = device;
        this.qp = qp.reinterpret(NativeLayout.IBV_QP_SIZE);
        this.qpNum = this.qp.get(JAVA_INT, NativeLayout.IBV_QP_QP_NUM);
        this.capabilities = capabilities;
        MemorySegment context = this.qp.get(ADDRESS, NativeLayout.IBV_QP_CONTEXT);
        this.postSend = DataPath.function(context, NativeLayout.IBV_CONTEXT_OPS_POST_SEND);
        this.postRecv = DataPath.function(context, NativeLayout.IBV_CONTEXT_OPS_POST_RECV);
        this.badSendWr = arena.allocate(ADDRESS);
        this.badRecvWr = arena.allocate(ADDRESS);
    }

    /** Frees the QP's native helpers; called once the native QP is destroyed (nothing posts any more). */
    void release() {
        if (arena.scope().isAlive()) arena.close();
    }

    MemorySegment qp() { return qp; }

    @Override
    public int qpNum() { return qpNum; }

    @Override
    public QpCapabilities capabilities() { return capabilities; }

    @Override
    public int postSend(SendWorkRequest first) {
        badSendWr.set(JAVA_LONG, 0, 0L);
        int rc;
        try {
            rc = (int) DataPath.POST_SEND.invokeExact(postSend, qp, first.segment(), badSendWr);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            postedBeforeFailure = postedBefore(first.address(), badSendWr.get(JAVA_LONG, 0), SendWorkRequest.NEXT_OFFSET);
        }
        return rc;
    }

    @Override
    public int postRecv(RecvWorkRequest first) {
        badRecvWr.set(JAVA_LONG, 0, 0L);
        int rc;
        try {
            rc = (int) DataPath.POST_RECV.invokeExact(postRecv, qp, first.segment(), badRecvWr);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc != 0) {
            postedBeforeFailure = postedBefore(first.address(), badRecvWr.get(JAVA_LONG, 0), RecvWorkRequest.NEXT_OFFSET);
        }
        return rc;
    }

    @Override
    public int postedBeforeFailure() { return postedBeforeFailure; }

    /**
     * How many requests of the chain starting at {@code first} (linked through the {@code next} pointer at
     * {@code nextOffset}) come before {@code bad}; the whole chain's length when {@code bad} is 0 or not in it (the
     * provider named no request: count everything as posted, see {@link QueuePair#postedBeforeFailure()}).
     */
    static int postedBefore(long first, long bad, long nextOffset) {
        int n = 0;
        long wr = first;
        while (wr != 0 && wr != bad) {
            n++;
            wr = DataPath.MEMORY.get(JAVA_LONG_UNALIGNED, wr + nextOffset);
        }
        return n;
    }

    @Override
    public void moveToError() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(NativeLayout.IBV_QP_ATTR_SIZE, 8);
            attr.set(JAVA_INT, NativeLayout.IBV_QP_ATTR_QP_STATE, NativeLayout.IBV_QPS_ERR);
            device.rdma().check("ibv_modify_qp", qp, attr, NativeLayout.IBV_QP_STATE);
        }
    }

    @Override
    public QpState state() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(NativeLayout.IBV_QP_ATTR_SIZE, 8);
            MemorySegment init = arena.allocate(NativeLayout.IBV_QP_INIT_ATTR_SIZE, 8);
            device.rdma().check("ibv_query_qp", qp, attr, NativeLayout.IBV_QP_STATE, init);
            return QpState.of(attr.get(JAVA_INT, NativeLayout.IBV_QP_ATTR_QP_STATE));
        }
    }

    @Override
    public String toString() { return "FfmQueuePair[qp_num=" + qpNum + "]"; }
}
