package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.MemoryWindow;

/**
 * A type-2 memory window, modelled on rxe (drivers/infiniband/sw/rxe/rxe_mw.c). It starts free; a BIND_MW posted
 * on a QP of its PD binds it (from the free state only) to a range of a region registered with MW_BIND, giving it
 * the key byte the request carries; RDMA through its rkey then works from the peer of that QP only, within the range
 * and the access granted. A SEND_WITH_INV or LOCAL_INV naming the current key frees it again.
 *
 * <p>Like rxe's provider, a bind names the window by the key the consumer last recorded ({@link #rkey()}, the
 * native {@code ibv_mw.rkey}); the device checks it against the key it holds, so a consumer that forgets
 * {@link #bindPosted} after posting a bind gets MW_BIND_ERR on the next one.
 */
public final class SoftMemoryWindow implements MemoryWindow {
    final SoftProtectionDomain pd;
    final int index;
    /** The consumer's view of the key (struct ibv_mw.rkey): read when a BIND_MW is posted. */
    private int userRkey;
    /** The key the device holds (rxe's mw->rkey). */
    int deviceRkey;
    boolean valid;
    SoftMemoryRegion mr;
    long addr;
    long length;
    int access;
    /** The QP that bound it: only that QP's peer may use the key (type 2). */
    SoftQueuePair qp;
    boolean closed;

    SoftMemoryWindow(SoftProtectionDomain pd, int rkey) {
        this.pd = pd;
        this.index = rkey >>> 8;
        this.userRkey = rkey;
        this.deviceRkey = rkey;
    }

    @Override
    public int rkey() {
        pd.fabric.lock.lock();
        try {
            return userRkey;
        } finally {
            pd.fabric.lock.unlock();
        }
    }

    /** The key index: what a BIND_MW names the window by on this provider. */
    @Override
    public long handle() { return index; }

    @Override
    public void bindPosted(int rkey) {
        pd.fabric.lock.lock();
        try {
            userRkey = rkey;
        } finally {
            pd.fabric.lock.unlock();
        }
    }

    int userRkeyLocked() { return userRkey; }

    /** Whether the window is bound (its current key grants access); false once invalidated. */
    public boolean isBound() {
        pd.fabric.lock.lock();
        try {
            return valid;
        } finally {
            pd.fabric.lock.unlock();
        }
    }

    boolean covers(long a, long len) {
        return len >= 0 && a >= addr && a - addr <= length - len;
    }

    /** Back to the free state (invalidation or deallocation): the key stops working, the region is released. */
    void unbind() {
        if (!valid) return;
        valid = false;
        if (mr != null) mr.boundWindows--;
        mr = null;
        qp = null;
        addr = length = 0;
        access = 0;
    }

    @Override
    public void close() {
        SoftFabric f = pd.fabric;
        f.lock.lock();
        try {
            if (closed) return;
            closed = true;
            unbind();
            pd.context.node.removeWindow(this);
            pd.users--;
            f.resources.remove(SoftResources.Kind.MW, this);
        } finally {
            f.lock.unlock();
        }
    }

    @Override
    public String toString() { return "SoftMemoryWindow[rkey=0x" + Integer.toHexString(deviceRkey) + (valid ? " bound" : " free") + "]"; }
}
