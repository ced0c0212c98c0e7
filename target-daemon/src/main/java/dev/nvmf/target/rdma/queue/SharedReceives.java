package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.target.rdma.memory.RegisteredRegion;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SharedReceiveQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The shared receive queue of one poller on one device ({@code transport.srq}), with its registered receive buffers:
 * every QP of that poller on that device takes its command capsules from it, instead of each queue posting
 * {@code depth} receives of its own (SPDK rdma.c: one SRQ per poller and device, {@code max_srq_depth}, default
 * {@code SPDK_NVMF_RDMA_DEFAULT_SRQ_DEPTH} 4096; kernel rdma.c {@code nvmet_rdma_init_srq}: {@code srq_size}, default
 * 1024, at least 256, one SRQ per completion vector; both capped by the device's {@code max_srq_wr}).
 *
 * <p>A buffer is on the SRQ, or held by the command context its capsule arrived for (from the receive completion until
 * the context is COMPLETED: the SQE and in-capsule data are read in place), or waits in the repost chain the poller
 * posts once per pass. Nothing is copied. A receive completion names its queue only by QP number: {@link #queueFor}.
 *
 * <p>Flow control stays per queue: the NVMe RDMA transport grants a host as many outstanding commands as its queue
 * size, and each queue still tears down a host that sends more ({@link RdmaQueue}, credits). The SRQ may hold fewer
 * buffers than the queue sizes add up to: when every buffer is taken, a host's SEND gets RNR NAK and is retried
 * (rnr_retry 7 retries forever), never an error; as buffers are reposted, capsules land again (the kernel's
 * {@code srq_size} against its hosts' queue sizes works the same way).
 *
 * <p>Threads: made and its first receives posted on the CM thread, before any QP uses it; reposted on the poller
 * thread only; destroyed with its poller's device once every QP on it is destroyed, its memory released after that.
 */
public final class SharedReceives implements AutoCloseable {
    private final DeviceResources resources;
    private final SharedReceiveQueue srq;
    private final RegisteredRegion region;
    private final Arena workRequestMemory = Arena.ofShared();
    private final ReceiveBuffer[] buffers;
    private final int bufferSize;
    private final QpNumTable<RdmaQueue> queues;
    private ReceiveBuffer pendingHead;
    private ReceiveBuffer pendingTail;
    private int pending;
    private int posted;
    private int failedPosts;

    private SharedReceives(DeviceResources resources, SharedReceiveQueue srq, RegisteredRegion region, int count,
                           int bufferSize, int maxQueues) {
        this.resources = resources;
        this.srq = srq;
        this.region = region;
        this.bufferSize = bufferSize;
        this.queues = new QpNumTable<>(maxQueues, RdmaQueue::qpNum);
        MemorySegment wrs = workRequestMemory.allocate((long) count * (RecvWorkRequest.SIZE + ScatterGatherEntry.SIZE), 8);
        buffers = new ReceiveBuffer[count];
        for (int i = 0; i < count; i++) {
            long o = (long) i * (RecvWorkRequest.SIZE + ScatterGatherEntry.SIZE);
            RecvWorkRequest wr = new RecvWorkRequest(wrs.asSlice(o, RecvWorkRequest.SIZE));
            ScatterGatherEntry sge = new ScatterGatherEntry(wrs.asSlice(o + RecvWorkRequest.SIZE, ScatterGatherEntry.SIZE));
            ReceiveBuffer b = new ReceiveBuffer(i, region.segment().asSlice((long) i * bufferSize, bufferSize), wr, sge);
            sge.set(b.buffer.address(), bufferSize, region.lkey());
            wr.wrId(WrId.of(0, WrId.SHARED_RECV, i)).sgList(sge, 1).next(null);
            buffers[i] = b;
        }
    }

    /**
     * The SRQ of a poller on {@code resources}' device: {@code depth} receives (at most the device's max_srq_wr) of
     * {@code bufferSize} bytes, all posted; {@code maxQueues} QPs may use it. Control path; throws if the device
     * refuses, having given back what it took.
     */
    public static SharedReceives create(DeviceResources resources, int depth, int bufferSize, int maxQueues) {
        int count = Math.min(depth, resources.attributes().maxSrqWr());
        if (count < 1) throw new IllegalStateException(resources.device().name() + " has no shared receive queues");
        SharedReceiveQueue srq = resources.protectionDomain().createSharedReceiveQueue(count, 1);
        RegisteredRegion region;
        try {
            region = resources.slabs().allocate((long) count * bufferSize);
        } catch (RuntimeException e) {
            srq.close();
            throw e;
        }
        SharedReceives s = new SharedReceives(resources, srq, region, count, bufferSize, maxQueues);
        try {
            for (ReceiveBuffer b : s.buffers) s.repost(b);
            int rc = s.flush();
            if (rc != 0) throw new IllegalStateException("ibv_post_srq_recv failed: errno " + rc);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    public SharedReceiveQueue srq() { return srq; }

    /** Receive buffers it has (posted, held by contexts, or waiting to be reposted). */
    public int depth() { return buffers.length; }

    /** Bytes of one receive buffer (the SQE and the largest in-capsule data of the transport's ports). */
    public int bufferSize() { return bufferSize; }

    /** Receives on the SRQ now (poller thread, tests). */
    public int posted() { return posted; }

    /** Registered bytes of its receive buffers. */
    public long registeredBytes() { return region.length(); }

    ReceiveBuffer buffer(int index) { return buffers[index]; }

    /** The queue whose QP has number {@code qpNum}, or null (poller thread). */
    public RdmaQueue queueFor(int qpNum) { return queues.get(qpNum); }

    /** Queues whose QPs use it now. */
    public int queues() { return queues.size(); }

    /** From here the receive completions of {@code queue}'s QP reach it (CM thread, before the accept). */
    void register(RdmaQueue queue) { queues.add(queue.qpNum(), queue); }

    /** Once the queue's QP is destroyed (CM thread). */
    void unregister(RdmaQueue queue) { queues.remove(queue.qpNum(), queue); }

    /**
     * A receive completion of buffer {@code index} (poller thread): the buffer left the SRQ. It goes to {@code queue},
     * the queue of the completion's qp_num; when there is none, or its QP was destroyed (a stale completion), the
     * buffer goes straight back to the SRQ. Allocation-free.
     */
    public void deliver(RdmaQueue queue, int index, int status, int byteLength) {
        ReceiveBuffer b = buffers[index];
        posted--;
        if (queue == null || !queue.takesCompletions()) {
            repost(b);
            return;
        }
        queue.onSharedRecv(b, status, byteLength);
    }

    /** {@code b} goes back to the SRQ with the next {@link #flush} (nothing reads it any more). */
    void repost(ReceiveBuffer b) {
        b.next = null;
        if (pendingTail == null) pendingHead = b; else pendingTail.next = b;
        pendingTail = b;
        pending++;
    }

    /** Whether buffers wait to be reposted. */
    public boolean hasPending() { return pending > 0; }

    /**
     * Posts every buffer waiting to go back, in one chain (ibv_post_srq_recv). Returns 0 or the errno; the buffers
     * after bad_wr stay waiting for the next pass (the SRQ is not in error: a failed post is the provider's).
     */
    public int flush() {
        if (pending == 0) return 0;
        for (ReceiveBuffer b = pendingHead; b != null; b = b.next) b.recvWr.next(b.next == null ? null : b.next.recvWr);
        int rc = srq.postRecv(pendingHead.recvWr);
        int done = rc == 0 ? pending : Math.min(pending, srq.postedBeforeFailure());
        for (int i = 0; i < done; i++) {
            ReceiveBuffer b = pendingHead;
            pendingHead = b.next;
            b.next = null;
        }
        if (pendingHead == null) pendingTail = null;
        pending -= done;
        posted += done;
        if (rc != 0) failedPosts++;
        return rc;
    }

    public int failedPosts() { return failedPosts; }

    /**
     * Destroys the SRQ (after every QP on it is destroyed: ibv_destroy_srq refuses while one is), then gives its
     * buffers' region back and frees the prebuilt receives. If the SRQ cannot be destroyed, the hardware may still
     * write its buffers: they are leaked on purpose (the device's slabs stay registered), as for a QP that could not be
     * destroyed. Control path.
     */
    @Override
    public void close() {
        try {
            srq.close();
        } catch (RuntimeException e) {
            resources.leakMemory();
            throw e;
        }
        resources.slabs().release(region);
        if (workRequestMemory.scope().isAlive()) workRequestMemory.close();
    }
}
