package dev.nvmf.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * Flyweight over one or more contiguous native {@code struct ibv_sge} (16 bytes each). {@link #at(int)}
 * addresses the i-th entry of an array.
 */
public final class ScatterGatherEntry {
    public static final int SIZE = 16;
    public static final int ALIGNMENT = 8;
    public static final int ADDR_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    public static final int LKEY_OFFSET = 12;

    private final MemorySegment segment;

    public ScatterGatherEntry(MemorySegment segment) {
        if (segment.byteSize() < SIZE) throw new IllegalArgumentException("ibv_sge needs " + SIZE + " bytes");
        this.segment = segment;
    }

    /** Allocates an array of {@code count} entries; this flyweight views entry 0. */
    public static ScatterGatherEntry allocate(Arena arena, int count) {
        return new ScatterGatherEntry(arena.allocate((long) SIZE * count, ALIGNMENT));
    }

    /** A flyweight on entry {@code index} of the array this one starts (control path: allocates). */
    public ScatterGatherEntry at(int index) {
        return new ScatterGatherEntry(segment.asSlice((long) index * SIZE));
    }

    public MemorySegment segment() { return segment; }

    public long address() { return segment.address(); }

    public long addr() { return segment.get(JAVA_LONG_UNALIGNED, ADDR_OFFSET); }

    public int length() { return segment.get(JAVA_INT_UNALIGNED, LENGTH_OFFSET); }

    public int lkey() { return segment.get(JAVA_INT_UNALIGNED, LKEY_OFFSET); }

    public ScatterGatherEntry set(long addr, int length, int lkey) {
        segment.set(JAVA_LONG_UNALIGNED, ADDR_OFFSET, addr);
        segment.set(JAVA_INT_UNALIGNED, LENGTH_OFFSET, length);
        segment.set(JAVA_INT_UNALIGNED, LKEY_OFFSET, lkey);
        return this;
    }

    public ScatterGatherEntry length(int length) {
        segment.set(JAVA_INT_UNALIGNED, LENGTH_OFFSET, length);
        return this;
    }
}
