package dev.nvmf.verbs;

/**
 * The subset of {@code struct ibv_device_attr} the target sizes itself from.
 *
 * @param maxQp              max_qp
 * @param maxQpWr            max_qp_wr: max outstanding work requests on any send or receive queue
 * @param maxSge             max_sge
 * @param maxCq              max_cq
 * @param maxCqe             max_cqe
 * @param maxMr              max_mr
 * @param maxMrSize          max_mr_size
 * @param maxQpRdAtom        max_qp_rd_atom: RDMA READs a QP can have outstanding as responder
 * @param maxQpInitRdAtom    max_qp_init_rd_atom: RDMA READs a QP can have outstanding as initiator
 * @param deviceCapFlags     device_cap_flags (IBV_DEVICE_* bits)
 * @param physPortCnt        phys_port_cnt
 */
public record DeviceAttributes(
        int maxQp, int maxQpWr, int maxSge, int maxCq, int maxCqe, int maxMr, long maxMrSize,
        int maxQpRdAtom, int maxQpInitRdAtom, long deviceCapFlags, int physPortCnt) {

    /** IBV_DEVICE_MEM_MGT_EXTENSIONS: fast registration, local and remote invalidation (SEND_WITH_INV). */
    public static final long IBV_DEVICE_MEM_MGT_EXTENSIONS = 1L << 21;

    /** Whether the device supports memory-management extensions (needed to send SEND_WITH_INVALIDATE). */
    public boolean memoryManagementExtensions() {
        return (deviceCapFlags & IBV_DEVICE_MEM_MGT_EXTENSIONS) != 0;
    }
}
