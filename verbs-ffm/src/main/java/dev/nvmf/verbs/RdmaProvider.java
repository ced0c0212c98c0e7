package dev.nvmf.verbs;

import java.util.List;

/**
 * Entry point of one RDMA implementation. {@code dev.nvmf.verbs.ffm.FfmProvider} binds the host's rdma-core;
 * {@code dev.nvmf.verbs.soft.SoftFabric} provides an in-process fabric.
 */
public interface RdmaProvider extends AutoCloseable {
    /** A short name: "ffm" or "soft". */
    String name();

    /** Devices present now, with their attributes; an empty list (never an exception) when there are none. */
    List<DeviceInfo> listDevices();

    /** Opens a device by name (e.g. "rxe0", "mlx5_0"). */
    Device openDevice(String name);

    /**
     * Creates an RDMA CM event channel. CM ids are created on it; devices are reached through
     * {@link CmId#device()} once an id is bound to an address or received in a connect request.
     */
    CmEventChannel createEventChannel();

    /**
     * A waiter for this provider's event sources (CM event channels, devices, completion channels), a timer and a
     * wakeup, with no wake-ups while idle. The caller closes it. Both providers of this module have one; the default
     * is for providers that cannot wait on their sources (stand-ins in tests).
     *
     * @throws UnsupportedOperationException when the provider has none
     */
    default EventWaiter createEventWaiter() {
        throw new UnsupportedOperationException(name() + " provides no event waiter");
    }

    @Override
    void close();
}
