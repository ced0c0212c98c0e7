package dev.nvmf.target.core.subsystem;

import java.util.BitSet;

/**
 * Hands out controller ids in a configured range (kernel: the subsystem's {@code ida_alloc_range} between
 * cntlid_min and cntlid_max). Not thread-safe: callers hold the model lock.
 */
public final class CntlidAllocator {
    private final int min;
    private final int max;
    private final BitSet used = new BitSet();
    private int next;

    public CntlidAllocator(int min, int max) {
        this.min = min;
        this.max = max;
        this.next = min;
    }

    /** A free id, preferring ids not used recently (so a stale host does not hit a new controller); -1 if none. */
    public int allocate() {
        int span = max - min + 1;
        for (int i = 0; i < span; i++) {
            int id = next;
            next = next == max ? min : next + 1;
            if (!used.get(id)) {
                used.set(id);
                return id;
            }
        }
        return -1;
    }

    public void release(int id) {
        used.clear(id);
    }

    public int inUse() {
        return used.cardinality();
    }
}
