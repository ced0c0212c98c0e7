package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.WorkCompletion;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * An ibv_cq. poll and requestNotify go straight through the context's ops table (read once here) with the
 * static address-less handles of {@link DataPath}: no allocation, no lookup per call.
 */
final class FfmCompletionQueue implements CompletionQueue {
    private final FfmDevice device;
    private final MemorySegment cq;
    private final FfmCompletionChannel channel;
    private final MemorySegment pollCq;
    private final MemorySegment reqNotifyCq;
    private final int capacity;
    private boolean closed;

    FfmCompletionQueue(FfmDevice device, MemorySegment cq, FfmCompletionChannel channel) {
        this.device = device;
        this.cq = cq.reinterpret(NativeLayout.IBV_CQ_SIZE);
        this.channel = channel;
        this.capacity = this.cq.get(JAVA_INT, NativeLayout.IBV_CQ_CQE);
        MemorySegment context = this.cq.get(java.lang.foreign.ValueLayout.ADDRESS, NativeLayout.IBV_CQ_CONTEXT);
        this.pollCq = DataPath.function(context, NativeLayout.IBV_CONTEXT_OPS_POLL_CQ);
        this.reqNotifyCq = DataPath.function(context, NativeLayout.IBV_CONTEXT_OPS_REQ_NOTIFY_CQ);
    }

    MemorySegment cq() { return cq; }

    long address() { return cq.address(); }

    FfmDevice device() { return device; }

    @Override
    public int capacity() { return capacity; }

    @Override
    public int poll(WorkCompletion completions) {
        try {
            return (int) DataPath.POLL_CQ.invokeExact(pollCq, cq, completions.capacity(), completions.segment());
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public int requestNotify(boolean solicitedOnly) {
        try {
            return (int) DataPath.REQ_NOTIFY_CQ.invokeExact(reqNotifyCq, cq, solicitedOnly ? 1 : 0);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        device.rdma().check("ibv_destroy_cq", cq);
        closed = true;
        if (channel != null) channel.unregister(this);
        device.forget(this);
    }
}
