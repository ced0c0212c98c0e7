package dev.nvmf.verbs;

import java.lang.foreign.MemorySegment;

/** A registered memory region ({@code struct ibv_mr}). close() deregisters it. */
public interface MemoryRegion extends AutoCloseable {
    /** The registered memory. */
    MemorySegment segment();

    long address();

    long length();

    int lkey();

    int rkey();

    @Override
    void close();
}
