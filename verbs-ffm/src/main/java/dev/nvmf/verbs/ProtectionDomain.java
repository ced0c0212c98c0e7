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

    /**
     * Allocates a memory window of type 2 (ibv_alloc_mw, IBV_MW_TYPE_2). It reaches nothing until a BIND_MW
     * posted on a QP of this PD binds it to part of a region registered with {@link Access#MW_BIND}; the peer can
     * then invalidate its rkey with SEND_WITH_INV, which a plain region's rkey cannot be (only type-2 windows and
     * kernel fast-registration regions can). Control path: never on the I/O path.
     *
     * @throws VerbsException EOPNOTSUPP when the device has no memory windows
     */
    MemoryWindow allocateMemoryWindow();

    /**
     * Creates a shared receive queue of at least {@code maxWr} receives of up to {@code maxSge} entries each
     * (ibv_create_srq), for QPs of this PD ({@link QpInitAttributes#srq()}). Control path.
     *
     * @throws VerbsException EINVAL beyond the device's max_srq_wr / max_srq_sge, ENOSYS or EOPNOTSUPP when the
     *                        device has no SRQs (max_srq 0)
     */
    SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge);

    @Override
    void close();
}
