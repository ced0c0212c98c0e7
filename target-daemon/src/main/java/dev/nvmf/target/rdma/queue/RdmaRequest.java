package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.memory.MediumRegistration;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendWorkRequest;

import java.lang.foreign.MemorySegment;

/**
 * One command context of a queue (kernel rdma.c: {@code nvmet_rdma_rsp} with its {@code nvmet_rdma_cmd}): its
 * receive buffer (SQE and in-capsule data), response buffer, and prebuilt native work requests. A queue keeps twice
 * as many contexts as receives it posts: when a capsule arrives, a <em>different</em> free context's buffer is
 * reposted at once, and this context keeps its receive buffer (SQE and in-capsule data stay valid, no copy) until
 * its response SEND completes. Only then is it reused: a buffer a SEND or RDMA WRITE uses stays untouched until
 * a completion shows the hardware is done with it (thread "two initiators"). On a shared receive queue the context
 * has no receive buffer of its own: it holds the SRQ buffer its capsule arrived in ({@link #attach}) until it is
 * COMPLETED, and posts no receive.
 *
 * <p>{@link #state} says where the context is; only {@link RdmaQueue} changes it, in {@link RdmaQueue#advance} and
 * the completion handlers that feed it.
 */
public final class RdmaRequest extends CompletionInbox.Node implements BufferPool.Waiter {
    final RdmaQueue queue;
    final int index;
    final NvmeRequest nvme;
    /** Its own receive buffer, or null on a shared receive queue. */
    final ReceiveBuffer ownReceive;
    /** The receive buffer its capsule is in: its own, or the SRQ buffer it holds (null while it holds none). */
    ReceiveBuffer receive;
    /** The SQE and the in-capsule data of {@link #receive}. */
    MemorySegment command;
    MemorySegment inCapsuleData;
    final MemorySegment response;
    /** Flyweights over the SQE, its SGL1 and the response CQE, wrapped once: the buffers never move. */
    final SubmissionQueueEntry sqe;
    final SglDescriptor sgl1;
    /** Re-pointed at one entry of a Last Segment list at a time (parse, then each post). */
    private final SglDescriptor listEntry = new SglDescriptor();
    final CompletionQueueEntry cqe;
    final RecvWorkRequest recvWr;
    final ScatterGatherEntry recvSge;
    final SendWorkRequest sendWr;
    final ScatterGatherEntry sendSge;

    RequestState state = RequestState.FREE;
    int receivedLength;
    /** SGL1 as parsed: keyed (RDMA) or in-capsule. */
    boolean keyed;
    boolean inCapsule;
    /** The response is a SEND_WITH_INVALIDATE of {@link #invalidateKey} (a descriptor asked with subtype Fh). */
    boolean invalidate;
    int invalidateKey;
    /**
     * Keyed data: its Keyed SGL Data Block descriptors, read in place where they arrived ({@link #descriptor}):
     * SGL1 itself ({@link #listOffset} -1), or a Last Segment list at {@link #listOffset} in the in-capsule data.
     */
    int descriptorCount;
    int listOffset = -1;
    /** Bytes of data: the descriptors' lengths added up (keyed), or the in-capsule data's length. */
    int sglLength;
    int sglOffset;
    /** Host data READ so far: descriptors whose bytes are in the buffer, and the READs of the part now chained or posted. */
    int descriptorsRead;
    int readsPosted;
    /**
     * Zero copy: the registration of the RAM namespace the data moves straight to or from, with a use held from
     * before the first RDMA until the request is COMPLETED, and the data's offset in it; null: a pool buffer.
     */
    MediumRegistration direct;
    long directOffset;
    /** The data buffer's pool (also while waiting for one) and the buffer, when it holds one. */
    BufferPool pool;
    int bufferIndex = -1;
    /**
     * Work requests of its response chain: one RDMA WRITE per descriptor the data reaches, then the SEND; reserved
     * whole while SENDING.
     */
    int chainLength;
    /**
     * Unsignaled work requests of its chain that the provider took before refusing a later one at bad_wr (the
     * response's WRITEs without their SEND, or a part's READs without its signaled last): the request stays SENDING
     * or READING, holding its buffer and budget, until the last of them completes (they flush in the drain) or the
     * QP's destruction shows the hardware is done. 0 otherwise.
     */
    int unsignaledOnQueue;
    /** Intrusive FIFO link: parked, waiter and repost lists (a context is on at most one at a time). */
    RdmaRequest next;
    /** Link in a buffer pool's FIFO of waiters. */
    private BufferPool.Waiter nextWaiter;

    /** @param recvBuffer its own receive buffer, or null when its capsules come from a shared receive queue */
    RdmaRequest(RdmaQueue queue, int index, MemorySegment recvBuffer, MemorySegment response,
                MemorySegment wrMemory) {
        this.queue = queue;
        this.index = index;
        this.nvme = new NvmeRequest(index);
        this.response = response.asSlice(0, CompletionQueueEntry.SIZE);
        this.sqe = new SubmissionQueueEntry();
        this.sgl1 = new SglDescriptor();
        this.ownReceive = recvBuffer == null ? null : new ReceiveBuffer(-1, recvBuffer, null, null);
        if (ownReceive != null) attach(ownReceive);
        this.cqe = new CompletionQueueEntry().wrap(this.response);
        long o = 0;
        this.recvWr = new RecvWorkRequest(wrMemory.asSlice(o, RecvWorkRequest.SIZE));
        o += RecvWorkRequest.SIZE;
        this.recvSge = new ScatterGatherEntry(wrMemory.asSlice(o, ScatterGatherEntry.SIZE));
        o += ScatterGatherEntry.SIZE;
        this.sendWr = new SendWorkRequest(wrMemory.asSlice(o, SendWorkRequest.SIZE));
        o += SendWorkRequest.SIZE;
        this.sendSge = new ScatterGatherEntry(wrMemory.asSlice(o, ScatterGatherEntry.SIZE));
    }

    /** Its capsule is in {@code b}: the SQE and SGL flyweights point there (allocation-free). */
    void attach(ReceiveBuffer b) {
        receive = b;
        command = b.command;
        inCapsuleData = b.inCapsuleData;
        sqe.wrap(b.command);
        sgl1.wrap(b.command, SubmissionQueueEntry.SGL1);
    }

    /** The SRQ buffer it held goes back (the context is COMPLETED): returns it, or null (own buffer, or none). */
    ReceiveBuffer detachShared() {
        ReceiveBuffer b = receive;
        if (b == null || b == ownReceive) return null;
        receive = null;
        return b;
    }

    /** Bytes of native memory the prebuilt work requests of one context take. */
    static final int WR_MEMORY = RecvWorkRequest.SIZE + 2 * ScatterGatherEntry.SIZE + SendWorkRequest.SIZE;

    public int index() { return index; }

    public RdmaQueue queue() { return queue; }

    public RequestState state() { return state; }

    public NvmeRequest nvme() { return nvme; }

    public boolean holdsBuffer() { return bufferIndex >= 0; }

    /** Whether its data moves straight to or from a RAM namespace (zero copy). */
    public boolean zeroCopy() { return direct != null; }

    @Override
    public void bufferGranted(BufferPool pool, int index) { queue.bufferGranted(this, index); }

    @Override
    public BufferPool.Waiter nextWaiter() { return nextWaiter; }

    @Override
    public void nextWaiter(BufferPool.Waiter next) { nextWaiter = next; }

    /**
     * Keyed descriptor {@code i} of the command (0 to {@link #descriptorCount} - 1): SGL1, or entry {@code i} of the
     * Last Segment list, which stays in this context's receive buffer until the response SEND completes.
     */
    SglDescriptor descriptor(int i) {
        if (listOffset < 0) return sgl1;
        return listEntry.wrap(inCapsuleData, listOffset + (long) i * SglDescriptor.SIZE);
    }

    void clearSgl() {
        keyed = false;
        inCapsule = false;
        invalidate = false;
        invalidateKey = 0;
        descriptorCount = 0;
        listOffset = -1;
        sglLength = 0;
        sglOffset = 0;
        descriptorsRead = 0;
        readsPosted = 0;
    }

    /** The in-capsule data from {@code offset} on (0: all of it); allocation-free while a context's offset repeats. */
    MemorySegment inCapsuleData(int offset) {
        return receive.inCapsuleData(offset);
    }
}
