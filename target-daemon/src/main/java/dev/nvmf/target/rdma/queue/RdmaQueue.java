package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.core.CommandQueue;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.QueueAcceptor;
import dev.nvmf.target.core.QueueTransport;
import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.memory.DeviceResources;
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
 */
public final class RdmaQueue implements QueueTransport {
    private static final System.Logger LOG = System.getLogger(RdmaQueue.class.getName());

    private final QueueParameters params;
    private final QueuePoller poller;
    private final RdmaMetrics metrics;
    private final CmId cmId;
    private final int depth;
    private final SendBudget budget;

    // What open() took and release() gives back (null / -1 until taken)
    private QueueDevice device;
    private boolean cqReserved;
    private int slot = -1;
    private RegisteredRegion recvRegion;
    private RegisteredRegion responseRegion;
    private QueuePair qp;
    private CommandQueue commandQueue;
    private RdmaRequest[] contexts = new RdmaRequest[0];

    private volatile QueueState state = QueueState.CONNECTING;
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
    private boolean errorLogged;
    /** The address the host reached (the CM id's source address), read once on the CM thread at open. */
    private final InetAddress localAddress;

    private RdmaQueue(QueueParameters params, CmId cmId, QueuePoller poller, RdmaMetrics metrics) {
        this.params = params;
        this.cmId = cmId;
        this.localAddress = localAddressOf(cmId);
        this.poller = poller;
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
        device = poller.deviceFor(resources);
        if (!device.reserveCq(params.cqEntries())) {
            throw new IllegalStateException("the CQ of poller " + poller.index() + " on "
                    + resources.device().name() + " has no room for " + params.cqEntries() + " more entries");
        }
        cqReserved = true;
        slot = poller.allocateSlot();
        if (slot < 0) throw new IllegalStateException("poller " + poller.index() + " has no free queue slot");
        int count = params.contextCount();
        int recvSize = params.recvBufferSize();
        recvRegion = resources.slabs().allocate((long) count * recvSize);
        responseRegion = resources.slabs().allocate((long) count * QueueParameters.RESPONSE_SLOT);
        qp = cmId.createQueuePair(new QpInitAttributes(resources.protectionDomain(), device.cq(), device.cq(),
                new QpCapabilities(params.sendBudget(), depth, 1, 1, 0), false));
        // Work requests are plain native memory (not registered): providers read them during the post call.
        MemorySegment wrs = Arena.ofAuto().allocate((long) count * RdmaRequest.WR_MEMORY, 8);
        contexts = new RdmaRequest[count];
        freeStack = new RdmaRequest[count];
        for (int i = 0; i < count; i++) {
            RdmaRequest r = new RdmaRequest(this, i,
                    recvRegion.segment().asSlice((long) i * recvSize, recvSize),
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
        int rc = postInitialReceives();
        if (rc != 0) throw new IllegalStateException("ibv_post_recv failed: errno " + rc);
    }

    private void prebuild(RdmaRequest r, int recvSize) {
        r.recvSge.set(r.recvBuffer.address(), recvSize, recvRegion.lkey());
        r.recvWr.wrId(WrId.of(slot, WrId.RECV, r.index)).sgList(r.recvSge, 1).next(null);
        r.sendSge.set(r.response.address(), CompletionQueueEntry.SIZE, responseRegion.lkey());
        r.sendWr.wrId(WrId.of(slot, WrId.SEND, r.index)).sgList(r.sendSge, 1).next(null)
                .opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED);
        r.dataWr.sgList(r.dataSge, 1).next(null);
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
        if (qp != null) {
            try {
                cmId.destroyQueuePair();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "rdma_destroy_qp: " + e.getMessage());
            }
        }
        if (device != null) {
            DeviceResources res = device.resources();
            if (recvRegion != null) res.slabs().release(recvRegion);
            if (responseRegion != null) res.slabs().release(responseRegion);
            if (cqReserved) device.releaseCq(params.cqEntries());
        }
        if (slot >= 0) poller.freeSlot(slot);
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
                    if (r.bufferIndex < 0 && !acquireBuffer(r)) break; // waits in its pool's FIFO
                    if (state != QueueState.LIVE) {
                        enter(r, RequestState.COMPLETED); // granted while the queue drains: nothing more is posted
                    } else if (r.nvme.dataDirection() == NvmeRequest.DIRECTION_HOST_TO_CONTROLLER) {
                        if (!readWaiters.isEmpty() || !budget.fitsRead()) metrics.sendBudgetWaits.increment();
                        readWaiters.add(r);
                        enter(r, RequestState.READ_PENDING);
                    } else {
                        r.nvme.data(r.pool.buffer(r.bufferIndex), r.sglLength);
                        enter(r, RequestState.READY_TO_EXECUTE);
                    }
                }
                case READ_PENDING -> {
                    if (readWaiters.peek() != r || !budget.fitsRead()) break; // strict FIFO
                    readWaiters.poll();
                    postRead(r);
                }
                case READY_TO_EXECUTE -> {
                    if (state != QueueState.LIVE) {
                        enter(r, RequestState.COMPLETED); // begin() accepted it but the core never saw its data
                    } else {
                        enter(r, RequestState.EXECUTING);
                        commandQueue.execute(r.nvme);
                    }
                }
                case EXECUTED -> {
                    if (state != QueueState.LIVE) {
                        enter(r, RequestState.COMPLETED); // the host is gone: no response
                    } else {
                        r.chainLength = sendsData(r) ? 2 : 1;
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
                    postResponse(r);
                }
                case COMPLETED -> {
                    releaseBuffer(r);
                    // A receive is owed while fewer than depth are posted or about to be: this context pays it.
                    if (state == QueueState.LIVE || state == QueueState.CONNECTING) {
                        if (owedReceives() > 0) scheduleRepost(r); else pushFree(r);
                    } else {
                        pushFree(r);
                    }
                }
                case FREE, RECV_PENDING, RECV_POSTED, READING, EXECUTING, SENDING -> { } // waits for an event
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
        n.startNanos(System.nanoTime());
        int icd = Math.max(0, r.receivedLength - SubmissionQueueEntry.SIZE);
        int sglStatus = r.receivedLength < SubmissionQueueEntry.SIZE ? Status.INVALID_FIELD
                : CommandSgl.parse(r, icd, params.maxIoSize());
        if (sglStatus != 0) n.transportStatus(sglStatus);
        enter(r, RequestState.EXECUTING); // from here the core holds it
        if (!commandQueue.begin(n)) return; // the core completed it: complete() is on its way
        int direction = n.dataDirection();
        if (direction == NvmeRequest.DIRECTION_NONE || r.sglLength == 0) {
            n.data(MemorySegment.NULL, 0);
            enter(r, RequestState.READY_TO_EXECUTE);
        } else if (r.inCapsule) {
            if (direction == NvmeRequest.DIRECTION_HOST_TO_CONTROLLER) {
                metrics.inCapsuleCommands.increment();
                n.data(r.sglOffset == 0 ? r.inCapsuleData : r.inCapsuleData.asSlice(r.sglOffset), r.sglLength);
            } else {
                n.data(MemorySegment.NULL, 0); // cannot happen: parse() refuses in-capsule data for reads
            }
            enter(r, RequestState.READY_TO_EXECUTE);
        } else {
            enter(r, RequestState.NEED_BUFFER);
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

    private void postRead(RdmaRequest r) {
        budget.reserveRead();
        enter(r, RequestState.READING);
        r.dataSge.set(r.pool.buffer(r.bufferIndex).address(), r.sglLength, r.pool.lkey());
        r.dataWr.wrId(WrId.of(slot, WrId.READ, r.index)).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                .remote(r.remoteAddress, r.remoteKey).next(null);
        int rc = qp.postSend(r.dataWr);
        metrics.rdmaReads.increment();
        metrics.sendWorkRequestsPosted.increment();
        metrics.signaledWorkRequests.increment();
        if (rc != 0) {
            budget.releaseRead();
            postFailed(rc, r);
        }
    }

    private boolean sendsData(RdmaRequest r) {
        NvmeRequest n = r.nvme;
        return n.dataDirection() == NvmeRequest.DIRECTION_CONTROLLER_TO_HOST && r.bufferIndex >= 0
                && n.dataLength() > 0 && r.cqe.status() == Status.SUCCESS;
    }

    /**
     * Posts the response, as one chain with the data: RDMA WRITE (unsignaled) then SEND (signaled). RC ordering
     * makes the SEND's completion imply the WRITE's (IBA chapter 10, work request ordering); the buffer, the
     * response and their lkeys stay untouched until then.
     */
    private void postResponse(RdmaRequest r) {
        int slots = r.chainLength;
        budget.reserve(slots);
        enter(r, RequestState.SENDING);
        responsesPosted++;
        SendWorkRequest send = r.sendWr;
        if (r.invalidate && params.remoteInvalidation()) {
            send.opcode(WrOpcode.SEND_WITH_INV).invalidateRkey(r.remoteKey);
            metrics.remoteInvalidations.increment();
        } else {
            send.opcode(WrOpcode.SEND).invalidateRkey(0);
        }
        SendWorkRequest first = send;
        if (slots == 2) {
            MemorySegment buffer = r.pool.buffer(r.bufferIndex);
            int length = Math.min(r.nvme.dataLength(), r.sglLength);
            MemorySegment data = r.nvme.data();
            if (data.address() != buffer.address()) {
                // The core answered from its own memory: copy into the registered buffer.
                MemorySegment.copy(data, 0, buffer, 0, length);
            }
            r.dataSge.set(buffer.address(), length, r.pool.lkey());
            r.dataWr.wrId(WrId.of(slot, WrId.WRITE, r.index)).opcode(WrOpcode.RDMA_WRITE).sendFlags(0)
                    .remote(r.remoteAddress, r.remoteKey).next(send);
            first = r.dataWr;
            metrics.rdmaWrites.increment();
        }
        int rc = qp.postSend(first);
        metrics.sendWorkRequestsPosted.add(slots);
        metrics.signaledWorkRequests.increment();
        metrics.responsesSent.increment();
        if (rc != 0) {
            budget.release(slots);
            postFailed(rc, r);
        }
    }

    /**
     * A post failed synchronously. The budget makes ENOMEM impossible, so this is a provider failure: the WR was
     * not posted (its budget is already back), so the request ends here and the queue is torn down.
     */
    private void postFailed(int rc, RdmaRequest r) {
        LOG.log(System.Logger.Level.ERROR, "queue {0} qid {1}: ibv_post_send failed with errno {2}", slot,
                params.qid(), rc);
        enter(r, RequestState.COMPLETED);
        advance(r);
        startDrain("post_send failed (errno " + rc + ")", true);
    }

    private void releaseBuffer(RdmaRequest r) {
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
        metrics.commandsReceived.increment();
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

    /** An RDMA READ (host data for a write) completed. */
    public void onReadComplete(int index, int status) {
        RdmaRequest r = contexts[index];
        budget.releaseRead();
        if (status == WcStatus.SUCCESS) {
            r.nvme.data(r.pool.buffer(r.bufferIndex), r.sglLength);
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
        if (status != WcStatus.SUCCESS) onFailedCompletion(status, "RDMA_WRITE");
    }

    /** The core finished {@code r} (its complete() reached the poller). */
    public void onCoreComplete(RdmaRequest r) {
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
        metrics.errorCompletion(status);
        if (!errorLogged) {
            errorLogged = true;
            LOG.log(System.Logger.Level.WARNING, "queue {0} qid {1} from {2}: {3} completed with {4}; closing queue",
                    slot, params.qid(), params.peer(), what, WcStatus.name(status));
        }
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
            startDrain("post_recv failed (errno " + rc + ")", true);
        }
    }

    /** Posts the receives of every RECV_PENDING context in one chain; returns 0 or the post's errno. */
    private int postReceives() {
        int n = reposts.size();
        RdmaRequest first = reposts.peek();
        for (RdmaRequest r = first; r != null; r = r.next) r.recvWr.next(r.next == null ? null : r.next.recvWr);
        int rc = qp.postRecv(first.recvWr);
        RdmaRequest r;
        while ((r = reposts.poll()) != null) {
            // A failed call posted nothing: those contexts are free again.
            if (rc == 0) enter(r, RequestState.RECV_POSTED); else pushFree(r);
        }
        if (rc == 0) metrics.recvWorkRequestsPosted.add(n);
        return rc;
    }

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
        try {
            qp.moveToError();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "moving QP to error failed: " + e.getMessage());
        }
        if (commandQueue != null) commandQueue.abortHeld();
        // Requests not yet handed to the HCA or the core end now. Buffer waiters first: the buffers the others give
        // back then go to other queues' waiters, never to a request of this one, which would post.
        for (RdmaRequest r : contexts) {
            if (r.state == RequestState.NEED_BUFFER && r.bufferIndex < 0 && r.pool != null && r.pool.cancel(r)) {
                r.pool = null;
                abandon(r);
            }
        }
        abandonAll(parked);
        abandonAll(sendWaiters);
        abandonAll(readWaiters);
        RdmaRequest rp;
        while ((rp = reposts.poll()) != null) pushFree(rp);
        // No marker WRs: every send chain ends with a signaled WR whose slots stay reserved until its completion
        // (success or flush) is polled, and every posted receive is counted. The queue is drained when no context
        // is RECV_POSTED, READING, SENDING or EXECUTING. This does not depend on the provider flushing work posted
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
        state = QueueState.CLOSED;
        for (RdmaRequest r : contexts) {
            if (r.bufferIndex >= 0) releaseBuffer(r); // defensive: nothing should still hold one
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
        poller.submitCommand(() -> startDrain(reason, true));
    }

    /** The connection is established (any thread): kept capsules run on the poller thread. */
    public void requestEstablished() {
        poller.submitCommand(this::onEstablished);
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

    public QueuePair queuePair() { return qp; }

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
