package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.core.CommandQueue;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.QueueAcceptor;
import dev.nvmf.target.core.QueueTransport;
import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.backend.MemoryMedium;
import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.target.rdma.memory.MediumRegistration;
import dev.nvmf.target.rdma.memory.RegisteredRegion;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WrOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The transport side of one NVMe queue on one RC queue pair (kernel rdma.c: {@code nvmet_rdma_queue}). It owns
 * what the queue is made of, from {@link #open} to {@link #release} (the kernel's {@code nvmet_rdma_alloc_queue} and
 * {@code nvmet_rdma_free_queue}), and the life of every request on it: {@link #advance} is the one function that
 * moves a command context from {@link RequestState} to {@link RequestState}.
 *
 * <p>Threads: {@link #open} and {@link #release} run on the CM thread; {@link #complete}, {@link #requestDisconnect},
 * {@link #requestDrain} and {@link #requestEstablished} on any thread (they hand over through the poller's inbox);
 * everything else on the owning poller thread, without locks.
 *
 * <p>Receives: {@code depth} (= hsqsize + 1) receives are posted at all times; {@code 2 * depth} contexts exist,
 * each with its own receive buffer. When a capsule arrives another free context is reposted right away and the
 * arrived one keeps its buffer (the SQE and any in-capsule data) until its response SEND completes, so nothing is
 * copied and nothing is overwritten while the core or the HCA still reads it. If no context is free (responses
 * still waiting for their SEND completions) the receive is reposted as soon as one is freed; meanwhile the host
 * sees RNR retries (rnr_retry 7), never an error.
 *
 * <p>Credits: a well-behaved host has at most {@code depth} commands without a response (NVMe RDMA, "Queue Size"
 * rules of the RDMA transport). A capsule beyond that broke flow control: this queue is torn down, the daemon and
 * other queues carry on.
 *
 * <p>Shared receive queue ({@code transport.srq}): the queue posts no receives. Its QP takes capsules from the
 * {@link SharedReceives} of its poller and device; the poller hands each receive completion to the queue its qp_num
 * names ({@link #onSharedRecv}), a free context takes the buffer for the command's life and gives it back to the SRQ
 * when COMPLETED. There are {@code depth + sendBudget} contexts, so an arriving capsule always finds one. The credits
 * above are counted the same way. A drain waits for no receive (the SRQ's are not the QP's, and are not flushed with
 * it: kernel verbs.c, ib_drain_qp drains the receive queue only without an SRQ).
 */
public final class RdmaQueue implements QueueTransport {
    private static final System.Logger LOG = System.getLogger(RdmaQueue.class.getName());

    private final QueueParameters params;
    private final QueuePoller poller;
    /** The poller's index: the slot of the transport's {@code PollerCounter}s this queue writes (poller thread). */
    private final int pollerIndex;
    private final RdmaMetrics metrics;
    private final CmId cmId;
    private final int depth;
    private final SendBudget budget;
    /** The RDMA READ/WRITE work requests of the send chain being built (one per SGL descriptor); built in open(). */
    private DataChain dataChain;
    /**
     * The send chain of this pass, posted once at its end ({@link #flushSends}): the requests whose READs or response
     * chain it links ({@link RequestState#READ_CHAINED}, {@link RequestState#SEND_CHAINED}), in chain order, its first
     * and last work request, and how many it has (each holds a send-queue slot already).
     */
    private final RequestFifo chained = new RequestFifo();
    private SendWorkRequest chainHead;
    private SendWorkRequest chainTail;
    private int chainWorkRequests;
    private boolean sendScheduled;

    // What open() took and release() gives back (null / -1 until taken)
    private QueueDevice device;
    private DeviceResources resources;
    private boolean cqReserved;
    /** CQ entries reserved for it: every send WR, and every receive unless they come from the SRQ. */
    private int cqEntries;
    /** The shared receive queue its capsules come from, or null: receives of its own. */
    private SharedReceives shared;
    /** Its QP number is in {@link #shared}'s table. */
    private boolean sharing;
    private int slot = -1;
    private RegisteredRegion recvRegion;
    private RegisteredRegion responseRegion;
    /**
     * The native memory of the contexts' prebuilt work requests (plain memory, not registered: providers read it
     * during the post call). Closed by {@link #release}: a daemon whose I/O path allocates nothing may not collect
     * for hours while hosts connect and disconnect, so nothing per queue is left to the collector.
     */
    private Arena workRequestMemory;
    private QueuePair qp;
    /** The QP's number: what its completions carry (a completion of an earlier QP in the same slot has another). */
    private int qpNum = -1;
    private CommandQueue commandQueue;
    private RdmaRequest[] contexts = new RdmaRequest[0];

    private volatile QueueState state = QueueState.CONNECTING;
    /**
     * The QP was destroyed (CM thread): the hardware touches none of the queue's memory any more, and completions of
     * it that are still polled are ignored. Set before a drain ends by itself only when it was bounded
     * ({@link #destroyQueuePair}); {@link #release} destroys the QP otherwise.
     */
    private volatile boolean queuePairDestroyed;
    /** rdma_destroy_qp failed: the hardware may still use the queue's memory, which is leaked on purpose. */
    private boolean queuePairLeaked;
    /** The poller has taken the QP's destruction into account ({@link #onQueuePairDestroyed}). */
    private boolean hardwareGone;
    /** Contexts in each {@link RequestState}, kept in step by {@link #enter}: every count below is read here. */
    private final int[] inState = new int[RequestState.ALL.length];
    private RdmaRequest[] freeStack = new RdmaRequest[0];
    private int freeCount;
    private final RequestFifo parked = new RequestFifo();
    private final RequestFifo readWaiters = new RequestFifo();
    private final RequestFifo sendWaiters = new RequestFifo();
    private final RequestFifo reposts = new RequestFifo();
    private boolean repostScheduled;
    private long received;
    private long responsesPosted;
    private volatile String closeReason;
    /** The address the host reached (the CM id's source address), read once on the CM thread at open. */
    private final InetAddress localAddress;

    private RdmaQueue(QueueParameters params, CmId cmId, QueuePoller poller, RdmaMetrics metrics) {
        this.params = params;
        this.cmId = cmId;
        this.localAddress = localAddressOf(cmId);
        this.poller = poller;
        this.pollerIndex = poller.index();
        this.metrics = metrics;
        this.depth = params.depth();
        this.budget = new SendBudget(params.sendBudget(), params.readDepth());
    }

    // ------------------------------------------------------------------------------------------------------------
    // Open and release (CM thread)

    /**
     * Builds the queue for an accepted connect request (kernel rdma.c, {@code nvmet_rdma_alloc_queue}): a CQ
     * reservation and a slot on {@code poller}, the receive and response regions, the QP, the command contexts,
     * the core's queue; publishes it to the poller and posts {@code depth} receives. The caller accepts next.
     * Throws if any step fails, having given back what the earlier steps took.
     */
    public static RdmaQueue open(QueueParameters params, CmId cmId, QueuePoller poller, DeviceResources resources,
                                 QueueAcceptor acceptor, RdmaMetrics metrics) {
        RdmaQueue q = new RdmaQueue(params, cmId, poller, metrics);
        try {
            q.allocate(resources, acceptor);
            return q;
        } catch (RuntimeException e) {
            q.release();
            throw e;
        }
    }

    private void allocate(DeviceResources resources, QueueAcceptor acceptor) {
        this.resources = resources;
        device = poller.deviceFor(resources);
        shared = device.sharedReceives();
        cqEntries = shared == null ? params.cqEntries() : params.cqEntriesSharing();
        if (!device.reserveCq(cqEntries)) {
            throw new IllegalStateException("the CQ of poller " + poller.index() + " on "
                    + resources.device().name() + " has no room for " + cqEntries + " more entries");
        }
        cqReserved = true;
        slot = poller.allocateSlot();
        if (slot < 0) throw new IllegalStateException("poller " + poller.index() + " has no free queue slot");
        int count = shared == null ? params.contextCount() : params.contextCountSharing();
        int recvSize = params.recvBufferSize();
        if (shared == null) recvRegion = resources.slabs().allocate((long) count * recvSize);
        responseRegion = resources.slabs().allocate((long) count * QueueParameters.RESPONSE_SLOT);
        qp = cmId.createQueuePair(new QpInitAttributes(resources.protectionDomain(), device.cq(), device.cq(),
                new QpCapabilities(params.sendBudget(), shared == null ? depth : 0, 1, shared == null ? 1 : 0, 0),
                false, shared == null ? null : shared.srq()));
        qpNum = qp.qpNum();
        // Shared: built here on the CM thread, patched and posted on the poller thread.
        workRequestMemory = Arena.ofShared();
        MemorySegment wrs = workRequestMemory.allocate((long) count * RdmaRequest.WR_MEMORY, 8);
        dataChain = new DataChain(workRequestMemory.allocate(DataChain.memory(params.sendBudget()), 8),
                params.sendBudget());
        contexts = new RdmaRequest[count];
        freeStack = new RdmaRequest[count];
        for (int i = 0; i < count; i++) {
            RdmaRequest r = new RdmaRequest(this, i,
                    shared != null ? null : recvRegion.segment().asSlice((long) i * recvSize, recvSize),
                    responseRegion.segment().asSlice((long) i * QueueParameters.RESPONSE_SLOT,
                            QueueParameters.RESPONSE_SLOT),
                    wrs.asSlice((long) i * RdmaRequest.WR_MEMORY, RdmaRequest.WR_MEMORY));
            prebuild(r, recvSize);
            contexts[i] = r;
        }
        inState[RequestState.FREE.ordinal()] = count;
        for (int i = count - 1; i >= 0; i--) freeStack[freeCount++] = contexts[i];
        commandQueue = acceptor.openQueue(params.portId(), params.qid(), depth, this);
        if (commandQueue == null) throw new IllegalStateException("the core refused the queue");
        poller.publish(this);
        if (shared != null) {
            shared.register(this); // its capsules may land from the accept on
            sharing = true;
            return;
        }
        int rc = postInitialReceives();
        if (rc != 0) throw new IllegalStateException("ibv_post_recv failed: errno " + rc);
    }

    private void prebuild(RdmaRequest r, int recvSize) {
        if (r.ownReceive != null) {
            r.recvSge.set(r.ownReceive.buffer.address(), recvSize, recvRegion.lkey());
            r.recvWr.wrId(WrId.of(slot, WrId.RECV, r.index)).sgList(r.recvSge, 1).next(null);
        }
        r.sendSge.set(r.response.address(), CompletionQueueEntry.SIZE, responseRegion.lkey());
        r.sendWr.wrId(WrId.of(slot, WrId.SEND, r.index)).sgList(r.sendSge, 1).next(null)
                .opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED);
    }

    /** Posts {@code depth} receives in one chain, before the accept. */
    private int postInitialReceives() {
        for (int i = 0; i < depth; i++) {
            RdmaRequest r = popFree();
            enter(r, RequestState.RECV_PENDING);
            reposts.add(r);
        }
        return postReceives();
    }

    /**
     * Gives back everything {@link #open} took, in the order the hardware needs (kernel rdma.c,
     * {@code nvmet_rdma_free_queue}): the QP is destroyed first, so nothing can touch the queue's memory any more;
     * then the regions go back to their slabs, the CQ entries and the slot to the poller, and the core's queue is
     * closed. Called once the queue drained (or when open failed part-way); the CM id is the caller's.
     */
    public void release() {
        destroyQueuePair();
        if (sharing) {
            // Its QP is gone (or leaked, and never posted to again): a completion that still names it finds no queue,
            // and its buffer goes straight back to the SRQ. The SRQ itself lives on with the poller's device.
            shared.unregister(this);
            sharing = false;
        }
        if (device != null) {
            DeviceResources res = device.resources();
            if (queuePairLeaked) {
                // The hardware may still write them: never hand them to another queue (kernel rdma.c frees a
                // queue's buffers only after ib_destroy_qp returned).
                LOG.log(System.Logger.Level.ERROR, "queue qid {0}: its QP could not be destroyed; its {1} bytes of"
                        + " registered memory are leaked on purpose", params.qid(),
                        (recvRegion == null ? 0 : recvRegion.length())
                                + (responseRegion == null ? 0 : responseRegion.length()));
            } else {
                if (recvRegion != null) res.slabs().release(recvRegion);
                if (responseRegion != null) res.slabs().release(responseRegion);
            }
            if (cqReserved) device.releaseCq(cqEntries);
        }
        if (slot >= 0) poller.freeSlot(slot);
        // Nothing posts any more (the QP is gone, or leaked and never posted to again): the prebuilt work requests
        // can go.
        if (workRequestMemory != null) workRequestMemory.close();
        workRequestMemory = null;
        recvRegion = responseRegion = null;
        cqReserved = false;
        slot = -1;
        if (commandQueue != null) {
            try {
                commandQueue.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing core queue: " + e.getMessage());
            }
        }
    }

    /**
     * Destroys the QP (CM thread), which stops the hardware: after it returns nothing of the queue's memory is read or
     * written by the HCA (rdma_destroy_qp(3); IBA chapter 11, Destroy QP). Once only; {@link #release} calls it too. The
     * poller must no longer post to the QP: the queue is no longer LIVE, so it does not.
     */
    public void destroyQueuePair() {
        if (qp == null || queuePairDestroyed || queuePairLeaked) return;
        try {
            cmId.destroyQueuePair();
            queuePairDestroyed = true;
        } catch (RuntimeException e) {
            queuePairLeaked = true;
            LOG.log(System.Logger.Level.ERROR, "queue qid " + params.qid() + ": rdma_destroy_qp failed: " + e.getMessage());
        }
    }

    /** Whether the QP is destroyed (any thread): completions of it still polled are stale. */
    public boolean queuePairDestroyed() { return queuePairDestroyed; }

    /**
     * The QP was destroyed before the drain ended (the drain timed out, or the device died and completes nothing, not
     * even flushes): no work request of the queue will ever complete, and none uses the queue's memory any more.
     * Every context the hardware held ends as if it had been flushed; requests in the core are still waited for
     * (they do not depend on the device), then the queue is drained. Poller thread, after {@link #destroyQueuePair}.
     */
    public void onQueuePairDestroyed() {
        if (hardwareGone || (!queuePairDestroyed && !queuePairLeaked)) return;
        hardwareGone = true;
        if (state == QueueState.LIVE || state == QueueState.CONNECTING) startDrain("queue pair destroyed", true);
        for (RdmaRequest r : contexts) {
            switch (r.state) {
                case RECV_POSTED -> pushFree(r);
                case READING -> {
                    budget.releaseReads(r.readsPosted);
                    r.readsPosted = 0;
                    r.unsignaledOnQueue = 0;
                    enter(r, RequestState.COMPLETED);
                    advance(r);
                }
                case SENDING -> {
                    r.unsignaledOnQueue = 0;
                    budget.release(r.chainLength);
                    enter(r, RequestState.COMPLETED);
                    advance(r);
                }
                // Only if a failure lost it from its send chain (the drain ends the chained ones): never posted.
                case READ_CHAINED, SEND_CHAINED -> {
                    if (r.state == RequestState.READ_CHAINED) budget.releaseReads(r.readsPosted);
                    else budget.release(r.chainLength);
                    r.readsPosted = 0;
                    enter(r, RequestState.COMPLETED);
                    advance(r);
                }
                default -> { }
            }
        }
        checkDrained();
    }

    /** Completions of this queue are handed to it (poller thread): not once its QP was destroyed. */
    public boolean takesCompletions() { return !hardwareGone; }

    // ------------------------------------------------------------------------------------------------------------
    // The request's life (poller thread)

    /**
     * Moves {@code r} as far as it can go, one state at a time, until it waits for something: a completion, the
     * core, a buffer, budget, or the queue's establishment (SPDK rdma.c, {@code nvmf_rdma_request_process}). Every
     * step of a request's life is a case here. Besides, only the handlers of what the request waits for (its
     * completions, the core's answer, a granted buffer) and the receive bookkeeping set a state, each recording
     * what happened before it calls this; all of them write it through {@link #enter}.
     */
    void advance(RdmaRequest r) {
        RequestState before;
        do {
            before = r.state;
            switch (before) {
                case NEW -> {
                    if (state == QueueState.CONNECTING) {
                        // The host may send before we see ESTABLISHED (thread "posting send requests in RTR"):
                        // keep the capsule, in order, and run it once the queue is established.
                        parked.add(r);
                        enter(r, RequestState.PARKED);
                        metrics.earlyCapsules.increment();
                    } else if (state != QueueState.LIVE) {
                        enter(r, RequestState.COMPLETED);
                    } else {
                        begin(r);
                    }
                }
                case PARKED -> {
                    // Reached only once taken off the parked list, when the queue is no longer CONNECTING.
                    if (state != QueueState.CONNECTING) enter(r, RequestState.NEW);
                }
                case NEED_BUFFER -> {
                    // Zero copy needs no buffer: the data moves straight to or from the namespace's memory.
                    if (r.direct == null && r.bufferIndex < 0 && !acquireBuffer(r)) break; // waits in its pool's FIFO
                    if (state != QueueState.LIVE) {
                        enter(r, RequestState.COMPLETED); // granted while the queue drains: nothing more is posted
                    } else if (r.nvme.dataDirection() == NvmeRequest.DIRECTION_HOST_TO_CONTROLLER) {
                        if (!readWaiters.isEmpty() || !budget.fitsRead()) metrics.sendBudgetWaits.increment();
                        readWaiters.add(r);
                        enter(r, RequestState.READ_PENDING);
                    } else {
                        r.nvme.data(dataSegment(r), r.sglLength);
                        enter(r, RequestState.READY_TO_EXECUTE);
                    }
                }
                case READ_PENDING -> {
                    if (readWaiters.peek() != r || !budget.fitsRead()) break; // strict FIFO
                    readWaiters.poll();
                    chainRead(r);
                }
                case READY_TO_EXECUTE -> {
                    if (state != QueueState.LIVE) {
                        enter(r, RequestState.COMPLETED); // begin() accepted it but the core never saw its data
                    } else {
                        enter(r, RequestState.EXECUTING);
                        try {
                            commandQueue.execute(r.nvme);
                        } catch (RuntimeException e) {
                            coreFailed(r, "execute", e);
                        }
                    }
                }
                case EXECUTED -> {
                    if (state != QueueState.LIVE) {
                        enter(r, RequestState.COMPLETED); // the host is gone: no response
                    } else {
                        r.chainLength = 1 + (sendsData(r) ? DataChain.writesFor(r, dataToSend(r)) : 0);
                        if (!sendWaiters.isEmpty() || !budget.fits(r.chainLength)) {
                            metrics.sendBudgetWaits.increment();
                        }
                        sendWaiters.add(r);
                        enter(r, RequestState.SEND_PENDING);
                    }
                }
                case SEND_PENDING -> {
                    if (sendWaiters.peek() != r || !budget.fits(r.chainLength)) break; // strict FIFO
                    sendWaiters.poll();
                    chainResponse(r);
                }
                case COMPLETED -> {
                    releaseBuffer(r);
                    releaseSharedReceive(r);
                    // A receive is owed while fewer than depth are posted or about to be: this context pays it.
                    if (shared == null && (state == QueueState.LIVE || state == QueueState.CONNECTING)) {
                        if (owedReceives() > 0) scheduleRepost(r); else pushFree(r);
                    } else {
                        pushFree(r);
                    }
                }
                // Each waits for an event: the chain's post, a completion, the core.
                case FREE, RECV_PENDING, RECV_POSTED, READ_CHAINED, READING, EXECUTING, SEND_CHAINED, SENDING -> { }
            }
        } while (r.state != before);
    }

    /** Moves {@code r} to {@code next}: the only place a state is written, so the counts stay exact. */
    private void enter(RdmaRequest r, RequestState next) {
        inState[r.state.ordinal()]--;
        inState[next.ordinal()]++;
        r.state = next;
    }

    /** NEW, queue LIVE: the SGL is parsed and the core looks at the command. */
    private void begin(RdmaRequest r) {
        NvmeRequest n = r.nvme;
        n.bind(r.command, r.response);
        n.start(poller.passClock());
        int icd = Math.max(0, r.receivedLength - SubmissionQueueEntry.SIZE);
        int sglStatus = r.receivedLength < SubmissionQueueEntry.SIZE ? Status.INVALID_FIELD
                : CommandSgl.parse(r, icd, params.maxIoSize(), maxDescriptors());
        if (sglStatus != 0) n.transportStatus(sglStatus);
        enter(r, RequestState.EXECUTING); // from here the core holds it
        boolean begun;
        try {
            begun = commandQueue.begin(n);
        } catch (RuntimeException e) {
            coreFailed(r, "begin", e);
            return;
        }
        if (!begun) return; // the core completed it: complete() is on its way
        int direction = n.dataDirection();
        if (direction == NvmeRequest.DIRECTION_NONE || r.sglLength == 0) {
            n.data(MemorySegment.NULL, 0);
            enter(r, RequestState.READY_TO_EXECUTE);
        } else if (r.inCapsule) {
            if (direction == NvmeRequest.DIRECTION_HOST_TO_CONTROLLER) {
                metrics.inCapsuleCommands.increment(pollerIndex);
                n.data(r.inCapsuleData(r.sglOffset), r.sglLength);
            } else {
                n.data(MemorySegment.NULL, 0); // cannot happen: parse() refuses in-capsule data for reads
            }
            enter(r, RequestState.READY_TO_EXECUTE);
        } else {
            takeMedium(r);
            enter(r, RequestState.NEED_BUFFER);
        }
    }

    /**
     * Zero copy: a Read or Write of a RAM namespace registered on this queue's device, whose SGL describes exactly its
     * blocks, moves them straight between the host and the namespace's memory at the command's offset: the core
     * checked the range against the namespace's size, and the registration checks it again against the memory
     * (bounds are checked before anything is posted). Takes a use of the registration, held until COMPLETED. Any
     * other case keeps the buffered path, as do namespaces whose registration is not (yet) made.
     */
    private void takeMedium(RdmaRequest r) {
        MemoryMedium medium = r.nvme.medium();
        if (medium == null || r.sglLength != r.nvme.mediumLength()) return;
        MediumRegistration reg = device.resources().registrationFor(medium);
        long offset = r.nvme.mediumOffset();
        if (reg == null || !reg.covers(offset, r.sglLength) || !reg.acquire()) return;
        r.direct = reg;
        r.directOffset = offset;
        metrics.zeroCopyCommands.increment(pollerIndex);
    }

    /** What the core reads or writes the data through: the pool buffer, or the namespace itself (zero copy). */
    private static MemorySegment dataSegment(RdmaRequest r) {
        return r.direct != null ? r.direct.medium().segment() : r.pool.buffer(r.bufferIndex);
    }

    /** The native address the request's RDMA moves its data to or from (registered: {@link #dataLkey}). */
    private static long dataAddress(RdmaRequest r) {
        return r.direct != null ? r.direct.address() + r.directOffset : r.pool.buffer(r.bufferIndex).address();
    }

    private static int dataLkey(RdmaRequest r) {
        return r.direct != null ? r.direct.lkey() : r.pool.lkey();
    }

    /**
     * The core threw from {@code begin} or {@code execute}: it will not complete {@code r} (the queue drains from here,
     * so the context gets no other command, and a late complete() finds it no longer EXECUTING). The request ends
     * without a response and the queue fails; its controller is fatal (the host resets and retries).
     */
    private void coreFailed(RdmaRequest r, String call, RuntimeException e) {
        enter(r, RequestState.COMPLETED);
        fail("the core's " + call + "() failed", e);
    }

    /**
     * A failure of this queue that is not the hardware's (an exception while handling its completion or command):
     * logged with its stack, the queue drains and its controller is fatal (CSTS.CFS: the host resets). Contains the
     * failure: nothing of it reaches the poller's other queues. Poller thread.
     */
    public void fail(String what, RuntimeException e) {
        LOG.log(System.Logger.Level.ERROR, "queue qid " + params.qid() + " from " + params.peer() + ": " + what
                + "; closing the queue", e);
        String reason = what + ": " + e;
        try {
            startDrain(reason, true);
        } catch (RuntimeException again) {
            LOG.log(System.Logger.Level.ERROR, "queue qid " + params.qid() + ": the drain failed too", again);
        }
        try {
            if (commandQueue != null) commandQueue.transportFailed(reason);
        } catch (RuntimeException again) {
            LOG.log(System.Logger.Level.WARNING, "queue qid " + params.qid() + ": telling the core failed", again);
        }
    }

    /** A buffer of the pool for {@code r}'s transfer, or false: then {@code r} waits in the pool's FIFO. */
    private boolean acquireBuffer(RdmaRequest r) {
        if (r.pool != null) return false; // already waiting
        BufferPool pool = device.poolFor(r.sglLength);
        r.pool = pool;
        int b = pool.acquire(r);
        if (b < 0) {
            metrics.bufferWaits.increment();
            return false;
        }
        r.bufferIndex = b;
        return true;
    }

    /** A buffer waiter reached the head of its pool's FIFO and got buffer {@code index}. */
    void bufferGranted(RdmaRequest r, int index) {
        r.bufferIndex = index;
        advance(r);
    }

    /**
     * Whether the queue may post at all: not once it left LIVE (receives also while CONNECTING). A QP in the error
     * state accepts posts, but rxe (Linux 6.1) never completes a send or receive posted then, so such a post would
     * keep the drain from ending; on mlx5 it flushes. Every post checks this, whatever the path that led to it (a
     * buffer granted by another queue's release, a waiter resumed).
     */
    private boolean mayPost(boolean receive) {
        QueueState s = state;
        return s == QueueState.LIVE || (receive && s == QueueState.CONNECTING);
    }

    /**
     * Keyed descriptors a command may carry on this queue: MSDBD, or fewer when the send queue is shorter than a
     * response chain of that many WRITEs and its SEND (a tiny queue on a device with a small max_qp_wr).
     */
    private int maxDescriptors() {
        return Math.min(SglDescriptor.MAX_DATA_DESCRIPTORS, budget.capacity() - 1);
    }

    /**
     * Chains the READs of {@code r}'s next descriptors, one per descriptor, as many as READ credits and send-queue
     * slots allow now (at least one: the caller checked {@code fitsRead}), which it holds from here; only the last is
     * signaled. A request with more descriptors than that comes back to READ_PENDING for the rest when this part
     * completes.
     */
    private void chainRead(RdmaRequest r) {
        if (!mayPost(false)) {
            enter(r, RequestState.COMPLETED); // begin() accepted it, execute() never ran: advance() goes on
            return;
        }
        int count = budget.readsFitting(r.descriptorCount - r.descriptorsRead);
        budget.reserveReads(count);
        r.readsPosted = count;
        r.unsignaledOnQueue = 0;
        enter(r, RequestState.READ_CHAINED);
        SendWorkRequest first = dataChain.reads(r, slot, dataAddress(r), dataLkey(r), count);
        addToChain(r, first, dataChain.last(), count);
    }

    /** Bytes of a read command's data that go back to the host: what the core produced, at most what the SGL holds. */
    private static int dataToSend(RdmaRequest r) {
        return Math.min(r.nvme.dataLength(), r.sglLength);
    }

    private boolean sendsData(RdmaRequest r) {
        NvmeRequest n = r.nvme;
        return n.dataDirection() == NvmeRequest.DIRECTION_CONTROLLER_TO_HOST && (r.bufferIndex >= 0 || r.direct != null)
                && n.dataLength() > 0 && r.cqe.status() == Status.SUCCESS;
    }

    /**
     * Chains the response, with the data: one RDMA WRITE per descriptor the data reaches (unsignaled), then SEND
     * (signaled). RC ordering makes the SEND's completion imply the WRITEs' (IBA chapter 10, work request ordering);
     * the buffer, the response and their lkeys stay untouched from here until then.
     */
    private void chainResponse(RdmaRequest r) {
        if (!mayPost(false)) {
            enter(r, RequestState.COMPLETED); // the host is gone: no response; advance() goes on
            return;
        }
        int slots = r.chainLength;
        r.unsignaledOnQueue = 0;
        budget.reserve(slots);
        enter(r, RequestState.SEND_CHAINED);
        responsesPosted++;
        SendWorkRequest send = r.sendWr;
        if (r.invalidate && params.remoteInvalidation()) {
            send.opcode(WrOpcode.SEND_WITH_INV).invalidateRkey(r.invalidateKey);
            metrics.remoteInvalidations.increment(pollerIndex);
        } else {
            send.opcode(WrOpcode.SEND).invalidateRkey(0);
        }
        SendWorkRequest first = send;
        if (slots > 1) {
            int length = dataToSend(r);
            if (r.direct == null) {
                MemorySegment buffer = r.pool.buffer(r.bufferIndex);
                MemorySegment data = r.nvme.data();
                if (data.address() != buffer.address()) {
                    // The core answered from its own memory: copy into the registered buffer.
                    MemorySegment.copy(data, 0, buffer, 0, length);
                }
            }
            // Zero copy: the WRITEs read the namespace's memory where the blocks are.
            first = dataChain.writes(r, slot, dataAddress(r), dataLkey(r), length, send);
            metrics.rdmaWrites.add(pollerIndex, slots - 1);
        }
        addToChain(r, first, send, slots);
    }

    /**
     * Links {@code r}'s work requests, {@code first} to {@code last} ({@code count} of them, their send-queue slots
     * reserved), to the end of the queue's send chain, and has the poller post it at the end of its pass.
     */
    private void addToChain(RdmaRequest r, SendWorkRequest first, SendWorkRequest last, int count) {
        last.next(null);
        if (chainTail == null) chainHead = first; else chainTail.next(first);
        chainTail = last;
        chainWorkRequests += count;
        chained.add(r);
        if (!sendScheduled) {
            sendScheduled = true;
            poller.scheduleSend(this);
        }
    }

    /**
     * Posts the send chain this pass built, in one ibv_post_send (the poller calls it once per pass, after the
     * receives): the READs and response chains of every request that got its budget in the pass, in the order they
     * got it. A request then waits for its signaled completion (READING, SENDING). A failed post (ibv_post_send(3):
     * the work requests before bad_wr are on the queue, the rest are not) is taken request by request, as for one:
     * a request whose work requests were all posted completes like any other; one none of whose were ends here, its
     * budget and buffer back; one cut inside its chain keeps its buffer and the slots of what was posted until the
     * last of those completes (they flush in the drain) or the QP is destroyed. The failure itself is fatal for the
     * controller, once.
     */
    public void flushSends() {
        sendScheduled = false;
        if (chained.isEmpty()) return;
        if (!mayPost(false)) {
            abandonChain(); // the drain ended it already; nothing is posted once the queue left LIVE
            return;
        }
        int total = chainWorkRequests;
        poller.verbsCalls().postSend();
        int rc = qp.postSend(chainHead);
        int posted = rc == 0 ? total : Math.min(total, qp.postedBeforeFailure());
        RdmaRequest first = chained.takeAll();
        chainHead = chainTail = null;
        chainWorkRequests = 0;
        dataChain.reset(); // the provider keeps nothing of the work requests once the call returned
        // What the post did to each request, in chain order. Nothing here advances a request, so the requests stay
        // linked as they were chained.
        int offset = 0;
        for (RdmaRequest r = first; r != null; r = r.next) {
            int length = r.state == RequestState.READ_CHAINED ? r.readsPosted : r.chainLength;
            int mine = Math.max(0, Math.min(length, posted - offset));
            offset += length;
            if (r.state == RequestState.READ_CHAINED) readsPosted(r, mine, length); else responsePosted(r, mine, length);
        }
        if (rc == 0) return;
        LOG.log(System.Logger.Level.ERROR, "queue {0} qid {1}: ibv_post_send of a chain of {2} work requests failed"
                + " with errno {3} after {4} of them", slot, params.qid(), total, rc, posted);
        // The requests none of whose work requests was posted end now; ending one may hand its buffer to a waiter,
        // which chains anew (the drain below ends that chain).
        for (RdmaRequest r = first; r != null; ) {
            RdmaRequest next = r.next;
            if (r.state == RequestState.COMPLETED) advance(r);
            r = next;
        }
        postFailedFatal("post_send failed (errno " + rc + ")");
    }

    /** {@code posted} of the {@code length} READs of {@code r}'s part went on the queue (all but when a post failed). */
    private void readsPosted(RdmaRequest r, int posted, int length) {
        metrics.rdmaReads.add(pollerIndex, posted);
        metrics.sendWorkRequestsPosted.add(pollerIndex, posted);
        if (posted == length) {
            metrics.signaledWorkRequests.increment(pollerIndex);
            enter(r, RequestState.READING); // after a failed post too, if bad_wr was past it: it completes as ever
        } else if (posted == 0) {
            budget.releaseReads(length);
            r.readsPosted = 0;
            enter(r, RequestState.COMPLETED); // begin() accepted it, execute() never ran
        } else {
            // The unsignaled READs before bad_wr are on the queue and may still write the buffer; the signaled one is
            // not. Their credits and the buffer stay taken until the last of them comes back (flushed in the drain)
            // or the QP is destroyed (ibv_post_send(3), bad_wr).
            budget.releaseReads(length - posted);
            r.readsPosted = posted;
            r.unsignaledOnQueue = posted;
            enter(r, RequestState.READING);
        }
    }

    /** {@code posted} of the {@code length} work requests of {@code r}'s response chain went on the queue. */
    private void responsePosted(RdmaRequest r, int posted, int length) {
        metrics.sendWorkRequestsPosted.add(pollerIndex, posted);
        if (posted == length) {
            metrics.signaledWorkRequests.increment(pollerIndex);
            metrics.responsesSent.increment(pollerIndex);
            enter(r, RequestState.SENDING);
        } else if (posted == 0) {
            budget.release(length); // nothing of the chain is on the queue: its budget and buffer can go back
            enter(r, RequestState.COMPLETED);
        } else {
            // WRITEs are on the queue and may still read the buffer; the SEND is not. Nothing is released before the
            // last of them completes (they flush in the drain) or the QP's destruction (ibv_post_send(3), bad_wr).
            r.unsignaledOnQueue = posted;
            enter(r, RequestState.SENDING);
        }
    }

    /**
     * The queue leaves LIVE with a send chain not yet posted: nothing of it is on the hardware, so each of its requests
     * ends now, its budget and buffer back, without a response (as a request still waiting for its budget does).
     */
    private void abandonChain() {
        RdmaRequest r = chained.takeAll();
        chainHead = chainTail = null;
        chainWorkRequests = 0;
        dataChain.reset();
        while (r != null) {
            RdmaRequest next = r.next;
            if (r.state == RequestState.READ_CHAINED) {
                budget.releaseReads(r.readsPosted);
                r.readsPosted = 0;
            } else {
                budget.release(r.chainLength);
            }
            abandon(r);
            r = next;
        }
    }

    /** A post failed: the queue drains and its controller is failed (CSTS.CFS). */
    private void postFailedFatal(String reason) {
        startDrain(reason, true);
        if (commandQueue != null) commandQueue.transportFailed(reason);
    }

    private void releaseBuffer(RdmaRequest r) {
        MediumRegistration direct = r.direct;
        if (direct != null) {
            r.direct = null;
            // The device is done with the namespace's memory (completion, flush or QP destroyed). If the QP could not
            // be destroyed it may not be: the use is kept, so the memory is never deregistered nor freed.
            if (!queuePairLeaked) direct.release();
        }
        BufferPool pool = r.pool;
        r.pool = null;
        if (r.bufferIndex >= 0) {
            int index = r.bufferIndex;
            r.bufferIndex = -1;
            pool.release(index); // may grant it to a waiter at once
        }
    }

    /** Resumes waiters in FIFO order while budget allows: responses first (they free resources), then READs. */
    private void resumeWaiters() {
        if (state != QueueState.LIVE) return;
        RdmaRequest w;
        while ((w = sendWaiters.peek()) != null) {
            advance(w);
            if (sendWaiters.peek() == w) return; // the head still waits: nobody overtakes it
        }
        while ((w = readWaiters.peek()) != null) {
            advance(w);
            if (readWaiters.peek() == w) return;
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Completions (poller thread)

    /** A receive completed: a command capsule (or a flush). */
    public void onRecv(int index, int status, int byteLength) {
        RdmaRequest r = contexts[index];
        if (status != WcStatus.SUCCESS) {
            pushFree(r);
            onFailedCompletion(status, "RECV");
            checkDrained();
            return;
        }
        if (state == QueueState.DRAINING || state == QueueState.CLOSED) {
            pushFree(r);
            checkDrained();
            return;
        }
        metrics.commandsReceived.increment(pollerIndex);
        if (++received - responsesPosted > depth) {
            // The host sent more capsules than the depth it was granted: a protocol error for this queue only.
            metrics.creditOverruns.increment();
            pushFree(r);
            startDrain("host exceeded its " + depth + " credits", true);
            return;
        }
        r.receivedLength = byteLength;
        enter(r, RequestState.NEW);
        // Repost right away, with another context's buffer: this one keeps its capsule.
        if (freeCount > 0) scheduleRepost(popFree());
        advance(r);
    }

    /** The response SEND of a context completed (success or flush). */
    public void onSendComplete(int index, int status) {
        RdmaRequest r = contexts[index];
        budget.release(r.chainLength);
        enter(r, RequestState.COMPLETED);
        advance(r);
        afterSendQueueCompletion(status, "SEND");
    }

    /** The signaled RDMA READ that ends a part of a request's READs (host data for a write) completed. */
    public void onReadComplete(int index, int status) {
        RdmaRequest r = contexts[index];
        budget.releaseReads(r.readsPosted);
        r.descriptorsRead += r.readsPosted;
        r.readsPosted = 0;
        if (status == WcStatus.SUCCESS && r.descriptorsRead < r.descriptorCount) {
            // More descriptors than READ credits: the rest wait, in order, for credits again.
            if (state == QueueState.LIVE) {
                readWaiters.add(r);
                enter(r, RequestState.READ_PENDING);
            } else {
                enter(r, RequestState.COMPLETED);
            }
        } else if (status == WcStatus.SUCCESS) {
            r.nvme.data(dataSegment(r), r.sglLength);
            enter(r, RequestState.READY_TO_EXECUTE);
        } else {
            enter(r, RequestState.COMPLETED); // begin() accepted it but execute() never ran: the core holds nothing
        }
        advance(r);
        afterSendQueueCompletion(status, "RDMA_READ");
    }

    /** A send-queue completion moved its request: it failed the queue, or its budget may let waiters go. */
    private void afterSendQueueCompletion(int status, String what) {
        if (status != WcStatus.SUCCESS) onFailedCompletion(status, what); else resumeWaiters();
        checkDrained();
    }

    /** An unsignaled RDMA WRITE produced a completion: only errors and flushes do. */
    public void onWriteComplete(int index, int status) {
        RdmaRequest r = contexts[index];
        if (r.state == RequestState.SENDING && r.unsignaledOnQueue > 0 && --r.unsignaledOnQueue == 0) {
            // The last WR of the request the hardware had: it is done with the buffer now.
            budget.release(r.chainLength);
            enter(r, RequestState.COMPLETED);
            advance(r);
        }
        if (status != WcStatus.SUCCESS) onFailedCompletion(status, "RDMA_WRITE");
        checkDrained();
    }

    /**
     * An unsignaled RDMA READ (not the last of its part) produced a completion: only errors and flushes do. The
     * part's signaled READ still comes back (flushed, after it) and gives its credits back.
     */
    public void onUnsignaledReadComplete(int index, int status) {
        RdmaRequest r = contexts[index];
        if (r.state == RequestState.READING && r.unsignaledOnQueue > 0 && --r.unsignaledOnQueue == 0) {
            // The signaled READ of this part was refused at bad_wr: this was the last READ the hardware had, and it
            // ends the part as the signaled one would have (with its failure).
            onReadComplete(index, status == WcStatus.SUCCESS ? WcStatus.WR_FLUSH_ERR : status);
            return;
        }
        if (status != WcStatus.SUCCESS) onFailedCompletion(status, "RDMA_READ");
        checkDrained();
    }

    /** The core finished {@code r} (its complete() reached the poller). */
    public void onCoreComplete(RdmaRequest r) {
        if (r.state != RequestState.EXECUTING) {
            // The core threw for this request, and answered after all: the request already ended.
            LOG.log(System.Logger.Level.WARNING, "queue qid {0}: the core completed a request it had failed (state {1})",
                    params.qid(), r.state);
            return;
        }
        enter(r, RequestState.EXECUTED);
        advance(r);
        checkDrained();
    }

    private void onFailedCompletion(int status, String what) {
        if (status == WcStatus.WR_FLUSH_ERR) {
            // Normal during a drain; outside one it means the QP went to error under us.
            metrics.flushCompletions.increment();
            if (state == QueueState.LIVE || state == QueueState.CONNECTING) startDrain("queue pair flushed", true);
            return;
        }
        // Counted and logged (with vendor_err, rate-limited) by the poller, which sees the whole completion.
        String reason = what + " completion " + WcStatus.name(status);
        startDrain(reason, true);
        // Fatal for the controller too, not only this queue (kernel rdma.c, nvmet_rdma_error_comp: the controller
        // is failed): CSTS.CFS tells the host to reset.
        if (commandQueue != null) commandQueue.transportFailed(reason);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Receives (poller thread)

    /** Receives owed: fewer than {@code depth} are posted or about to be. */
    private int owedReceives() {
        return depth - inState[RequestState.RECV_POSTED.ordinal()] - inState[RequestState.RECV_PENDING.ordinal()];
    }

    private RdmaRequest popFree() {
        return freeStack[--freeCount];
    }

    private void pushFree(RdmaRequest r) {
        enter(r, RequestState.FREE);
        freeStack[freeCount++] = r;
    }

    private void scheduleRepost(RdmaRequest r) {
        enter(r, RequestState.RECV_PENDING);
        reposts.add(r);
        if (!repostScheduled) {
            repostScheduled = true;
            poller.scheduleRepost(this);
        }
    }

    /** Posts every pending receive of this queue in one chain (the poller calls it once per completion batch). */
    public void flushReposts() {
        repostScheduled = false;
        if (reposts.isEmpty()) return;
        if (state == QueueState.DRAINING || state == QueueState.CLOSED) {
            RdmaRequest r;
            while ((r = reposts.poll()) != null) pushFree(r);
            return;
        }
        int rc = postReceives();
        if (rc != 0) {
            LOG.log(System.Logger.Level.ERROR, "queue {0} qid {1}: ibv_post_recv failed with errno {2}", slot,
                    params.qid(), rc);
            postFailedFatal("post_recv failed (errno " + rc + ")");
        }
    }

    /** Posts the receives of every RECV_PENDING context in one chain; returns 0 or the post's errno. */
    private int postReceives() {
        if (!mayPost(true)) {
            RdmaRequest r;
            while ((r = reposts.poll()) != null) pushFree(r);
            return 0;
        }
        int n = reposts.size();
        RdmaRequest first = reposts.peek();
        for (RdmaRequest r = first; r != null; r = r.next) r.recvWr.next(r.next == null ? null : r.next.recvWr);
        poller.verbsCalls().postRecv();
        int rc = qp.postRecv(first.recvWr);
        // A failed call posted the receives before bad_wr: they complete (or flush) and are counted as posted;
        // the rest are free again (ibv_post_recv(3)).
        int posted = rc == 0 ? n : Math.min(n, qp.postedBeforeFailure());
        RdmaRequest r;
        for (int i = 0; (r = reposts.poll()) != null; i++) {
            if (i < posted) enter(r, RequestState.RECV_POSTED); else pushFree(r);
        }
        metrics.recvWorkRequestsPosted.add(pollerIndex, posted);
        return rc;
    }

    /**
     * A receive from the shared receive queue completed on this queue's QP (its qp_num): a command capsule in {@code b},
     * or a flush or error. Every way out of here gives {@code b} back to the SRQ, at once or when the context that takes
     * it is COMPLETED. Poller thread.
     */
    void onSharedRecv(ReceiveBuffer b, int status, int byteLength) {
        if (status != WcStatus.SUCCESS) {
            shared.repost(b);
            onFailedCompletion(status, "RECV");
            checkDrained();
            return;
        }
        if (state == QueueState.DRAINING || state == QueueState.CLOSED) {
            shared.repost(b);
            checkDrained();
            return;
        }
        metrics.commandsReceived.increment(pollerIndex);
        if (++received - responsesPosted > depth) {
            // The same credits as with receives of its own: the host sent more capsules than the depth it was granted.
            metrics.creditOverruns.increment();
            shared.repost(b);
            startDrain("host exceeded its " + depth + " credits", true);
            return;
        }
        if (byteLength > SubmissionQueueEntry.SIZE + params.inCapsuleDataSize()) {
            // The SRQ's buffers fit the largest in-capsule data of all ports; a receive buffer of this queue's own
            // would have been too short for this capsule: it fails as that receive would have (LOC_LEN_ERR, fatal for
            // the queue and its controller). The SRQ and the other queues carry on.
            shared.repost(b);
            LOG.log(System.Logger.Level.WARNING, "queue qid {0} from {1}: a capsule of {2} bytes exceeds the {3} bytes"
                    + " of in-capsule data its port allows", params.qid(), params.peer(), byteLength,
                    params.inCapsuleDataSize());
            onFailedCompletion(WcStatus.LOC_LEN_ERR, "RECV");
            return;
        }
        if (freeCount == 0) {
            // Cannot happen (contextCountSharing): the queue goes, the SRQ and the other queues carry on.
            shared.repost(b);
            startDrain("no free command context for a capsule", true);
            return;
        }
        RdmaRequest r = popFree();
        r.attach(b);
        r.receivedLength = byteLength;
        enter(r, RequestState.NEW);
        advance(r);
    }

    /** The SRQ buffer {@code r} held goes back to the SRQ: nothing reads its capsule any more. */
    private void releaseSharedReceive(RdmaRequest r) {
        ReceiveBuffer b = r.detachShared();
        if (b != null) shared.repost(b);
    }

    /** Bytes of registered memory the queue took for itself (its receive buffers, if any, and response slots). */
    public long registeredBytes() {
        return (recvRegion == null ? 0 : recvRegion.length()) + (responseRegion == null ? 0 : responseRegion.length());
    }

    /** The shared receive queue its capsules come from, or null. */
    public SharedReceives sharedReceives() { return shared; }

    // ------------------------------------------------------------------------------------------------------------
    // The queue's life (poller thread)

    /** ESTABLISHED (or COMM_EST answered with rdma_notify): replay the kept capsules in arrival order. */
    void onEstablished() {
        if (state != QueueState.CONNECTING) return;
        state = QueueState.LIVE;
        RdmaRequest r;
        while ((r = parked.poll()) != null) advance(r);
    }

    /**
     * Every teardown cause ends here: QP to error, wait for every posted WR to come back (flushed, in order) and
     * for the core to return what it holds, then release (kernel rdma.c: {@code ib_drain_qp} before
     * {@code nvmet_rdma_free_queue}).
     *
     * @param local true when the target decided (errors, core request, shutdown): it also disconnects the CM id
     */
    void startDrain(String reason, boolean local) {
        if (state == QueueState.DRAINING || state == QueueState.CLOSED) return;
        state = QueueState.DRAINING;
        closeReason = reason;
        LOG.log(System.Logger.Level.INFO, "queue qid {0} from {1}: closing ({2})", params.qid(), params.peer(),
                reason);
        if (local) {
            try {
                cmId.disconnect();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "rdma_disconnect: " + e.getMessage());
            }
        }
        if (!hardwareGone) {
            try {
                qp.moveToError();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "moving QP to error failed: " + e.getMessage());
            }
        }
        // Only now may the CM agent bound the drain: on a dead device it destroys the QP at once (on its own thread),
        // and rdma_disconnect and ibv_modify_qp above must not meet a QP being destroyed (in the lab, hot-removing
        // rxe0 crashed the daemon in ibv_modify_qp when this came first). From here on the poller calls no verb on
        // the QP: nothing is posted once the queue left LIVE.
        poller.drainStarted(this);
        try {
            if (commandQueue != null) commandQueue.abortHeld();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "queue qid " + params.qid() + ": the core failed to abort its held"
                    + " commands", e);
        }
        // Requests not yet handed to the HCA or the core end now. Buffer waiters first: the buffers the others give
        // back then go to other queues' waiters, never to a request of this one, which would post.
        for (RdmaRequest r : contexts) {
            if (r.state == RequestState.NEED_BUFFER && r.bufferIndex < 0 && r.pool != null && r.pool.cancel(r)) {
                r.pool = null;
                abandon(r);
            }
        }
        abandonChain();
        abandonAll(parked);
        abandonAll(sendWaiters);
        abandonAll(readWaiters);
        RdmaRequest rp;
        while ((rp = reposts.poll()) != null) pushFree(rp);
        // No marker WRs: every request's part of a send chain ends with a signaled WR whose slots stay reserved until
        // its completion (success or flush) is polled, and every posted receive is counted. The queue is drained when
        // no context is RECV_POSTED, READING, SENDING or EXECUTING (nor chained: none is, from here). This does not depend on the provider flushing work posted
        // after the error transition (rxe in Linux 6.1 flushes receives posted then, but not sends), unlike the
        // kernel's ib_drain_qp (kernel cq.c, verbs.c), which posts marker WRs after it.
        checkDrained();
    }

    private void abandonAll(RequestFifo fifo) {
        RdmaRequest r;
        while ((r = fifo.poll()) != null) abandon(r);
    }

    private void abandon(RdmaRequest r) {
        enter(r, RequestState.COMPLETED);
        advance(r);
    }

    /** Nothing of the queue is on the hardware or in the core any more. */
    private boolean drained() {
        return inState[RequestState.RECV_POSTED.ordinal()] == 0 && inState[RequestState.READING.ordinal()] == 0
                && inState[RequestState.SENDING.ordinal()] == 0 && inState[RequestState.EXECUTING.ordinal()] == 0;
    }

    private void checkDrained() {
        if (state != QueueState.DRAINING || !drained()) return;
        // Nor in a send chain about to be posted (the drain ends it at its start; counted so that no failure can let
        // the queue's memory go with a chain of it).
        if (inState[RequestState.READ_CHAINED.ordinal()] + inState[RequestState.SEND_CHAINED.ordinal()] > 0) return;
        state = QueueState.CLOSED;
        for (RdmaRequest r : contexts) {
            if (r.bufferIndex >= 0 || r.direct != null) releaseBuffer(r); // defensive: nothing should still hold one
            releaseSharedReceive(r);
        }
        poller.queueDrained(this);
    }

    // ------------------------------------------------------------------------------------------------------------
    // From other threads

    @Override
    public void complete(NvmeRequest request) {
        // Only the poller touches the context's state: hand it over through the poller's lock-free inbox.
        poller.submitCompletion(contexts[request.tag()]);
    }

    @Override
    public void requestDisconnect(String reason) {
        requestDrain(reason);
    }

    /** Tears the queue down (any thread): the drain runs on the poller thread. */
    public void requestDrain(String reason) {
        onPoller(() -> startDrain(reason, true));
    }

    /** The QP was destroyed before the drain ended (CM thread): the poller ends what the hardware held. */
    public void requestQueuePairDestroyed() {
        onPoller(this::onQueuePairDestroyed);
    }

    /** The connection is established (any thread): kept capsules run on the poller thread. */
    public void requestEstablished() {
        onPoller(this::onEstablished);
    }

    /** Runs {@code command} on the poller thread; a failure in it fails this queue only. */
    private void onPoller(Runnable command) {
        poller.submitCommand(() -> {
            try {
                command.run();
            } catch (RuntimeException e) {
                fail("a command on the poller failed", e);
            }
        });
    }

    @Override
    public String peer() { return params.peer(); }

    /**
     * The local address of the connection (rdma_get_local_addr): on a port bound to the wildcard address, the one
     * the host reached, which the core lists in discovery log entries (kernel discovery.c, nvmet_set_disc_traddr).
     */
    @Override
    public InetAddress localAddress() { return localAddress; }

    private static InetAddress localAddressOf(CmId cmId) {
        try {
            InetSocketAddress a = cmId.localAddress();
            return a == null ? null : a.getAddress();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "rdma_get_local_addr: " + e.getMessage());
            return null;
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Accessors (tests, metrics, CM thread); the counts are the contexts in a state

    public QueueState state() { return state; }

    public QueueParameters parameters() { return params; }

    public int slot() { return slot; }

    public int qid() { return params.qid(); }

    public int depth() { return depth; }

    public CmId cmId() { return cmId; }

    /** What the queue's device gives it (its PD and slabs): the device it was opened on. */
    public DeviceResources resources() { return resources; }

    public QueuePair queuePair() { return qp; }

    public int qpNum() { return qpNum; }

    public CommandQueue commandQueue() { return commandQueue; }

    public SendBudget budget() { return budget; }

    /** Contexts in {@code s}. */
    public int count(RequestState s) { return inState[s.ordinal()]; }

    public int postedReceives() { return count(RequestState.RECV_POSTED); }

    public int requestsInCore() { return count(RequestState.EXECUTING); }

    public int sendWaiters() { return count(RequestState.SEND_PENDING); }

    public int readWaiters() { return count(RequestState.READ_PENDING); }

    public int parkedCapsules() { return count(RequestState.PARKED); }

    public int contextCount() { return contexts.length; }

    public String closeReason() { return closeReason; }

    /** For logs when a drain takes long: what is still outstanding. */
    public String describe() {
        StringBuilder b = new StringBuilder("queue qid ").append(params.qid()).append(" from ").append(params.peer())
                .append(" state ").append(state).append(':');
        for (RequestState s : RequestState.ALL) {
            int n = inState[s.ordinal()];
            if (n > 0) b.append(' ').append(s).append(' ').append(n);
        }
        return b.toString();
    }

    public RdmaRequest context(int index) { return contexts[index]; }
}
