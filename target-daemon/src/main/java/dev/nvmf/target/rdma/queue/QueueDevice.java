package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.verbs.CompletionQueue;

/**
 * A poller's resources on one device as its queues use them: the CQ their QPs report to, with its entries as a
 * budget (a queue is admitted only while its worst case fits, so the CQ cannot overflow), and the registered
 * data-buffer pools.
 */
public interface QueueDevice {
    DeviceResources resources();

    CompletionQueue cq();

    /** The pool for a transfer of {@code length} bytes. */
    BufferPool poolFor(int length);

    /** Reserves CQ entries for a new queue (control path); false when they do not fit. */
    boolean reserveCq(int entries);

    void releaseCq(int entries);

    /** The shared receive queue its queues take their capsules from ({@code transport.srq}), or null: none. */
    default SharedReceives sharedReceives() { return null; }
}
