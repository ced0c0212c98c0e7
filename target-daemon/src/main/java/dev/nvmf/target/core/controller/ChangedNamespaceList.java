package dev.nvmf.target.core.controller;

import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * The Changed Namespace List log of one controller (NVMe Base 2.0, 5.16.1.5): NSIDs whose attributes changed since
 * the host last read the page, at most 1024, or 0xFFFFFFFF alone once more changed. Reading clears it.
 */
public final class ChangedNamespaceList {
    private final int[] nsids = new int[LogPages.CHANGED_NAMESPACE_LIST_MAX];
    private int size;
    private boolean overflow;

    public synchronized void add(int nsid) {
        if (overflow) {
            return;
        }
        for (int i = 0; i < size; i++) {
            if (nsids[i] == nsid) {
                return;
            }
        }
        if (size == nsids.length) {
            overflow = true;
            size = 0;
            return;
        }
        nsids[size++] = nsid;
    }

    /** Writes the page (4096 bytes, zero after the last entry) and clears the list. */
    public synchronized void writeAndClear(MemorySegment page) {
        if (overflow) {
            Le.u32(page, 0, LogPages.CHANGED_NAMESPACE_OVERFLOW);
        } else {
            int[] sorted = Arrays.copyOf(nsids, size);
            Arrays.sort(sorted);
            for (int i = 0; i < sorted.length; i++) {
                Le.u32(page, i * 4L, sorted[i]);
            }
        }
        size = 0;
        overflow = false;
    }

    public synchronized int size() {
        return overflow ? 1 : size;
    }
}
