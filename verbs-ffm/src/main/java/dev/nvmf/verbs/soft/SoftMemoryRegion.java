package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.MemoryRegion;

import java.lang.foreign.MemorySegment;

/**
 * A registered region with an lkey and a distinct rkey. A remote SEND_WITH_INV (or a local LOCAL_INV) naming
 * one of its keys invalidates it: both keys then fail every access, as a fast-registered region's do.
 */
public final class SoftMemoryRegion implements MemoryRegion {
    final SoftProtectionDomain pd;
    private final MemorySegment segment;
    final int access;
    private final int lkey;
    private final int rkey;
    boolean invalidated;
    boolean closed;

    SoftMemoryRegion(SoftProtectionDomain pd, MemorySegment segment, int access, int lkey, int rkey) {
        this.pd = pd;
        this.segment = segment;
        this.access = access;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    @Override
    public MemorySegment segment() { return segment; }

    @Override
    public long address() { return segment.address(); }

    @Override
    public long length() { return segment.byteSize(); }

    @Override
    public int lkey() { return lkey; }

    @Override
    public int rkey() { return rkey; }

    /** Whether a (remote or local) invalidation has revoked this region's keys. */
    public boolean isInvalidated() {
        pd.fabric.lock.lock();
        try {
            return invalidated;
        } finally {
            pd.fabric.lock.unlock();
        }
    }

    boolean covers(long addr, long len) {
        long base = segment.address();
        return len >= 0 && addr >= base && addr - base <= segment.byteSize() - len;
    }

    @Override
    public void close() {
        SoftFabric f = pd.fabric;
        f.lock.lock();
        try {
            if (closed) return;
            closed = true;
            DeviceNode node = pd.context.node;
            node.removeRegion(this);
            pd.users--;
            f.resources.remove(SoftResources.Kind.MR, this);
        } finally {
            f.lock.unlock();
        }
    }
}
