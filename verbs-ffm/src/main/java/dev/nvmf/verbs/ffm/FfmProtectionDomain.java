package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.MemoryWindow;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.SharedReceiveQueue;

import java.lang.foreign.MemorySegment;

/** An ibv_pd. */
final class FfmProtectionDomain implements ProtectionDomain {
    private final FfmDevice device;
    private final MemorySegment pd;
    private boolean closed;

    FfmProtectionDomain(FfmDevice device, MemorySegment pd) {
        this.device = device;
        this.pd = pd;
    }

    MemorySegment pd() { return pd; }

    @Override
    public Device device() { return device; }

    /** ibv_reg_mr (the default symbol, IBVERBS_1.1) over native memory; the region keeps the segment reachable. */
    @Override
    public MemoryRegion register(MemorySegment segment, int access) {
        if (!segment.isNative()) throw new IllegalArgumentException("only native memory can be registered");
        MemorySegment mr = device.rdma().pointer("ibv_reg_mr", pd, segment, segment.byteSize(), access);
        return new FfmMemoryRegion(device, mr, segment);
    }

    /** ibv_alloc_mw(pd, IBV_MW_TYPE_2), static inline in verbs.h: through the context's ops.alloc_mw. */
    @Override
    public MemoryWindow allocateMemoryWindow() {
        return FfmMemoryWindow.allocate(device, pd);
    }

    /** ibv_create_srq (exported, IBVERBS_1.1); the provider writes the granted max_wr and max_sge back. */
    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
        return FfmSharedReceiveQueue.create(device, pd, maxWr, maxSge);
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        device.rdma().check("ibv_dealloc_pd", pd);
        closed = true;
    }
}
