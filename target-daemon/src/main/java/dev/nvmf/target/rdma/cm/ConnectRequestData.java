package dev.nvmf.target.rdma.cm;

import dev.nvmf.target.rdma.RdmaMetrics.RejectReason;
import dev.nvmf.target.rdma.RdmaPortConfig;

/**
 * The NVMe RDMA CM REQ private data (32 bytes, little-endian): recfmt u16 at 0, qid u16 at 2, hrqsize u16 at 4,
 * hsqsize u16 at 6 (0's based), cntlid u16 at 8 (NVMe RDMA, "RDMA_CM_REQUEST Private Data Format").
 */
public record ConnectRequestData(int recfmt, int qid, int hrqsize, int hsqsize, int cntlid) {
    public static final int LENGTH = 32;
    public static final int RECFMT_OFFSET = 0;
    public static final int QID_OFFSET = 2;
    public static final int HRQSIZE_OFFSET = 4;
    public static final int HSQSIZE_OFFSET = 6;
    public static final int CNTLID_OFFSET = 8;

    /** Parses the private data, or returns null when it is shorter than 32 bytes (reject status 1). */
    public static ConnectRequestData parse(byte[] privateData) {
        if (privateData == null || privateData.length < LENGTH) return null;
        return new ConnectRequestData(u16(privateData, RECFMT_OFFSET), u16(privateData, QID_OFFSET),
                u16(privateData, HRQSIZE_OFFSET), u16(privateData, HSQSIZE_OFFSET), u16(privateData, CNTLID_OFFSET));
    }

    private static int u16(byte[] b, int off) {
        return (b[off] & 0xFF) | (b[off + 1] & 0xFF) << 8;
    }

    /** Encodes (used by tests and the scripted initiator side). */
    public byte[] encode() {
        byte[] b = new byte[LENGTH];
        put(b, RECFMT_OFFSET, recfmt);
        put(b, QID_OFFSET, qid);
        put(b, HRQSIZE_OFFSET, hrqsize);
        put(b, HSQSIZE_OFFSET, hsqsize);
        put(b, CNTLID_OFFSET, cntlid);
        return b;
    }

    private static void put(byte[] b, int off, int v) {
        b[off] = (byte) v;
        b[off + 1] = (byte) (v >>> 8);
    }

    /** The submission queue size the host asked for, 1's based. */
    public int queueDepth() {
        return hsqsize + 1;
    }

    public boolean adminQueue() {
        return qid == 0;
    }

    /**
     * Checks the request: the record format first, as the kernel target does (kernel rdma.c,
     * nvmet_rdma_parse_cm_connect_req), then the queue id and the sizes against the port's limits. Returns null
     * when it is acceptable. The CM pads private data with zeros on IB/RoCE (rdma_connect(3)), so a missing
     * payload shows up as zeros: hrqsize 0 and an I/O queue's hsqsize 0 are refused rather than accepted.
     */
    public RejectReason validate(RdmaPortConfig port, int maxIoQueues) {
        if (recfmt != 0) return RejectReason.INVALID_RECFMT;
        if (qid > maxIoQueues) return RejectReason.INVALID_QID;
        int maxDepth = adminQueue() ? port.maxAdminQueueDepth() : port.maxQueueDepth();
        // hsqsize is 0's based: an I/O queue of one entry is useless (and what an all-zero payload says);
        // the admin queue needs at least 2 entries too (Connect + an AER would otherwise starve the host).
        if (hsqsize < 1 || queueDepth() > maxDepth) return RejectReason.INVALID_HSQSIZE;
        if (hrqsize == 0 || hrqsize > maxDepth) return RejectReason.INVALID_HRQSIZE;
        return null;
    }
}
