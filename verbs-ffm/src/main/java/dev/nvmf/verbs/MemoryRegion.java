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

    /**
     * What a BIND_MW work request names as the window's region ({@code bind_info.mr}): the native
     * {@code struct ibv_mr *} on the ffm provider, an opaque id on the soft provider. See
     * {@link SendWorkRequest#bindMemoryWindow}.
     */
    long handle();

    @Override
    void close();
}
