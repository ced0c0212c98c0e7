package dev.nvmf.target.rdma.poller;

import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.target.rdma.memory.RegisteredRegion;
import dev.nvmf.target.rdma.queue.QueueDevice;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;

/**
 * A poller's resources on one device: the CQ every QP of this poller on this device reports to, its completion
 * channel, and the registered data-buffer pools (a small class for 4-8 KiB I/O and a max_io_size class, each
 * with its FIFO of waiters). CQ entries are a budget too: a queue is admitted only while its worst case
 * (send WRs + receive WRs) fits, so the CQ cannot overflow.
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
    private int cqReserved;

    PollerDevice(DeviceResources resources, RdmaTransportConfig config) {
        this.resources = resources;
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
    }

    @Override
    public DeviceResources resources() { return resources; }

    @Override
    public CompletionQueue cq() { return cq; }

    public CompletionChannel channel() { return channel; }

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

    /** Destroys the CQ and channel and gives the pools' memory back (after every queue on it is drained). */
    void close() {
        try {
            cq.close();
        } finally {
            channel.close();
            resources.slabs().release(smallRegion);
            resources.slabs().release(largeRegion);
        }
    }
}
