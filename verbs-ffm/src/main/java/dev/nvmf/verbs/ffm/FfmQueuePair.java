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

/**
 * An RC ibv_qp created by rdma_create_qp. post_send / post_recv go through the context's ops table, with the
 * function pointers read once here and the bad_wr out-pointers preallocated: posting allocates nothing.
 */
final class FfmQueuePair implements QueuePair {
    private final FfmDevice device;
    private final MemorySegment qp;
    private final int qpNum;
    private final QpCapabilities capabilities;
    private final MemorySegment postSend;
    private final MemorySegment postRecv;
    /** GC-managed: the QP may be dropped without an explicit close, and a shared arena close is costly. */
    private final MemorySegment badSendWr;
    private final MemorySegment badRecvWr;

    FfmQueuePair(FfmDevice device, MemorySegment qp, QpCapabilities capabilities) {
        this.device = device;
        this.qp = qp.reinterpret(NativeLayout.IBV_QP_SIZE);
        this.qpNum = this.qp.get(JAVA_INT, NativeLayout.IBV_QP_QP_NUM);
        this.capabilities = capabilities;
        MemorySegment context = this.qp.get(ADDRESS, NativeLayout.IBV_QP_CONTEXT);
        this.postSend = DataPath.function(context, NativeLayout.IBV_CONTEXT_OPS_POST_SEND);
        this.postRecv = DataPath.function(context, NativeLayout.IBV_CONTEXT_OPS_POST_RECV);
        Arena arena = Arena.ofAuto();
        this.badSendWr = arena.allocate(ADDRESS);
        this.badRecvWr = arena.allocate(ADDRESS);
    }

    MemorySegment qp() { return qp; }

    @Override
    public int qpNum() { return qpNum; }

    @Override
    public QpCapabilities capabilities() { return capabilities; }

    @Override
    public int postSend(SendWorkRequest first) {
        try {
            return (int) DataPath.POST_SEND.invokeExact(postSend, qp, first.segment(), badSendWr);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public int postRecv(RecvWorkRequest first) {
        try {
            return (int) DataPath.POST_RECV.invokeExact(postRecv, qp, first.segment(), badRecvWr);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** The address of the first request that was not posted after a failed post (0 if none). */
    long badSendWrAddress() { return badSendWr.get(ADDRESS, 0).address(); }

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
