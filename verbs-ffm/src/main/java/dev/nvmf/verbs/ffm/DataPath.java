package dev.nvmf.verbs.ffm;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Address-less downcall handles for the verbs data path. {@code ibv_post_send} and friends are {@code static
 * inline} in verbs.h and call through {@code struct ibv_context_ops}; a QP or CQ reads its function pointers
 * from the context once and passes them as the first argument of these handles (verbs.h: the inline
 * ibv_post_send, ibv_post_recv, ibv_post_srq_recv, ibv_poll_cq and ibv_req_notify_cq call {@code context->ops}).
 */
final class DataPath {
    private static final Linker LINKER = Linker.nativeLinker();

    /**
     * int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc). Never blocks and never calls back
     * (on rxe it reads the mmapped queue), hence critical.
     */
    static final MethodHandle POLL_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), Linker.Option.critical(false));

    /** int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only). A syscall on some providers. */
    static final MethodHandle REQ_NOTIFY_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));

    /**
     * int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr). Not critical:
     * rxe and siw ring a doorbell with a write() syscall.
     */
    static final MethodHandle POST_SEND = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

    /** int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr). */
    static final MethodHandle POST_RECV = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

    /** int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr). */
    static final MethodHandle POST_SRQ_RECV = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));

    /** All of the address space, to follow the native next pointers of a work-request chain. */
    static final MemorySegment MEMORY = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private DataPath() {}

    /** Reads a function pointer from the context's ops table. */
    static MemorySegment function(MemorySegment context, int offset) {
        long address = context.reinterpret(NativeLayout.IBV_CONTEXT_SIZE).get(ADDRESS, offset).address();
        if (address == 0) throw new IllegalStateException("provider has no function at ops offset " + offset);
        return MemorySegment.ofAddress(address);
    }
}
