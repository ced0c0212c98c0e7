package dev.nvmf.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/** Flyweight over a native {@code struct ibv_recv_wr} (x86_64 rdma-core layout, 32 bytes). */
public final class RecvWorkRequest {
    public static final int SIZE = 32;
    public static final int ALIGNMENT = 8;
    public static final int WR_ID_OFFSET = 0;
    public static final int NEXT_OFFSET = 8;
    public static final int SG_LIST_OFFSET = 16;
    public static final int NUM_SGE_OFFSET = 24;

    private final MemorySegment segment;

    public RecvWorkRequest(MemorySegment segment) {
        if (segment.byteSize() < SIZE) throw new IllegalArgumentException("ibv_recv_wr needs " + SIZE + " bytes");
        this.segment = segment.asSlice(0, SIZE);
    }

    public static RecvWorkRequest allocate(Arena arena) {
        return new RecvWorkRequest(arena.allocate(SIZE, ALIGNMENT));
    }

    public MemorySegment segment() { return segment; }

    public long address() { return segment.address(); }

    public long wrId() { return segment.get(JAVA_LONG_UNALIGNED, WR_ID_OFFSET); }

    public RecvWorkRequest wrId(long v) { segment.set(JAVA_LONG_UNALIGNED, WR_ID_OFFSET, v); return this; }

    public long nextAddress() { return segment.get(JAVA_LONG_UNALIGNED, NEXT_OFFSET); }

    public RecvWorkRequest next(RecvWorkRequest next) {
        segment.set(JAVA_LONG_UNALIGNED, NEXT_OFFSET, next == null ? 0L : next.address());
        return this;
    }

    public long sgListAddress() { return segment.get(JAVA_LONG_UNALIGNED, SG_LIST_OFFSET); }

    public int numSge() { return segment.get(JAVA_INT_UNALIGNED, NUM_SGE_OFFSET); }

    public RecvWorkRequest sgList(ScatterGatherEntry first, int count) {
        segment.set(JAVA_LONG_UNALIGNED, SG_LIST_OFFSET, first == null ? 0L : first.address());
        segment.set(JAVA_INT_UNALIGNED, NUM_SGE_OFFSET, count);
        return this;
    }
}
