package dev.nvmf.target.rdma.poller;

import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.target.rdma.memory.RegisteredRegion;
import dev.nvmf.target.rdma.queue.QueueDevice;
import dev.nvmf.target.rdma.queue.QueueParameters;
import dev.nvmf.target.rdma.queue.SharedReceives;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;

/**
 * A poller's resources on one device: the CQ every QP of this poller on this device reports to, its completion
 * channel, and the registered data-buffer pools (a small class for 4-8 KiB I/O and a max_io_size class, each
 * with its FIFO of waiters), and with {@code transport.srq} the shared receive queue all its queues on the device take
 * their capsules from. CQ entries are a budget too: a queue is admitted only while its worst case (send WRs + receive
 * WRs) fits, so the CQ cannot overflow; the SRQ's receives are reserved once, for every queue on it.
 */
public final class PollerDevice implements QueueDevice {
    private final DeviceResources resources;
    private final CompletionChannel channel;
    private final CompletionQueue cq;
    private final BufferPool small;
    private final BufferPool large;
    private final BufferPool[] pools;
    private final RegisteredRegion smallRegion;
    private final RegisteredRegion largeRegion;
    private final int cqCapacity;
    /** Null without {@code transport.srq}, or when the device has no SRQs (max_srq 0). */
    private final SharedReceives shared;
    /** Its completion channel's token in the poller's waiter. */
    private final int token;
    private int cqReserved;
    /** Its CQ or channel failed: the poller polls it no more (poller thread). */
    private boolean failed;

    PollerDevice(DeviceResources resources, RdmaTransportConfig config, int token) {
        this.resources = resources;
        this.token = token;
        int cqSize = Math.min(config.cqSize(), Math.max(64, resources.attributes().maxCqe()));
        this.channel = resources.device().createCompletionChannel();
        try {
            this.cq = resources.device().createCompletionQueue(cqSize, channel);
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
        this.cqCapacity = Math.min(cq.capacity(), cqSize);
        int smallSize = Math.min(RdmaTransportConfig.SMALL_BUFFER_SIZE, config.maxIoSize());
        this.smallRegion = resources.slabs().allocate((long) smallSize * config.smallBuffers());
        this.largeRegion = resources.slabs().allocate((long) config.maxIoSize() * config.largeBuffers());
        this.small = new BufferPool(smallRegion, smallSize);
        this.large = new BufferPool(largeRegion, config.maxIoSize());
        this.pools = new BufferPool[] {small, large};
        this.shared = sharedReceives(resources, config, cqCapacity);
        if (shared != null) cqReserved = shared.depth();
    }

    /**
     * The SRQ with {@code transport.srq}: srq_depth buffers, at most the device's max_srq_wr and half the CQ (its
     * receive completions are reserved there once), each large enough for the largest in-capsule data of the ports.
     * A device without SRQs keeps per-queue receives (logged). Gives back what it took if the device refuses.
     */
    private SharedReceives sharedReceives(DeviceResources resources, RdmaTransportConfig config, int cqCapacity) {
        if (!config.sharedReceiveQueue()) return null;
        if (resources.attributes().maxSrq() <= 0 || resources.attributes().maxSrqWr() <= 0) {
            System.getLogger(PollerDevice.class.getName()).log(System.Logger.Level.WARNING, "{0} has no shared"
                    + " receive queues (max_srq 0): transport.srq is ignored on it", resources.device().name());
            return null;
        }
        int depth = Math.min(config.srqDepth(), cqCapacity / 2);
        try {
            return SharedReceives.create(resources, depth,
                    QueueParameters.recvBufferSize(config.maxInCapsuleDataSize()), Poller.MAX_QUEUES);
        } catch (RuntimeException e) {
            closeCq();
            throw e;
        }
    }

    @Override
    public SharedReceives sharedReceives() { return shared; }

    @Override
    public DeviceResources resources() { return resources; }

    @Override
    public CompletionQueue cq() { return cq; }

    public CompletionChannel channel() { return channel; }

    int token() { return token; }

    boolean failed() { return failed; }

    void failed(boolean f) { failed = f; }

    public BufferPool[] pools() { return pools; }

    @Override
    public BufferPool poolFor(int length) {
        return length <= small.bufferSize() ? small : large;
    }

    /** Reserves CQ entries for a new queue (CM thread). */
    @Override
    public synchronized boolean reserveCq(int entries) {
        if (cqReserved + entries > cqCapacity) return false;
        cqReserved += entries;
        return true;
    }

    @Override
    public synchronized void releaseCq(int entries) {
        cqReserved -= entries;
    }

    public synchronized int cqReserved() { return cqReserved; }

    public int cqCapacity() { return cqCapacity; }

    /**
     * Destroys the SRQ (every QP on it is destroyed by now), the CQ and channel, and gives the pools' memory back
     * (after every queue on it is drained).
     */
    void close() {
        try {
            if (shared != null) shared.close();
        } catch (RuntimeException e) {
            System.getLogger(PollerDevice.class.getName()).log(System.Logger.Level.ERROR, "ibv_destroy_srq on "
                    + resources.device().name() + " failed: " + e.getMessage() + "; its buffers are leaked on purpose");
        }
        closeCq();
    }

    private void closeCq() {
        try {
            cq.close();
        } finally {
            channel.close();
            resources.slabs().release(smallRegion);
            resources.slabs().release(largeRegion);
        }
    }
}
