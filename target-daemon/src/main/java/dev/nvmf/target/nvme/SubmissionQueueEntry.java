package dev.nvmf.target.nvme;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over a 64-byte submission queue entry (NVMe Base 2.0, 4.2 "Submission Queue Entry"; on fabrics the
 * first 64 bytes of a command capsule, NVMe-oF 1.1, 2.1). Reuse one instance: {@link #wrap} allocates nothing.
 */
public final class SubmissionQueueEntry {
    public static final int SIZE = 64;

    public static final int OPCODE = 0;
    /** FUSE bits 1:0, PSDT bits 7:6 (01b = SGL, required on fabrics). */
    public static final int FLAGS = 1;
    public static final int CID = 2;
    public static final int NSID = 4;
    public static final int CDW2 = 8;
    public static final int CDW3 = 12;
    public static final int MPTR = 16;
    /** Data Pointer: SGL1 when PSDT = 01b. */
    public static final int SGL1 = 24;
    public static final int CDW10 = 40;
    public static final int CDW11 = 44;
    public static final int CDW12 = 48;
    public static final int CDW13 = 52;
    public static final int CDW14 = 56;
    public static final int CDW15 = 60;

    /** PSDT value for "SGLs used, MPTR is an address" (NVMe Base 2.0, figure 92). */
    public static final int PSDT_SGL_MPTR_ADDRESS = 1;
    public static final int FLAGS_PSDT_SHIFT = 6;
    public static final int FLAGS_FUSE_MASK = 0x3;

    private MemorySegment segment = MemorySegment.NULL;

    public SubmissionQueueEntry wrap(MemorySegment sqe) {
        this.segment = sqe;
        return this;
    }

    public MemorySegment segment() { return segment; }

    public int opcode() { return Le.u8(segment, OPCODE); }
    public SubmissionQueueEntry opcode(int v) { Le.u8(segment, OPCODE, v); return this; }

    public int flags() { return Le.u8(segment, FLAGS); }
    public SubmissionQueueEntry flags(int v) { Le.u8(segment, FLAGS, v); return this; }

    public int psdt() { return (flags() >>> FLAGS_PSDT_SHIFT) & 0x3; }
    public int fuse() { return flags() & FLAGS_FUSE_MASK; }

    public int cid() { return Le.u16(segment, CID); }
    public SubmissionQueueEntry cid(int v) { Le.u16(segment, CID, v); return this; }

    public int nsid() { return Le.u32(segment, NSID); }
    public SubmissionQueueEntry nsid(int v) { Le.u32(segment, NSID, v); return this; }

    /** Command dword n (0..15). */
    public int cdw(int n) { return Le.u32(segment, n * 4L); }
    public SubmissionQueueEntry cdw(int n, int v) { Le.u32(segment, n * 4L, v); return this; }

    public int cdw10() { return Le.u32(segment, CDW10); }
    public int cdw11() { return Le.u32(segment, CDW11); }
    public int cdw12() { return Le.u32(segment, CDW12); }
    public int cdw13() { return Le.u32(segment, CDW13); }
    public int cdw14() { return Le.u32(segment, CDW14); }
    public int cdw15() { return Le.u32(segment, CDW15); }

    /** SLBA of an NVM read/write/compare/write-zeroes (CDW10-11). */
    public long slba() { return Le.u64(segment, CDW10); }
    /** NLB, 0's based, of an NVM read/write (CDW12 bits 15:0). */
    public int nlb() { return Le.u16(segment, CDW12); }

    /** Zeroes the whole entry (for building commands in tests and hosts). */
    public SubmissionQueueEntry clear() {
        segment.asSlice(0, SIZE).fill((byte) 0);
        return this;
    }
}
