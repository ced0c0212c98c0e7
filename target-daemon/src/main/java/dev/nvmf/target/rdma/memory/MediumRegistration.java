package dev.nvmf.target.rdma.memory;

import dev.nvmf.target.backend.MemoryMedium;
import dev.nvmf.verbs.MemoryRegion;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One RAM namespace's memory registered with one device's protection domain (one MR per medium per device), so
 * that queues on the device RDMA READ the host's data straight into the namespace and RDMA WRITE it straight from
 * there (zero copy). Made on the CM thread ({@link DeviceResources#registrationFor}), used by pollers.
 *
 * <p>Every request that posts RDMA on the medium holds a use ({@link #acquire}) from before its first post until
 * its last completion (or its QP's destruction) says the device is done ({@link #release}). Once the medium is
 * retired (its namespace was removed and its backend closed) or the device goes, no new use is granted, and the MR
 * is deregistered when the last use goes, by whichever thread lets it go; only then does the medium's memory lose
 * this registration's hold. A deregistration that fails keeps the hold for ever: the memory is leaked on purpose,
 * never freed, as the device may still reach it.
 */
public final class MediumRegistration implements MemoryMedium.User {
    private static final System.Logger LOG = System.getLogger(MediumRegistration.class.getName());
    /** Set in {@link #uses} once no new use may start; the low bits count the uses. */
    private static final int CLOSING = 1 << 30;

    private final DeviceResources device;
    private final MemoryMedium medium;
    /** Null when the registration failed: the device's queues keep the buffered path for this medium. */
    private final MemoryRegion mr;
    private final int lkey;
    private final long address;
    private final long length;
    private final AtomicInteger uses = new AtomicInteger();
    private volatile boolean deregistered;

    MediumRegistration(DeviceResources device, MemoryMedium medium, MemoryRegion mr) {
        this.device = device;
        this.medium = medium;
        this.mr = mr;
        this.lkey = mr == null ? 0 : mr.lkey();
        this.address = medium.segment().address();
        this.length = medium.segment().byteSize();
        if (mr == null) uses.set(CLOSING);
    }

    public DeviceResources device() { return device; }

    public MemoryMedium medium() { return medium; }

    public int lkey() { return lkey; }

    /** The native address of the medium's byte 0. */
    public long address() { return address; }

    public long length() { return length; }

    /** Whether {@code [offset, offset + len)} lies inside the registered memory. */
    public boolean covers(long offset, long len) {
        return offset >= 0 && len >= 0 && offset <= length && len <= length - offset;
    }

    /** A use for one request's RDMA (poller thread, allocation-free); false once closing: take the buffered path. */
    public boolean acquire() {
        int u;
        do {
            u = uses.get();
            if ((u & CLOSING) != 0) return false;
        } while (!uses.compareAndSet(u, u + 1));
        return true;
    }

    /** The device is done with one request's RDMA on the medium (its completion, or its QP destroyed). */
    public void release() {
        if (uses.decrementAndGet() == CLOSING) deregister();
    }

    /** Uses in flight (tests, logs). */
    public int usesInFlight() { return uses.get() & ~CLOSING; }

    public boolean deregistered() { return deregistered; }

    /** The medium's backend closed: no new use; deregistered once the uses in flight are done. Any thread. */
    @Override
    public void mediumRetired() {
        close();
    }

    /** No new use; deregisters now if none is in flight, else when the last goes. Idempotent; any thread. */
    public void close() {
        int u;
        do {
            u = uses.get();
            if ((u & CLOSING) != 0) return;
        } while (!uses.compareAndSet(u, u | CLOSING));
        if (u == 0) deregister();
    }

    /** Exactly once, when closing with no use left: the MR goes, then this registration's hold on the memory. */
    private void deregister() {
        if (mr == null) return;
        try {
            mr.close();
        } catch (RuntimeException e) {
            if (!Deregistration.alreadyDestroyedByTheKernel(e)) {
                LOG.log(System.Logger.Level.ERROR, "ibv_dereg_mr of a RAM namespace on " + device.device().name()
                        + " failed (" + e.getMessage() + "): its " + length + " bytes are leaked on purpose, as the"
                        + " device may still reach them");
                return;
            }
            LOG.log(System.Logger.Level.INFO, "ibv_dereg_mr of a RAM namespace on " + device.device().name()
                    + ": the kernel already destroyed the region (" + e.getMessage() + "; the device was removed)");
        }
        deregistered = true;
        device.forget(this);
        medium.detach(this);
    }
}
