package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.rdma.memory.DeviceResources;

/**
 * What a queue needs from the poller that owns it: a slot (the queue's number in its {@code wr_id}s), the poller's
 * completion queue and buffers on the queue's device, and a way in from other threads. The poller implements it;
 * the queue knows nothing else of the poller.
 */
public interface QueuePoller {
    /** The poller's number (for logs). */
    int index();

    /**
     * The poller's clock for the commands of this pass: a command's start time and its completion's (read at most
     * once per pass on the poller's thread; any other thread that reads it reads the source).
     */
    org.agrona.concurrent.NanoClock passClock();

    /** The poller's count of verbs downcalls: the queue counts its posts there (poller thread). */
    dev.nvmf.target.rdma.VerbsCalls verbsCalls();

    // Control path (the CM thread, while a queue opens or is released)

    /** The poller's CQ and data buffers on {@code device}, created on first use; throws if they cannot be. */
    QueueDevice deviceFor(DeviceResources device);

    /** A free slot, or -1 when the poller has as many queues as it can hold. */
    int allocateSlot();

    /** From here the queue's completions reach it. */
    void publish(RdmaQueue queue);

    /** Gives a slot back (after the queue's QP is destroyed). */
    void freeSlot(int slot);

    // Any thread

    /** The core completed {@code request}: hand it to the poller thread (lock-free, allocation-free). */
    void submitCompletion(RdmaRequest request);

    /** Runs {@code command} on the poller thread (control path; may allocate). */
    void submitCommand(Runnable command);

    // Poller thread

    /** The queue has receives to post: the poller calls {@link RdmaQueue#flushReposts} after this batch. */
    void scheduleRepost(RdmaQueue queue);

    /**
     * The queue has a send chain to post: the poller calls {@link RdmaQueue#flushSends} at the end of this pass, after
     * the receives.
     */
    void scheduleSend(RdmaQueue queue);

    /** The queue left LIVE and drains from now on: the CM agent bounds how long that may take. */
    void drainStarted(RdmaQueue queue);

    /** The queue drained: nothing of it is outstanding on the hardware or in the core any more. */
    void queueDrained(RdmaQueue queue);
}
