package dev.nvmf.target.rdma.cm;

import dev.nvmf.target.rdma.RdmaMetrics.RejectReason;

/**
 * The NVMe RDMA transport's CM reject status codes, and the 4-byte reject and 32-byte accept private data (NVMe
 * RDMA, "RDMA_CM_REJECT Private Data Format" and "RDMA_CM_ACCEPT Private Data Format").
 */
public final class RdmaCmStatus {
    public static final int INVALID_PRIVATE_DATA_LENGTH = 1;
    public static final int INVALID_RECFMT = 2;
    public static final int INVALID_QID = 3;
    public static final int INVALID_HSQSIZE = 4;
    public static final int INVALID_HRQSIZE = 5;
    public static final int NO_RESOURCES = 6;
    public static final int INVALID_IRD = 7;
    public static final int INVALID_ORD = 8;

    public static final int REJECT_PRIVATE_DATA_LENGTH = 4;
    public static final int ACCEPT_PRIVATE_DATA_LENGTH = 32;

    private RdmaCmStatus() {}

    /** REJECT private data: recfmt u16 (0), sts u16, little-endian. */
    public static byte[] rejectPrivateData(int status) {
        return new byte[] {0, 0, (byte) status, (byte) (status >>> 8)};
    }

    /** ACCEPT private data: recfmt u16 (0), crqsize u16, 28 reserved bytes. */
    public static byte[] acceptPrivateData(int crqsize) {
        byte[] b = new byte[ACCEPT_PRIVATE_DATA_LENGTH];
        b[2] = (byte) crqsize;
        b[3] = (byte) (crqsize >>> 8);
        return b;
    }

    public static int statusOf(RejectReason reason) {
        return switch (reason) {
            case INVALID_PRIVATE_DATA_LENGTH -> INVALID_PRIVATE_DATA_LENGTH;
            case INVALID_RECFMT -> INVALID_RECFMT;
            case INVALID_QID -> INVALID_QID;
            case INVALID_HSQSIZE -> INVALID_HSQSIZE;
            case INVALID_HRQSIZE -> INVALID_HRQSIZE;
            case NO_RESOURCES, UNKNOWN_PORT -> NO_RESOURCES;
            case INVALID_IRD -> INVALID_IRD;
            case INVALID_ORD -> INVALID_ORD;
        };
    }
}
