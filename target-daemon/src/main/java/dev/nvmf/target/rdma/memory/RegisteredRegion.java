package dev.nvmf.target.rdma.memory;

import java.lang.foreign.MemorySegment;

/**
 * A slice of a registered slab: native memory and the lkey that covers it. Handed out by {@link SlabAllocator}
 * at connect time (or pool creation) and returned only after the queue that used it is drained.
 */
public record RegisteredRegion(MemorySegment segment, int lkey) {
    public long address() { return segment.address(); }

    public long length() { return segment.byteSize(); }
}
