package dev.nvmf.verbs;

import java.lang.foreign.MemorySegment;

/** A protection domain ({@code struct ibv_pd}). */
public interface ProtectionDomain extends AutoCloseable {
    Device device();

    /**
     * Registers native memory (ibv_reg_mr). Register large, page-aligned, long-lived slabs once and slice them;
     * never register on the I/O path. The segment must stay alive as long as the region.
     *
     * @param access bitwise OR of {@link Access} flags
     */
    MemoryRegion register(MemorySegment segment, int access);

    @Override
    void close();
}
