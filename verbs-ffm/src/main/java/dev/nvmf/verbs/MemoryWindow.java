package dev.nvmf.verbs;

/**
 * A memory window of type 2 ({@code struct ibv_mw}, IBV_MW_TYPE_2): an rkey over part of a registered region that
 * is granted by a BIND_MW work request on one QP and revoked by the peer's SEND_WITH_INV (or a LOCAL_INV). This is
 * how user space gets keys a peer may invalidate remotely: the rkey of an {@code ibv_reg_mr} region cannot be
 * (rxe and hardware fail the receive with REM_INV_REQ_ERR and move the QP to error).
 *
 * <p>Life of a window: allocate ({@link ProtectionDomain#allocateMemoryWindow}); bind
 * ({@link #bind} or {@link SendWorkRequest#bindMemoryWindow} then {@link #bindPosted}) with the key
 * {@link #nextRkey()}; the peer uses {@link #rkey()} for RDMA READ/WRITE and may invalidate it; bind again
 * (only once invalid: a type-2 window binds from the free state) with a new key; close. The region under a bound
 * window cannot be deregistered, so close windows before their regions.
 *
 * <p>The window's access through a key is tied to the QP that bound it: RDMA from the peer of another QP fails.
 */
public interface MemoryWindow extends AutoCloseable {
    /**
     * The window's current rkey: the key of the last bind posted through {@link #bind} or recorded with
     * {@link #bindPosted}; before any bind, the allocation's key, which reaches nothing.
     */
    int rkey();

    /**
     * The key the next bind should give the window: {@link #rkey()} with its low 8 bits (the consumer-owned key
     * byte) advanced by one, as {@code ibv_inc_rkey} does. A stale key from before the rebind then fails.
     */
    default int nextRkey() {
        int k = rkey();
        return (k & 0xffffff00) | ((k + 1) & 0xff);
    }

    /**
     * What a BIND_MW work request names as the window ({@code bind_mw.mw}): the native {@code struct ibv_mw *} on
     * the ffm provider, an opaque id on the soft provider.
     */
    long handle();

    /**
     * Records that a BIND_MW giving this window {@code rkey} was posted. Providers read the window's current key
     * from it when the next bind is posted (rxe compares it with the key the device holds), so every bind posted
     * outside {@link #bind} must be followed by this call once the post succeeded.
     */
    void bindPosted(int rkey);

    /**
     * Binds the window to {@code [address, address + length)} of {@code region} with {@code access} (REMOTE_READ
     * and/or REMOTE_WRITE) and the key {@link #nextRkey()}: fills {@code wr} (a single request, next = null) and
     * posts it on {@code qp}, whose PD must be the window's. The bind executes in send-queue order, so a SEND
     * posted after it that advertises {@link #rkey()} reaches the peer only once the key is valid; a failed bind
     * completes with {@link WcStatus#MW_BIND_ERR} and moves the QP to error.
     *
     * @return 0, or the errno of the failed post (the window's key is then unchanged)
     */
    default int bind(QueuePair qp, SendWorkRequest wr, long wrId, int sendFlags, MemoryRegion region, long address,
                     long length, int access) {
        int key = nextRkey();
        wr.wrId(wrId).next(null).sendFlags(sendFlags).bindMemoryWindow(this, key, region, address, length, access);
        int rc = qp.postSend(wr);
        if (rc == 0) bindPosted(key);
        return rc;
    }

    /** ibv_dealloc_mw. A bound window is unbound by its deallocation. */
    @Override
    void close();
}
