package dev.nvmf.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * Flyweight over a native {@code struct ibv_send_wr} (x86_64 rdma-core layout, 128 bytes; the offsets are
 * checked against the C headers by a test). Build once, patch fields per I/O, chain with {@link #next}.
 */
public final class SendWorkRequest {
    public static final int SIZE = 128;
    public static final int ALIGNMENT = 8;
    public static final int WR_ID_OFFSET = 0;
    public static final int NEXT_OFFSET = 8;
    public static final int SG_LIST_OFFSET = 16;
    public static final int NUM_SGE_OFFSET = 24;
    public static final int OPCODE_OFFSET = 28;
    public static final int SEND_FLAGS_OFFSET = 32;
    /** Union of imm_data (network order) and invalidate_rkey. */
    public static final int INVALIDATE_RKEY_OFFSET = 36;
    public static final int REMOTE_ADDR_OFFSET = 40;
    public static final int RKEY_OFFSET = 48;

    private final MemorySegment segment;

    /** Wraps an existing native structure of at least {@link #SIZE} bytes. */
    public SendWorkRequest(MemorySegment segment) {
        if (segment.byteSize() < SIZE) throw new IllegalArgumentException("ibv_send_wr needs " + SIZE + " bytes");
        this.segment = segment.asSlice(0, SIZE);
    }

    public static SendWorkRequest allocate(Arena arena) {
        return new SendWorkRequest(arena.allocate(SIZE, ALIGNMENT));
    }

    public MemorySegment segment() { return segment; }

    public long address() { return segment.address(); }

    public long wrId() { return segment.get(JAVA_LONG_UNALIGNED, WR_ID_OFFSET); }

    public SendWorkRequest wrId(long v) { segment.set(JAVA_LONG_UNALIGNED, WR_ID_OFFSET, v); return this; }

    public long nextAddress() { return segment.get(JAVA_LONG_UNALIGNED, NEXT_OFFSET); }

    /** Chains {@code next} after this request; null ends the chain. */
    public SendWorkRequest next(SendWorkRequest next) {
        segment.set(JAVA_LONG_UNALIGNED, NEXT_OFFSET, next == null ? 0L : next.address());
        return this;
    }

    public long sgListAddress() { return segment.get(JAVA_LONG_UNALIGNED, SG_LIST_OFFSET); }

    public int numSge() { return segment.get(JAVA_INT_UNALIGNED, NUM_SGE_OFFSET); }

    /** Points the request at {@code count} scatter/gather entries starting at {@code first}. */
    public SendWorkRequest sgList(ScatterGatherEntry first, int count) {
        segment.set(JAVA_LONG_UNALIGNED, SG_LIST_OFFSET, first == null ? 0L : first.address());
        segment.set(JAVA_INT_UNALIGNED, NUM_SGE_OFFSET, count);
        return this;
    }

    public int opcode() { return segment.get(JAVA_INT_UNALIGNED, OPCODE_OFFSET); }

    /** @param v one of {@link WrOpcode}'s constants */
    public SendWorkRequest opcode(int v) { segment.set(JAVA_INT_UNALIGNED, OPCODE_OFFSET, v); return this; }

    public int sendFlags() { return segment.get(JAVA_INT_UNALIGNED, SEND_FLAGS_OFFSET); }

    /** @param v bitwise OR of {@link SendFlags} */
    public SendWorkRequest sendFlags(int v) { segment.set(JAVA_INT_UNALIGNED, SEND_FLAGS_OFFSET, v); return this; }

    public int invalidateRkey() { return segment.get(JAVA_INT_UNALIGNED, INVALIDATE_RKEY_OFFSET); }

    public SendWorkRequest invalidateRkey(int v) {
        segment.set(JAVA_INT_UNALIGNED, INVALIDATE_RKEY_OFFSET, v);
        return this;
    }

    public long remoteAddress() { return segment.get(JAVA_LONG_UNALIGNED, REMOTE_ADDR_OFFSET); }

    public int rkey() { return segment.get(JAVA_INT_UNALIGNED, RKEY_OFFSET); }

    /** Sets wr.rdma.remote_addr and wr.rdma.rkey (RDMA READ and WRITE). */
    public SendWorkRequest remote(long remoteAddress, int rkey) {
        segment.set(JAVA_LONG_UNALIGNED, REMOTE_ADDR_OFFSET, remoteAddress);
        segment.set(JAVA_INT_UNALIGNED, RKEY_OFFSET, rkey);
        return this;
    }
}
