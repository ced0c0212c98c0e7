package dev.nvmf.target.nvme;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over a 16-byte completion queue entry (NVMe Base 2.0, 4.6; the fabrics response capsule, NVMe-oF 1.1,
 * 2.2). The status field at byte 14 holds the phase tag in bit 0 (always 0 on fabrics), SC in bits 8:1, SCT in
 * bits 11:9, CRD 13:12, More bit 14, DNR bit 15. {@link Status} values are that field shifted right by one.
 */
public final class CompletionQueueEntry {
    public static final int SIZE = 16;

    public static final int DW0 = 0;
    public static final int DW1 = 4;
    public static final int SQHD = 8;
    public static final int SQID = 10;
    public static final int CID = 12;
    public static final int STATUS = 14;

    private MemorySegment segment = MemorySegment.NULL;

    public CompletionQueueEntry wrap(MemorySegment cqe) {
        this.segment = cqe;
        return this;
    }

    public MemorySegment segment() { return segment; }

    public int dw0() { return Le.u32(segment, DW0); }
    public CompletionQueueEntry dw0(int v) { Le.u32(segment, DW0, v); return this; }

    public int dw1() { return Le.u32(segment, DW1); }
    public CompletionQueueEntry dw1(int v) { Le.u32(segment, DW1, v); return this; }

    /** DW0 and DW1 as one 64-bit result (Property Get of an 8-byte property). */
    public long result64() { return Le.u64(segment, DW0); }

    public int sqhd() { return Le.u16(segment, SQHD); }
    public CompletionQueueEntry sqhd(int v) { Le.u16(segment, SQHD, v); return this; }

    public int sqid() { return Le.u16(segment, SQID); }
    public CompletionQueueEntry sqid(int v) { Le.u16(segment, SQID, v); return this; }

    public int cid() { return Le.u16(segment, CID); }
    public CompletionQueueEntry cid(int v) { Le.u16(segment, CID, v); return this; }

    /** The raw 16-bit status field (with the phase bit). */
    public int statusField() { return Le.u16(segment, STATUS); }

    /** The status in {@link Status} form (phase bit dropped): SC bits 7:0, SCT 10:8, More 13, DNR 14. */
    public int status() { return statusField() >>> 1; }

    /** Sets the status from a {@link Status} value; phase tag 0. */
    public CompletionQueueEntry status(int status) { Le.u16(segment, STATUS, (status << 1) & 0xFFFE); return this; }

    /** Writes every field (the whole 16 bytes). */
    public CompletionQueueEntry set(int dw0, int dw1, int sqhd, int sqid, int cid, int status) {
        Le.u32(segment, DW0, dw0);
        Le.u32(segment, DW1, dw1);
        Le.u16(segment, SQHD, sqhd);
        Le.u16(segment, SQID, sqid);
        Le.u16(segment, CID, cid);
        Le.u16(segment, STATUS, (status << 1) & 0xFFFE);
        return this;
    }
}
