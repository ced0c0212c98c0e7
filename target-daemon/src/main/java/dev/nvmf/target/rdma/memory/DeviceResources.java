package dev.nvmf.target.rdma.memory;

import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.ProtectionDomain;

/**
 * What the transport keeps per device: one protection domain and its registered slabs, created when the first
 * connection arrives on the device and released at transport stop, after every queue on it is drained.
 */
public final class DeviceResources implements AutoCloseable {
    private final Device device;
    private final DeviceAttributes attributes;
    private final ProtectionDomain pd;
    private final SlabAllocator slabs;

    public DeviceResources(Device device) {
        this.device = device;
        this.attributes = device.attributes();
        this.pd = device.allocProtectionDomain();
        this.slabs = new SlabAllocator(pd);
    }

    public Device device() { return device; }

    public DeviceAttributes attributes() { return attributes; }

    public ProtectionDomain protectionDomain() { return pd; }

    public SlabAllocator slabs() { return slabs; }

    /** Whether SEND_WITH_INVALIDATE may be used on this device. */
    public boolean supportsRemoteInvalidation() { return attributes.memoryManagementExtensions(); }

    @Override
    public void close() {
        slabs.close();
        try {
            pd.close();
        } catch (RuntimeException e) {
            System.getLogger(DeviceResources.class.getName()).log(System.Logger.Level.WARNING,
                    "ibv_dealloc_pd on " + device.name() + " failed: " + e.getMessage());
        }
    }
}
