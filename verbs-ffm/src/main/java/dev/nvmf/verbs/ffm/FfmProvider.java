package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The real RDMA provider: rdma-core's libibverbs and librdmacm through {@code java.lang.foreign}, no JNI and no
 * C of our own. Libraries load on first use, so constructing the provider never fails; a machine without
 * rdma-core gets a {@link VerbsException} naming the missing library from the first call that needs it.
 */
public final class FfmProvider implements RdmaProvider {
    /** One Device per native ibv_context, so callers can key per-device resources by object. */
    private final ConcurrentHashMap<Long, FfmDevice> devices = new ConcurrentHashMap<>();
    /** Orders CM id creations and device removals (see {@link #deviceFor}). */
    private final java.util.concurrent.atomic.AtomicLong sequence = new java.util.concurrent.atomic.AtomicLong();

    public FfmProvider() {}

    @Override
    public String name() { return "ffm"; }

    Rdma rdma() { return Rdma.get(); }

    /**
     * Lists devices with their attributes. No devices (no RDMA in the kernel, no provider library, no
     * uverbs) is an empty list: ibv_get_device_list then returns NULL or an empty array.
     *
     * <p>Once the CM has reported a device removed, this also lets librdmacm let go of it. librdmacm keeps its own
     * context of every device it used open, even after the last CM id on it is destroyed, until it rescans the
     * device list and finds the device gone (librdmacm cma.c, sync_devices_list, reached from rdma_get_devices). On
     * a driver without disassociate (rxe) the kernel's removal waits for that context, so a removed device
     * finishes leaving (and can come back) only after a listing made once everything on it was destroyed: a
     * consumer waiting for the device to return calls this periodically anyway.
     */
    @Override
    public List<DeviceInfo> listDevices() {
        Rdma rdma = rdma();
        if (removalSeen) releaseDepartedDevices(rdma);
        List<DeviceInfo> out = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(JAVA_INT);
            Rdma.Outcome o = rdma.invoke("ibv_get_device_list", num);
            if (o.value() == 0) return List.of();
            MemorySegment list = MemorySegment.ofAddress(o.value());
            try {
                int n = num.get(JAVA_INT, 0);
                MemorySegment array = list.reinterpret((long) (n + 1) * NativeLayout.POINTER_SIZE);
                for (int i = 0; i < n; i++) {
                    MemorySegment dev = array.getAtIndex(ADDRESS, i);
                    out.add(DeviceQuery.describe(rdma, dev));
                }
            } finally {
                rdma.run("ibv_free_device_list", list);
            }
        }
        return List.copyOf(out);
    }

    @Override
    public Device openDevice(String name) {
        Rdma rdma = rdma();
        List<String> seen = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment num = arena.allocate(JAVA_INT);
            Rdma.Outcome o = rdma.invoke("ibv_get_device_list", num);
            if (o.value() != 0) {
                MemorySegment list = MemorySegment.ofAddress(o.value());
                try {
                    int n = num.get(JAVA_INT, 0);
                    MemorySegment array = list.reinterpret((long) (n + 1) * NativeLayout.POINTER_SIZE);
                    for (int i = 0; i < n; i++) {
                        MemorySegment dev = array.getAtIndex(ADDRESS, i);
                        String devName = DeviceQuery.deviceName(rdma, dev);
                        seen.add(devName);
                        if (devName.equals(name)) {
                            MemorySegment ctx = rdma.pointer("ibv_open_device", dev);
                            FfmDevice device = new FfmDevice(this, ctx, devName, true);
                            devices.put(ctx.address(), device);
                            return device;
                        }
                    }
                } finally {
                    rdma.run("ibv_free_device_list", list);
                }
            }
        }
        throw new VerbsException("ibv_open_device", NativeLayout.ENODEV, Libc.strerror(NativeLayout.ENODEV)
                + ": no RDMA device named '" + name + "' (present: " + (seen.isEmpty() ? "none" : String.join(", ", seen))
                + ")");
    }

    long nextSequence() { return sequence.incrementAndGet(); }

    /** Set once the CM reported a DEVICE_REMOVAL: from then on listDevices lets librdmacm rescan. */
    private volatile boolean removalSeen;

    void removalReported() { removalSeen = true; }

    /** rdma_get_devices rescans the device list (closing librdmacm's contexts of departed, unused devices). */
    private static void releaseDepartedDevices(Rdma rdma) {
        Rdma.Outcome o = rdma.invoke("rdma_get_devices", MemorySegment.NULL);
        if (o.value() != 0) rdma.run("rdma_free_devices", MemorySegment.ofAddress(o.value()));
    }

    /**
     * The Device for a context librdmacm opened (a CM id's {@code verbs}); one object per context. A device the CM
     * reported removed (DEVICE_REMOVAL) keeps its object for the ids that existed before the removal; an id created
     * after it gets a new object even if librdmacm's new context for the returned device lies at the same
     * address, so a consumer keying per-device resources by object never mixes the old device with the new one.
     *
     * @param idCreatedAt the {@link #nextSequence()} value of the asking id's creation
     */
    FfmDevice deviceFor(long context, long idCreatedAt) {
        if (context == 0) return null;
        return devices.compute(context, (c, d) -> {
            if (d != null && (d.removedAt() < 0 || idCreatedAt < d.removedAt())) return d;
            MemorySegment ctx = MemorySegment.ofAddress(c);
            MemorySegment dev = ctx.reinterpret(NativeLayout.IBV_CONTEXT_SIZE).get(ADDRESS, NativeLayout.IBV_CONTEXT_DEVICE);
            return new FfmDevice(this, ctx, DeviceQuery.deviceName(rdma(), dev), false);
        });
    }

    void forget(FfmDevice device) {
        devices.remove(device.context().address(), device);
    }

    @Override
    public CmEventChannel createEventChannel() {
        return new FfmEventChannel(this);
    }

    /** An {@link EpollWaiter}: the channels' and devices' own fds in one epoll set. */
    @Override
    public EventWaiter createEventWaiter() {
        return new EpollWaiter();
    }

    /** Closes the devices this provider opened by name; CM-owned contexts belong to librdmacm. */
    @Override
    public void close() {
        for (FfmDevice d : List.copyOf(devices.values())) {
            if (d.owned()) d.close();
        }
    }
}
