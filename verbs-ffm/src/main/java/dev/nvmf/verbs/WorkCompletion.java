package dev.nvmf.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * Flyweight over a native array of {@code struct ibv_wc} (x86_64 rdma-core layout, 48 bytes each), the buffer
 * {@link CompletionQueue#poll} fills. Accessors take the entry index.
 */
public final class WorkCompletion {
    public static final int SIZE = 48;
    public static final int ALIGNMENT = 8;
    public static final int WR_ID_OFFSET = 0;
    public static final int STATUS_OFFSET = 8;
    public static final int OPCODE_OFFSET = 12;
    public static final int VENDOR_ERR_OFFSET = 16;
    public static final int BYTE_LEN_OFFSET = 20;
    /** Union of imm_data and invalidated_rkey. */
    public static final int INVALIDATED_RKEY_OFFSET = 24;
    public static final int QP_NUM_OFFSET = 28;
    public static final int SRC_QP_OFFSET = 32;
    public static final int WC_FLAGS_OFFSET = 36;

    /** IBV_WC_WITH_INV: the received SEND invalidated {@link #invalidatedRkey(int)}. */
    public static final int WC_WITH_INV = 1 << 3;
    /** IBV_WC_WITH_IMM. */
    public static final int WC_WITH_IMM = 1 << 1;

    private final MemorySegment segment;
    private final int capacity;

    public WorkCompletion(MemorySegment segment) {
        this.segment = segment;
        this.capacity = (int) (segment.byteSize() / SIZE);
    }

    public static WorkCompletion allocate(Arena arena, int capacity) {
        return new WorkCompletion(arena.allocate((long) SIZE * capacity, ALIGNMENT));
    }

    public MemorySegment segment() { return segment; }

    public long address() { return segment.address(); }

    /** Number of entries the array holds. */
    public int capacity() { return capacity; }

    private static long at(int i, int field) { return (long) i * SIZE + field; }

    public long wrId(int i) { return segment.get(JAVA_LONG_UNALIGNED, at(i, WR_ID_OFFSET)); }

    /** @return a {@link WcStatus} value */
    public int status(int i) { return segment.get(JAVA_INT_UNALIGNED, at(i, STATUS_OFFSET)); }

    /** @return a {@link WcOpcode} value */
    public int opcode(int i) { return segment.get(JAVA_INT_UNALIGNED, at(i, OPCODE_OFFSET)); }

    public int vendorErr(int i) { return segment.get(JAVA_INT_UNALIGNED, at(i, VENDOR_ERR_OFFSET)); }

    public int byteLen(int i) { return segment.get(JAVA_INT_UNALIGNED, at(i, BYTE_LEN_OFFSET)); }

    public int invalidatedRkey(int i) { return segment.get(JAVA_INT_UNALIGNED, at(i, INVALIDATED_RKEY_OFFSET)); }

    public int qpNum(int i) { return segment.get(JAVA_INT_UNALIGNED, at(i, QP_NUM_OFFSET)); }

    public int wcFlags(int i) { return segment.get(JAVA_INT_UNALIGNED, at(i, WC_FLAGS_OFFSET)); }

    /** Writes entry {@code i}; used by providers that produce completions in Java (the soft provider). */
    public void set(int i, long wrId, int status, int opcode, int byteLen, int invalidatedRkey, int qpNum,
                    int wcFlags) {
        segment.set(JAVA_LONG_UNALIGNED, at(i, WR_ID_OFFSET), wrId);
        segment.set(JAVA_INT_UNALIGNED, at(i, STATUS_OFFSET), status);
        segment.set(JAVA_INT_UNALIGNED, at(i, OPCODE_OFFSET), opcode);
        segment.set(JAVA_INT_UNALIGNED, at(i, VENDOR_ERR_OFFSET), 0);
        segment.set(JAVA_INT_UNALIGNED, at(i, BYTE_LEN_OFFSET), byteLen);
        segment.set(JAVA_INT_UNALIGNED, at(i, INVALIDATED_RKEY_OFFSET), invalidatedRkey);
        segment.set(JAVA_INT_UNALIGNED, at(i, QP_NUM_OFFSET), qpNum);
        segment.set(JAVA_INT_UNALIGNED, at(i, SRC_QP_OFFSET), 0);
        segment.set(JAVA_INT_UNALIGNED, at(i, WC_FLAGS_OFFSET), wcFlags);
    }
}
