package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.VerbsException;

import java.util.ArrayDeque;

/** A device context on the soft fabric. The CM-owned context (one per device) ignores close(). */
public final class SoftDevice implements Device {
    final DeviceNode node;
    final SoftFabric fabric;
    final boolean cmOwned;
    private final ArrayDeque<AsyncEvent> asyncEvents = new ArrayDeque<>();
    int children;
    private boolean closed;
    /**
     * librdmacm closed this CM-owned context: a rescan ({@code rdma_get_devices}) found its device gone and no CM id
     * on it, or the last id went after a rescan had marked it (rdma-core librdmacm/cma.c: sync_devices_list,
     * remove_cma_dev, ucma_put_device). Its command file is closed: every later call on an object of this context
     * fails with EBADF. The kernel destroys those objects with the file, but a completion channel is a file of its
     * own, and one whose CQ could not be destroyed ({@code ibv_destroy_comp_channel}: EBUSY) stays open and keeps
     * the device in use: {@code rdma link delete} waits for it for ever (ib_uverbs_remove_one). The objects stay
     * counted here so that a consumer that closes them too late is seen.
     */
    boolean closedByLibrary;
    /** A rescan found the device gone while CM ids still used this context: closed when the last of them goes. */
    boolean closeWhenUnused;
    private final Readiness readiness;
    private final java.util.function.BooleanSupplier ready = () -> !asyncEvents.isEmpty();

    SoftDevice(DeviceNode node, boolean cmOwned) {
        this.node = node;
        this.fabric = node.fabric;
        this.cmOwned = cmOwned;
        this.readiness = new Readiness(fabric, node.name + " async events");
        node.contexts.add(this);
    }

    @Override
    public String name() { return node.name; }

    @Override
    public DeviceAttributes attributes() { return node.attributes; }

    /** The device's IP address on the fabric. */
    public String address() { return node.ip.getHostAddress(); }

    /** EBADF once librdmacm closed this context ({@link #closedByLibrary}): for the destroy calls of its objects. */
    void checkOpen(String call) {
        if (closedByLibrary) throw new VerbsException(call, Errno.EBADF, "Bad file descriptor: librdmacm closed "
                + node.name + "'s context");
    }

    void checkUsable(String call) {
        if (closed) throw new VerbsException(call, Errno.EINVAL, "context closed");
        if (node.removed) throw new VerbsException(call, Errno.ENODEV, "No such device");
        if (node.dead) throw new VerbsException(call, Errno.EIO, "Input/output error: the device is dead");
        fabric.faults.checkControl(call);
    }

    @Override
    public ProtectionDomain allocProtectionDomain() {
        fabric.lock.lock();
        try {
            checkUsable("ibv_alloc_pd");
            SoftProtectionDomain pd = new SoftProtectionDomain(this);
            children++;
            fabric.resources.add(SoftResources.Kind.PD, pd, node.name);
            return pd;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public CompletionChannel createCompletionChannel() {
        fabric.lock.lock();
        try {
            checkUsable("ibv_create_comp_channel");
            SoftCompletionChannel ch = new SoftCompletionChannel(this);
            children++;
            fabric.resources.add(SoftResources.Kind.COMP_CHANNEL, ch, node.name);
            return ch;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public CompletionQueue createCompletionQueue(int minEntries, CompletionChannel channel) {
        fabric.lock.lock();
        try {
            checkUsable("ibv_create_cq");
            if (minEntries < 1 || minEntries > node.attributes.maxCqe()) {
                throw new VerbsException("ibv_create_cq", Errno.EINVAL, "Invalid argument: cqe " + minEntries);
            }
            SoftCompletionChannel ch = null;
            if (channel != null) {
                if (!(channel instanceof SoftCompletionChannel sc) || sc.context != this) {
                    throw new VerbsException("ibv_create_cq", Errno.EINVAL, "channel belongs to another context");
                }
                ch = sc;
            }
            SoftCompletionQueue cq = new SoftCompletionQueue(this, minEntries, ch);
            children++;
            fabric.resources.add(SoftResources.Kind.CQ, cq, node.name + " cqe " + minEntries);
            return cq;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public AsyncEvent pollAsyncEvent(long timeoutMillis) {
        fabric.lock.lock();
        try {
            fabric.await(ready, timeoutMillis);
            AsyncEvent e = asyncEvents.poll();
            readiness.update(!asyncEvents.isEmpty());
            return e;
        } finally {
            fabric.lock.unlock();
        }
    }

    void postAsync(AsyncEvent e) {
        if (closed || node.dead) return;
        asyncEvents.add(e);
        readiness.update(true);
        fabric.signalAll();
    }

    @Override
    public int readinessFd() { return readiness.readinessFd(ready); }

    @Override
    public void close() {
        if (cmOwned) return;
        fabric.lock.lock();
        try {
            if (closed) return;
            if (children > 0) throw new VerbsException("ibv_close_device", Errno.EBUSY, "Device or resource busy");
            closed = true;
            readiness.close();
            node.contexts.remove(this);
            fabric.resources.remove(SoftResources.Kind.CONTEXT, this);
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public String toString() { return "SoftDevice[" + node.name + " " + address() + (cmOwned ? ", cm" : "") + "]"; }
}
