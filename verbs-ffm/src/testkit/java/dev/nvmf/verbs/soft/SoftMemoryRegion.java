package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.VerbsException;

import java.lang.foreign.MemorySegment;

/**
 * A registered region (ibv_reg_mr) with an lkey and a distinct rkey. Its keys cannot be invalidated, remotely or
 * locally: like rxe (rxe_invalidate_mr accepts only fast-registration regions, which user space cannot create) and
 * hardware, a SEND_WITH_INV naming its rkey fails the receive with REM_INV_REQ_ERR and a LOCAL_INV fails with
 * LOC_QP_OP_ERR. Invalidatable keys come from type-2 memory windows bound over it ({@link SoftMemoryWindow});
 * while any is bound the region cannot be deregistered (rxe: EINVAL).
 */
public final class SoftMemoryRegion implements MemoryRegion {
    final SoftProtectionDomain pd;
    private final MemorySegment segment;
    final int access;
    private final int lkey;
    private final int rkey;
    boolean closed;
    /** Memory windows currently bound over this region. */
    int boundWindows;

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

    /** The lkey: what a BIND_MW names the region by on this provider (rxe's post_send reads the lkey too). */
    @Override
    public long handle() { return lkey & 0xffffffffL; }

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
            pd.context.checkOpen("ibv_dereg_mr");
            if (boundWindows > 0) {
                throw new VerbsException("ibv_dereg_mr", Errno.EINVAL, "Invalid argument: " + boundWindows
                        + " memory window(s) still bound to the region");
            }
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
