package dev.nvmf.target.rdma.memory;

import dev.nvmf.target.backend.MemoryMedium;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.ProtectionDomain;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * What the transport keeps per device: one protection domain and its registered slabs, created when the first
 * connection arrives on the device and released at transport stop, after every queue on it is drained.
 */
public final class DeviceResources implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DeviceResources.class.getName());

    private final Device device;
    private final DeviceAttributes attributes;
    private final ProtectionDomain pd;
    private final SlabAllocator slabs;
    /** The device completes nothing any more (fatal event, removal, a failed CQ or channel): CM thread writes. */
    private volatile boolean dead;
    private boolean closed;
    /** A QP on the device could not be destroyed: the device may still use the slabs, which are never freed. */
    private volatile boolean leakMemory;
    /** Where registrations of RAM namespaces are made (the CM thread); null: no zero copy on this device. */
    private final Executor control;
    /** RAM namespaces' registrations on this device, and the media whose registration was asked for. */
    private final List<MediumRegistration> registrations = new ArrayList<>();
    private final Set<MemoryMedium> asked = new HashSet<>();

    public DeviceResources(Device device) {
        this(device, null);
    }

    /**
     * @param control runs the registrations of RAM namespaces (zero copy), off the I/O path: the CM agent's
     *                thread; null when the transport moves every namespace's data through its buffers
     */
    public DeviceResources(Device device, Executor control) {
        this.device = device;
        this.control = control;
        this.attributes = device.attributes();
        this.pd = device.allocProtectionDomain();
        this.slabs = new SlabAllocator(pd);
    }

    /**
     * This device's registration of {@code medium}, or null (poller thread; allocation-free once it exists). The
     * first time a medium is seen on the device its registration is asked of the control thread, and the queue
     * moves that request's data through a buffer meanwhile: nothing is registered on the I/O path.
     */
    public MediumRegistration registrationFor(MemoryMedium medium) {
        for (MemoryMedium.User u : medium.users()) {
            if (u instanceof MediumRegistration r && r.device() == this) return r;
        }
        if (control != null) ask(medium);
        return null;
    }

    private void ask(MemoryMedium medium) {
        synchronized (this) {
            if (closed || dead || !asked.add(medium)) return;
        }
        control.execute(() -> register(medium));
    }

    /** Registers {@code medium} with the PD (control thread); a failure is logged once and the buffered path stays. */
    void register(MemoryMedium medium) {
        MemoryRegion mr;
        synchronized (this) {
            if (closed || dead || medium.retired()) {
                asked.remove(medium);
                return;
            }
            long t0 = System.nanoTime();
            try {
                mr = pd.register(medium.segment(), Access.LOCAL_WRITE);
            } catch (RuntimeException e) {
                // e.g. RLIMIT_MEMLOCK too small: the namespace works, through the transport's buffers.
                LOG.log(System.Logger.Level.WARNING,
                        "registering a RAM namespace of " + medium.segment().byteSize() + " bytes on "
                                + device.name() + " failed (" + e.getMessage() + "): its I/O is copied through"
                                + " registered buffers");
                mr = null;
            }
            MediumRegistration r = new MediumRegistration(this, medium, mr);
            if (mr != null && !medium.attach(r)) {
                // Retired meanwhile: nothing can have used it.
                try {
                    mr.close();
                } catch (RuntimeException e) {
                    leakMemory = true;
                }
                asked.remove(medium);
                return;
            }
            if (mr == null) {
                return; // stays asked: not tried again on this device
            }
            registrations.add(r);
            // ibv_reg_mr pins every page: the time it takes grows with the namespace (the operator's clue).
            LOG.log(System.Logger.Level.INFO,
                    "registered a RAM namespace of " + medium.segment().byteSize() + " bytes on " + device.name()
                            + " for zero copy in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        }
    }

    /** A registration was deregistered (any thread). */
    synchronized void forget(MediumRegistration r) {
        registrations.remove(r);
        asked.remove(r.medium());
    }

    /** RAM namespaces registered on this device now (tests, logs). */
    public synchronized List<MediumRegistration> registrations() { return List.copyOf(registrations); }

    public Device device() { return device; }

    public DeviceAttributes attributes() { return attributes; }

    public ProtectionDomain protectionDomain() { return pd; }

    public SlabAllocator slabs() { return slabs; }

    /** Whether SEND_WITH_INVALIDATE may be used on this device. */
    public boolean supportsRemoteInvalidation() { return attributes.memoryManagementExtensions(); }

    public boolean dead() { return dead; }

    public void markDead() { dead = true; }


    /** A QP on the device could not be destroyed: {@link #close()} leaves the slabs registered and allocated. */
    public void leakMemory() { leakMemory = true; }

    /**
     * Deregisters the slabs, frees their memory and deallocates the PD: after every QP on the device is destroyed
     * and every poller's CQ on it is gone. Once.
     */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        if (leakMemory) {
            LOG.log(System.Logger.Level.ERROR, "a QP on "
                    + device.name() + " could not be destroyed: its " + slabs.bytesRegistered()
                    + " bytes of registered memory are leaked on purpose");
            return;
        }
        // Every QP on the device is destroyed: RAM namespaces' registrations go (a use still in flight defers its
        // deregistration to its release), then the slabs, then the PD.
        for (MediumRegistration r : List.copyOf(registrations)) r.close();
        slabs.close();
        try {
            pd.close();
        } catch (RuntimeException e) {
            // ENOENT: the kernel destroyed it with the removed device's other objects (Deregistration).
            LOG.log(Deregistration.alreadyDestroyedByTheKernel(e)
                    ? System.Logger.Level.INFO : System.Logger.Level.WARNING,
                    "ibv_dealloc_pd on " + device.name() + " failed: " + e.getMessage());
        }
    }
}
