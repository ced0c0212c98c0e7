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
 * @param maxSrq             max_srq: shared receive queues the device supports (0: none)
 * @param maxSrqWr           max_srq_wr: receive work requests one SRQ may hold
 * @param maxSrqSge          max_srq_sge: scatter/gather entries per SRQ receive
 */
public record DeviceAttributes(
        int maxQp, int maxQpWr, int maxSge, int maxCq, int maxCqe, int maxMr, long maxMrSize,
        int maxQpRdAtom, int maxQpInitRdAtom, long deviceCapFlags, int physPortCnt, int maxSrq, int maxSrqWr,
        int maxSrqSge) {

    /** Attributes of a device without shared receive queues (max_srq 0). */
    public DeviceAttributes(int maxQp, int maxQpWr, int maxSge, int maxCq, int maxCqe, int maxMr, long maxMrSize,
                            int maxQpRdAtom, int maxQpInitRdAtom, long deviceCapFlags, int physPortCnt) {
        this(maxQp, maxQpWr, maxSge, maxCq, maxCqe, maxMr, maxMrSize, maxQpRdAtom, maxQpInitRdAtom, deviceCapFlags,
                physPortCnt, 0, 0, 0);
    }

    /** IBV_DEVICE_MEM_MGT_EXTENSIONS: fast registration, local and remote invalidation (SEND_WITH_INV). */
    public static final long IBV_DEVICE_MEM_MGT_EXTENSIONS = 1L << 21;

    /** IBV_DEVICE_MEM_WINDOW: memory windows (ibv_alloc_mw). */
    public static final long IBV_DEVICE_MEM_WINDOW = 1L << 17;
    /** IBV_DEVICE_MEM_WINDOW_TYPE_2A: type-2 windows associated with a QP number. */
    public static final long IBV_DEVICE_MEM_WINDOW_TYPE_2A = 1L << 23;
    /** IBV_DEVICE_MEM_WINDOW_TYPE_2B: type-2 windows associated with a QP number and a PD (rxe, mlx5). */
    public static final long IBV_DEVICE_MEM_WINDOW_TYPE_2B = 1L << 24;

    /**
     * Whether the device reports type-2 memory windows (2A or 2B): the only keys user space can hand a peer that
     * the peer may invalidate remotely (SEND_WITH_INV).
     */
    public boolean memoryWindowsType2() {
        return (deviceCapFlags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0;
    }

    /** The same attributes with {@code flags} cleared from device_cap_flags (a device that lacks them). */
    public DeviceAttributes withoutCapabilities(long flags) {
        return new DeviceAttributes(maxQp, maxQpWr, maxSge, maxCq, maxCqe, maxMr, maxMrSize, maxQpRdAtom,
                maxQpInitRdAtom, deviceCapFlags & ~flags, physPortCnt, maxSrq, maxSrqWr, maxSrqSge);
    }

    /** The same attributes with other RDMA READ depths (max_qp_rd_atom, max_qp_init_rd_atom). */
    public DeviceAttributes withReadDepths(int responder, int initiator) {
        return new DeviceAttributes(maxQp, maxQpWr, maxSge, maxCq, maxCqe, maxMr, maxMrSize, responder, initiator,
                deviceCapFlags, physPortCnt, maxSrq, maxSrqWr, maxSrqSge);
    }

    /** The same attributes with other SRQ limits (max_srq, max_srq_wr, max_srq_sge; 0 = no SRQs). */
    public DeviceAttributes withSharedReceiveQueues(int srqs, int wr, int sge) {
        return new DeviceAttributes(maxQp, maxQpWr, maxSge, maxCq, maxCqe, maxMr, maxMrSize, maxQpRdAtom,
                maxQpInitRdAtom, deviceCapFlags, physPortCnt, srqs, wr, sge);
    }

    /** Whether the device supports memory-management extensions (needed to send SEND_WITH_INVALIDATE). */
    public boolean memoryManagementExtensions() {
        return (deviceCapFlags & IBV_DEVICE_MEM_MGT_EXTENSIONS) != 0;
    }
}
