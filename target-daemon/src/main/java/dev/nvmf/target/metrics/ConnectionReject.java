package dev.nvmf.target.metrics;

import java.util.Locale;

/**
 * Why the transport refused an RDMA CM connect request before any NVMe command (NVMe over Fabrics RDMA
 * transport binding: the RDMA_CM reject private data status codes, plus local causes).
 */
public enum ConnectionReject {
    /** Private data missing, too short, or of an unknown record format (NVME_RDMA_CM_INVALID_LEN / _RECFMT). */
    INVALID_PRIVATE_DATA,
    /** Queue id invalid (NVME_RDMA_CM_INVALID_QID). */
    INVALID_QUEUE_ID,
    /** Host receive/send queue size out of range (NVME_RDMA_CM_INVALID_HSQSIZE / _HRQSIZE). */
    INVALID_QUEUE_SIZE,
    /** Out of resources: QP, CQ space or memory (NVME_RDMA_CM_NO_RSC). */
    NO_RESOURCES,
    /** Requested IRD/ORD beyond the device limits (NVME_RDMA_CM_INVALID_IRD / _ORD). */
    INVALID_IRD_ORD,
    /** The daemon is stopping. */
    SHUTTING_DOWN,
    OTHER;

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
