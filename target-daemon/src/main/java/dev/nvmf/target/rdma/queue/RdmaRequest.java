package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendWorkRequest;

import java.lang.foreign.MemorySegment;

/**
 * One command context of a queue (kernel rdma.c: {@code nvmet_rdma_rsp} with its {@code nvmet_rdma_cmd}): its own
 * receive buffer (SQE and in-capsule data), response buffer, and prebuilt native work requests. A queue keeps twice
 * as many contexts as receives it posts: when a capsule arrives, a <em>different</em> free context's buffer is
 * reposted at once, and this context keeps its receive buffer (SQE and in-capsule data stay valid, no copy) until
 * its response SEND completes. Only then is it reused: a buffer a SEND or RDMA WRITE uses stays untouched until
 * a completion shows the hardware is done with it (thread "two initiators").
 *
 * <p>{@link #state} says where the context is; only {@link RdmaQueue} changes it, in {@link RdmaQueue#advance} and
 * the completion handlers that feed it.
 */
public final class RdmaRequest implements BufferPool.Waiter {
    final RdmaQueue queue;
    final int index;
    final NvmeRequest nvme;
    final MemorySegment recvBuffer;
    final MemorySegment command;
    final MemorySegment inCapsuleData;
    final MemorySegment response;
    /** Flyweights over the SQE, its SGL1 and the response CQE, wrapped once: the buffers never move. */
    final SubmissionQueueEntry sqe;
    final SglDescriptor sgl1;
    final CompletionQueueEntry cqe;
    final RecvWorkRequest recvWr;
    final ScatterGatherEntry recvSge;
    final SendWorkRequest dataWr;
    final ScatterGatherEntry dataSge;
    final SendWorkRequest sendWr;
    final ScatterGatherEntry sendSge;

    RequestState state = RequestState.FREE;
    int receivedLength;
    /** SGL1 as parsed: keyed (RDMA) or in-capsule. */
    boolean keyed;
    boolean inCapsule;
    boolean invalidate;
    long remoteAddress;
    int remoteKey;
    int sglLength;
    int sglOffset;
    /** The data buffer's pool (also while waiting for one) and the buffer, when it holds one. */
    BufferPool pool;
    int bufferIndex = -1;
    /** Work requests of its response chain: 2 (RDMA WRITE + SEND) or 1 (SEND); reserved whole while SENDING. */
    int chainLength;
    /** Intrusive FIFO link: parked, waiter and repost lists (a context is on at most one at a time). */
    RdmaRequest next;
    /** Link in a buffer pool's FIFO of waiters. */
    private BufferPool.Waiter nextWaiter;

    RdmaRequest(RdmaQueue queue, int index, MemorySegment recvBuffer, MemorySegment response,
                MemorySegment wrMemory) {
        this.queue = queue;
        this.index = index;
        this.nvme = new NvmeRequest(index);
        this.recvBuffer = recvBuffer;
        this.command = recvBuffer.asSlice(0, SubmissionQueueEntry.SIZE);
        this.inCapsuleData = recvBuffer.asSlice(SubmissionQueueEntry.SIZE);
        this.response = response.asSlice(0, CompletionQueueEntry.SIZE);
        this.sqe = new SubmissionQueueEntry().wrap(command);
        this.sgl1 = new SglDescriptor().wrap(command, SubmissionQueueEntry.SGL1);
        this.cqe = new CompletionQueueEntry().wrap(this.response);
        long o = 0;
        this.recvWr = new RecvWorkRequest(wrMemory.asSlice(o, RecvWorkRequest.SIZE));
        o += RecvWorkRequest.SIZE;
        this.recvSge = new ScatterGatherEntry(wrMemory.asSlice(o, ScatterGatherEntry.SIZE));
        o += ScatterGatherEntry.SIZE;
        this.dataWr = new SendWorkRequest(wrMemory.asSlice(o, SendWorkRequest.SIZE));
        o += SendWorkRequest.SIZE;
        this.dataSge = new ScatterGatherEntry(wrMemory.asSlice(o, ScatterGatherEntry.SIZE));
        o += ScatterGatherEntry.SIZE;
        this.sendWr = new SendWorkRequest(wrMemory.asSlice(o, SendWorkRequest.SIZE));
        o += SendWorkRequest.SIZE;
        this.sendSge = new ScatterGatherEntry(wrMemory.asSlice(o, ScatterGatherEntry.SIZE));
    }

    /** Bytes of native memory the prebuilt work requests of one context take. */
    static final int WR_MEMORY = RecvWorkRequest.SIZE + 3 * ScatterGatherEntry.SIZE + 2 * SendWorkRequest.SIZE;

    public int index() { return index; }

    public RdmaQueue queue() { return queue; }

    public RequestState state() { return state; }

    public NvmeRequest nvme() { return nvme; }

    public boolean holdsBuffer() { return bufferIndex >= 0; }

    @Override
    public void bufferGranted(BufferPool pool, int index) { queue.bufferGranted(this, index); }

    @Override
    public BufferPool.Waiter nextWaiter() { return nextWaiter; }

    @Override
    public void nextWaiter(BufferPool.Waiter next) { nextWaiter = next; }

    void clearSgl() {
        keyed = false;
        inCapsule = false;
        invalidate = false;
        remoteAddress = 0;
        remoteKey = 0;
        sglLength = 0;
        sglOffset = 0;
    }
}
