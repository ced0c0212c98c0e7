package dev.nvmf.target.rdma.queue;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * Reads SGL1 of a command capsule (nvmf-rdma.md section 3) into a request context. Pure; allocation-free.
 * Status values are in {@link dev.nvmf.target.core.NvmeRequest#transportStatus()} format (SC bits 0..7,
 * SCT bits 8..10, DNR bit 14).
 */
public final class CommandSgl {
    public static final int OPCODE_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int FCTYPE_OFFSET = 4;
    public static final int SGL1_OFFSET = 24;
    public static final int SGL_ADDRESS = 0;
    public static final int SGL_LENGTH = 8;
    public static final int SGL_KEY = 11;
    public static final int SGL_TYPE = 15;

    public static final int TYPE_DATA_BLOCK = 0x0;
    public static final int TYPE_LAST_SEGMENT = 0x3;
    public static final int TYPE_KEYED_DATA_BLOCK = 0x4;
    public static final int SUBTYPE_ADDRESS = 0x0;
    public static final int SUBTYPE_OFFSET = 0x1;
    public static final int SUBTYPE_INVALIDATE_KEY = 0xF;

    public static final int OPCODE_FABRICS = 0x7F;
    public static final int PSDT_SGL_MASK = 0xC0;

    public static final int DNR = 1 << 14;
    /** Generic status: Invalid Field in Command. */
    public static final int SC_INVALID_FIELD = 0x02 | DNR;
    /** Generic status: Data SGL Length Invalid. */
    public static final int SC_SGL_LENGTH_INVALID = 0x0F | DNR;
    /** Generic status: SGL Descriptor Type Invalid. */
    public static final int SC_SGL_DESCRIPTOR_TYPE_INVALID = 0x11 | DNR;
    /** Generic status: Invalid SGL Offset (in-capsule offset beyond the data that arrived). */
    public static final int SC_SGL_OFFSET_INVALID = 0x16 | DNR;

    private CommandSgl() {}

    /**
     * Whether the command moves data host-to-controller, from its opcode (bit 0; for Fabrics commands bit 0 of
     * FCTYPE), as the kernel's nvme_is_write does. Only such commands may carry in-capsule data.
     */
    public static boolean isWrite(MemorySegment sqe) {
        int opcode = sqe.get(JAVA_BYTE, OPCODE_OFFSET) & 0xFF;
        if (opcode == OPCODE_FABRICS) return (sqe.get(JAVA_BYTE, FCTYPE_OFFSET) & 1) != 0;
        return (opcode & 1) != 0;
    }

    /**
     * Parses SGL1 of {@code r.command} received with {@code inCapsuleBytes} bytes after the SQE.
     *
     * @return 0, or the status to complete the command with
     */
    static int parse(RdmaRequest r, int inCapsuleBytes, int maxIoSize) {
        r.clearSgl();
        MemorySegment sqe = r.command;
        int type = sqe.get(JAVA_BYTE, SGL1_OFFSET + SGL_TYPE) & 0xFF;
        int descriptorType = type >>> 4;
        int subtype = type & 0xF;
        if (descriptorType == TYPE_KEYED_DATA_BLOCK) {
            if (subtype != SUBTYPE_ADDRESS && subtype != SUBTYPE_INVALIDATE_KEY) return SC_SGL_DESCRIPTOR_TYPE_INVALID;
            long addr = sqe.get(JAVA_LONG_UNALIGNED, SGL1_OFFSET + SGL_ADDRESS);
            int length = sqe.get(JAVA_INT_UNALIGNED, SGL1_OFFSET + SGL_LENGTH) & 0xFFFFFF;
            int key = sqe.get(JAVA_INT_UNALIGNED, SGL1_OFFSET + SGL_KEY);
            r.keyed = true;
            r.remoteAddress = addr;
            r.remoteKey = key;
            r.sglLength = length;
            // The host asked for the key back in SEND_WITH_INVALIDATE (Linux default 0x4F). Honour it even if the
            // command later fails: the host then need not invalidate locally.
            r.invalidate = subtype == SUBTYPE_INVALIDATE_KEY && length != 0;
            if (length > maxIoSize) return SC_SGL_LENGTH_INVALID;
            return 0;
        }
        if (descriptorType == TYPE_DATA_BLOCK && subtype == SUBTYPE_OFFSET) {
            long offset = sqe.get(JAVA_LONG_UNALIGNED, SGL1_OFFSET + SGL_ADDRESS);
            int length = sqe.get(JAVA_INT_UNALIGNED, SGL1_OFFSET + SGL_LENGTH);
            if (!isWrite(sqe)) return SC_INVALID_FIELD; // in-capsule data only flows host to controller
            if (offset < 0 || offset > inCapsuleBytes) return SC_SGL_OFFSET_INVALID;
            if (length < 0 || offset + (long) length > inCapsuleBytes) return SC_SGL_LENGTH_INVALID;
            r.inCapsule = true;
            r.sglOffset = (int) offset;
            r.sglLength = length;
            return 0;
        }
        return SC_SGL_DESCRIPTOR_TYPE_INVALID;
    }
}
