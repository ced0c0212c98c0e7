package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.core.CommandQueue;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.QueueTransport;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.memory.RegisteredRegion;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WrOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The transport side of one NVMe queue on one RC queue pair (kernel: {@code nvmet_rdma_queue}). Everything but
 * {@link #complete}, {@link #requestDisconnect} and {@link #peer} runs on the owning poller thread: no locks.
 *
 * <p>Receives: {@code depth} (= hsqsize + 1) receives are posted at all times; {@code 2 * depth} contexts exist,
 * each with its own receive buffer. When a capsule arrives another free context is reposted right away and the
 * arrived one keeps its buffer (the SQE and any in-capsule data) until its response SEND completes, so nothing is
 * copied and nothing is overwritten while the core or the HCA still reads it. If no context is free (responses
 * still waiting for their SEND completions) the receive is reposted as soon as one is freed; meanwhile the host
 * sees RNR retries (rnr_retry 7), never an error.
 *
 * <p>Credits: a well-behaved host has at most {@code depth} commands without a posted response. A capsule beyond
 * that broke flow control (section 4): the queue is torn down, the daemon and other queues carry on.
 */
public final class RdmaQueue implements QueueTransport {
    private static final System.Logger LOG = System.getLogger(RdmaQueue.class.getName());

    private final QueuePoller poller;
    private final QueueDevice device;
    private final RdmaMetrics metrics;
    private final CmId cmId;
    private final QueuePair qp;
    private final int slot;
    private final int portId;
    private final int qid;
    private final int depth;
    private final int inCapsuleDataSize;
    private final int maxIoSize;
    private final boolean remoteInvalidation;
    private final String peer;
    private final RegisteredRegion recvRegion;
    private final RegisteredRegion responseRegion;
    private final RdmaRequest[] contexts;
    private final SendBudget budget;
    private final int cqEntries;

    private CommandQueue commandQueue;
    private volatile QueueState state = QueueState.CONNECTING;
    private final RdmaRequest[] freeStack;
    private int freeCount;
    private int repostDebt;
    private int postedRecvs;
    private final RequestFifo parked = new RequestFifo();
    private final RequestFifo readWaiters = new RequestFifo();
    private final RequestFifo sendWaiters = new RequestFifo();
    private final RequestFifo reposts = new RequestFifo();
    private boolean repostScheduled;
    private long received;
    private long responsesPosted;
    private int inCore;
    private volatile String closeReason;
    private boolean errorLogged;

    /**
     * Built by the CM thread at connect time, before the queue is published to its poller.
     *
     * @param sendBudget send WRs available to chains (the QP's max_send_wr)
     * @param readDepth  negotiated initiator depth (outstanding RDMA READs)
     */
    public RdmaQueue(QueuePoller poller, QueueDevice device, RdmaMetrics metrics, CmId cmId, QueuePair qp, int slot,
                     int portId, int qid, int depth, int inCapsuleDataSize, int maxIoSize,
                     boolean remoteInvalidation, int sendBudget, int readDepth, int cqEntries,
                     RegisteredRegion recvRegion, RegisteredRegion responseRegion, String peer) {
        this.poller = poller;
        this.device = device;
        this.metrics = metrics;
        this.cmId = cmId;
        this.qp = qp;
        this.slot = slot;
        this.portId = portId;
        this.qid = qid;
        this.depth = depth;
        this.inCapsuleDataSize = inCapsuleDataSize;
        this.maxIoSize = maxIoSize;
        this.remoteInvalidation = remoteInvalidation;
        this.peer = peer;
        this.recvRegion = recvRegion;
        this.responseRegion = responseRegion;
        this.budget = new SendBudget(sendBudget, readDepth);
        this.cqEntries = cqEntries;
        int count = contextCount(depth);
        int recvSize = recvBufferSize(inCapsuleDataSize);
        // Work requests are plain native memory (not registered): providers read them during the post call.
        MemorySegment wrs = Arena.ofAuto().allocate((long) count * RdmaRequest.WR_MEMORY, 8);
        contexts = new RdmaRequest[count];
        freeStack = new RdmaRequest[count];
        for (int i = 0; i < count; i++) {
            RdmaRequest r = new RdmaRequest(this, i,
                    recvRegion.segment().asSlice((long) i * recvSize, recvSize),
                    responseRegion.segment().asSlice((long) i * RESPONSE_SLOT, RESPONSE_SLOT),
                    wrs.asSlice((long) i * RdmaRequest.WR_MEMORY, RdmaRequest.WR_MEMORY));
            prebuild(r, recvSize);
            contexts[i] = r;
        }
        for (int i = count - 1; i >= 0; i--) freeStack[freeCount++] = contexts[i];
    }

    /** Response buffers are 16 bytes; a cache line each keeps neighbours apart. */
    public static final int RESPONSE_SLOT = 64;

    /** Contexts per queue: twice the depth (receives are reposted before responses complete; section 4). */
    public static int contextCount(int depth) { return 2 * depth; }

    public static int recvBufferSize(int inCapsuleDataSize) { return (64 + inCapsuleDataSize + 63) / 64 * 64; }

    private void prebuild(RdmaRequest r, int recvSize) {
        r.recvSge.set(r.recvBuffer.address(), recvSize, recvRegion.lkey());
        r.recvWr.wrId(WrId.of(slot, WrId.RECV, r.index)).sgList(r.recvSge, 1).next(null);
        r.sendSge.set(r.response.address(), 16, responseRegion.lkey());
        r.sendWr.wrId(WrId.of(slot, WrId.SEND, r.index)).sgList(r.sendSge, 1).next(null)
                .opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED);
        r.dataWr.sgList(r.dataSge, 1).next(null);
    }

    /** Binds the core's queue (the CM thread calls this before {@link #postInitialReceives}). */
    public void attach(CommandQueue commandQueue) { this.commandQueue = commandQueue; }

    /** CM thread, before accept: posts {@code depth} receives in one chain. */
    public int postInitialReceives() {
        RdmaRequest first = null;
        RdmaRequest prev = null;
        for (int i = 0; i < depth; i++) {
            RdmaRequest r = freeStack[--freeCount];
            r.state = RdmaRequest.RECV_POSTED;
            if (prev == null) first = r; else prev.recvWr.next(r.recvWr);
            prev = r;
        }
        prev.recvWr.next(null);
        int rc = qp.postRecv(first.recvWr);
        if (rc != 0) return rc;
        postedRecvs += depth;
        metrics.recvWorkRequestsPosted.add(depth);
        return 0;
    }

    // ------------------------------------------------------------------------------------------------------------
    // Completions (poller thread)

    /** A receive completed: a command capsule (or a flush). */
    public void onRecv(int index, int status, int byteLength) {
        RdmaRequest r = contexts[index];
        postedRecvs--;
        if (status != WcStatus.SUCCESS) {
            r.state = RdmaRequest.FREE;
            freeContext(r, false);
            onFailedCompletion(status, "RECV");
            checkDrained();
            return;
        }
        if (state == QueueState.DRAINING || state == QueueState.CLOSED) {
            r.state = RdmaRequest.FREE;
            freeContext(r, false);
            checkDrained();
            return;
        }
        metrics.commandsReceived.increment();
        if (++received - responsesPosted > depth) {
            // The host sent more capsules than the depth it was granted: a protocol error for this queue only.
            metrics.creditOverruns.increment();
            r.state = RdmaRequest.FREE;
            freeContext(r, false);
            startDrain("host exceeded its " + depth + " credits", true);
            return;
        }
        // Repost right away, with another context's buffer: this one keeps its capsule.
        RdmaRequest fresh = freeCount > 0 ? freeStack[--freeCount] : null;
        if (fresh != null) scheduleRepost(fresh); else repostDebt++;
        r.receivedLength = byteLength;
        if (state == QueueState.CONNECTING) {
            // Seed 004: the host may send before we see ESTABLISHED. Keep it, in order; replay on ESTABLISHED.
            r.state = RdmaRequest.PARKED;
            parked.add(r);
            metrics.earlyCapsules.increment();
            return;
        }
        handleCommand(r);
    }

    /** The response SEND of a context completed (success or flush). */
    public void onSendComplete(int index, int status) {
        RdmaRequest r = contexts[index];
        budget.release(r.sendSlots);
        r.sendSlots = 0;
        releaseBuffer(r);
        r.state = RdmaRequest.FREE;
        freeContext(r, true);
        if (status != WcStatus.SUCCESS) {
            onFailedCompletion(status, "SEND");
        } else {
            resumeSendWaiters();
        }
        checkDrained();
    }

    /** An RDMA READ (host data for a write) completed. */
    public void onReadComplete(int index, int status) {
        RdmaRequest r = contexts[index];
        budget.releaseRead();
        r.holdsRead = false;
        if (status != WcStatus.SUCCESS || state != QueueState.LIVE) {
            // Abandoned: begin() accepted it but execute() never ran, so the core holds nothing.
            releaseBuffer(r);
            r.state = RdmaRequest.FREE;
            freeContext(r, true);
            if (status != WcStatus.SUCCESS) onFailedCompletion(status, "RDMA_READ");
            checkDrained();
            return;
        }
        r.nvme.data(r.pool.buffer(r.bufferIndex), r.sglLength);
        execute(r);
        resumeSendWaiters();
    }

    /** An unsignaled RDMA WRITE produced a completion: only errors and flushes do. */
    public void onWriteComplete(int index, int status) {
        if (status != WcStatus.SUCCESS) onFailedCompletion(status, "RDMA_WRITE");
    }

    private void onFailedCompletion(int status, String what) {
        if (status == WcStatus.WR_FLUSH_ERR) {
            // Normal during a drain (seed 000); outside one it means the QP went to error under us.
            metrics.flushCompletions.increment();
            if (state == QueueState.LIVE || state == QueueState.CONNECTING) startDrain("queue pair flushed", true);
            return;
        }
        metrics.errorCompletion(status);
        if (!errorLogged) {
            errorLogged = true;
            LOG.log(System.Logger.Level.WARNING, "queue {0} qid {1} from {2}: {3} completed with {4}; closing queue",
                    slot, qid, peer, what, WcStatus.name(status));
        }
        String reason = what + " completion " + WcStatus.name(status);
        startDrain(reason, true);
        // Fatal for the controller too, not only this queue (nvmf-rdma.md section 5): CSTS.CFS tells the host.
        if (commandQueue != null) commandQueue.transportFailed(reason);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Command flow (poller thread)

    private void handleCommand(RdmaRequest r) {
        NvmeRequest n = r.nvme;
        n.bind(r.command, r.response);
        n.startNanos(System.nanoTime());
        int icd = Math.max(0, r.receivedLength - SubmissionQueueEntry.SIZE);
        int sglStatus = r.receivedLength < SubmissionQueueEntry.SIZE ? Status.INVALID_FIELD
                : CommandSgl.parse(r, icd, maxIoSize);
        if (sglStatus != 0) n.transportStatus(sglStatus);
        r.state = RdmaRequest.IN_CORE;
        r.inCore = true;
        inCore++;
        if (!commandQueue.begin(n)) return; // the core completed it (complete() is on its way)
        r.inCore = false;
        inCore--;
        int direction = n.dataDirection();
        if (direction == NvmeRequest.DIRECTION_NONE || r.sglLength == 0) {
            n.data(MemorySegment.NULL, 0);
            execute(r);
        } else if (r.inCapsule) {
            if (direction == NvmeRequest.DIRECTION_HOST_TO_CONTROLLER) {
                metrics.inCapsuleCommands.increment();
                n.data(r.sglOffset == 0 ? r.inCapsuleData : r.inCapsuleData.asSlice(r.sglOffset), r.sglLength);
            } else {
                n.data(MemorySegment.NULL, 0); // cannot happen: parse() refuses in-capsule data for reads
            }
            execute(r);
        } else {
            needBuffer(r);
        }
    }

    private void needBuffer(RdmaRequest r) {
        BufferPool pool = device.poolFor(r.sglLength);
        r.pool = pool;
        int b = pool.acquire(r);
        if (b < 0) {
            r.state = RdmaRequest.WAIT_BUFFER;
            metrics.bufferWaits.increment();
            return;
        }
        r.bufferIndex = b;
        continueWithBuffer(r);
    }

    /** A buffer waiter reached the head of its pool's FIFO and got buffer {@code index} (poller thread). */
    void bufferGranted(RdmaRequest r, BufferPool pool, int index) {
        r.pool = pool;
        r.bufferIndex = index;
        continueWithBuffer(r);
    }

    /** A data buffer is bound to {@code r}: fetch host data or execute. */
    private void continueWithBuffer(RdmaRequest r) {
        if (r.nvme.dataDirection() == NvmeRequest.DIRECTION_HOST_TO_CONTROLLER) {
            if (readWaiters.isEmpty() && budget.fitsRead()) {
                postRead(r);
            } else {
                r.state = RdmaRequest.WAIT_READ;
                metrics.sendBudgetWaits.increment();
                readWaiters.add(r);
            }
        } else {
            r.nvme.data(r.pool.buffer(r.bufferIndex), r.sglLength);
            execute(r);
        }
    }

    private void postRead(RdmaRequest r) {
        budget.reserveRead();
        r.holdsRead = true;
        r.state = RdmaRequest.READING;
        r.dataSge.set(r.pool.buffer(r.bufferIndex).address(), r.sglLength, r.pool.lkey());
        r.dataWr.wrId(WrId.of(slot, WrId.READ, r.index)).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                .remote(r.remoteAddress, r.remoteKey).next(null);
        int rc = qp.postSend(r.dataWr);
        metrics.rdmaReads.increment();
        metrics.sendWorkRequestsPosted.increment();
        metrics.signaledWorkRequests.increment();
        if (rc != 0) postFailed(rc, r, true);
    }

    private void execute(RdmaRequest r) {
        r.state = RdmaRequest.IN_CORE;
        r.inCore = true;
        inCore++;
        commandQueue.execute(r.nvme);
    }

    /** The core finished {@code r} (its complete() reached the poller). */
    public void onCoreComplete(RdmaRequest r) {
        r.inCore = false;
        inCore--;
        if (state != QueueState.LIVE) {
            releaseBuffer(r);
            r.state = RdmaRequest.FREE;
            freeContext(r, true);
            checkDrained();
            return;
        }
        int slots = responseSlots(r);
        if (sendWaiters.isEmpty() && budget.fits(slots)) {
            postResponse(r, slots);
        } else {
            r.state = RdmaRequest.WAIT_SEND;
            metrics.sendBudgetWaits.increment();
            sendWaiters.add(r);
        }
    }

    private int responseSlots(RdmaRequest r) {
        return sendsData(r) ? 2 : 1;
    }

    private boolean sendsData(RdmaRequest r) {
        NvmeRequest n = r.nvme;
        return n.dataDirection() == NvmeRequest.DIRECTION_CONTROLLER_TO_HOST && r.bufferIndex >= 0
                && n.dataLength() > 0 && success(r);
    }

    private static boolean success(RdmaRequest r) {
        return r.cqe.status() == Status.SUCCESS;
    }

    /**
     * Posts the response, as one chain with the data: RDMA WRITE (unsignaled) then SEND (signaled). RC ordering
     * makes the SEND's completion imply the WRITE's; the buffer, response and lkeys stay untouched until then.
     */
    private void postResponse(RdmaRequest r, int slots) {
        budget.reserve(slots);
        r.sendSlots = slots;
        r.state = RdmaRequest.SENDING;
        responsesPosted++;
        SendWorkRequest send = r.sendWr;
        if (r.invalidate && remoteInvalidation) {
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
        if (rc != 0) postFailed(rc, r, false);
    }

    /**
     * A post failed synchronously. The budget makes ENOMEM impossible, so this is a provider failure: the WR was
     * not posted, so give its budget back and tear the queue down.
     */
    private void postFailed(int rc, RdmaRequest r, boolean read) {
        LOG.log(System.Logger.Level.ERROR, "queue {0} qid {1}: ibv_post_send failed with errno {2}", slot, qid, rc);
        if (read) {
            budget.releaseRead();
            r.holdsRead = false;
        } else {
            budget.release(r.sendSlots);
            r.sendSlots = 0;
        }
        releaseBuffer(r);
        r.state = RdmaRequest.FREE;
        freeContext(r, true);
        startDrain("post_send failed (errno " + rc + ")", true);
    }

    /** Resumes waiters in FIFO order while budget allows: responses first (they free resources), then READs. */
    private void resumeSendWaiters() {
        if (state != QueueState.LIVE) return;
        RdmaRequest w;
        while ((w = sendWaiters.peek()) != null) {
            int slots = responseSlots(w);
            if (!budget.fits(slots)) return; // strict FIFO: nobody overtakes the head
            sendWaiters.poll();
            postResponse(w, slots);
        }
        while ((w = readWaiters.peek()) != null && budget.fitsRead()) {
            readWaiters.poll();
            postRead(w);
        }
    }

    private void releaseBuffer(RdmaRequest r) {
        if (r.bufferIndex >= 0) {
            BufferPool pool = r.pool;
            int index = r.bufferIndex;
            r.bufferIndex = -1;
            r.pool = null;
            pool.release(index); // may grant it to a waiter at once
        }
    }

    /** A context is free again: repost its receive if one is owed, else keep it. */
    private void freeContext(RdmaRequest r, boolean mayRepost) {
        if (mayRepost && repostDebt > 0 && state != QueueState.DRAINING && state != QueueState.CLOSED) {
            repostDebt--;
            scheduleRepost(r);
        } else {
            freeStack[freeCount++] = r;
        }
    }

    private void scheduleRepost(RdmaRequest r) {
        r.state = RdmaRequest.RECV_POSTED;
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
            while ((r = reposts.poll()) != null) {
                r.state = RdmaRequest.FREE;
                freeStack[freeCount++] = r;
            }
            return;
        }
        int n = reposts.size();
        RdmaRequest first = reposts.peek();
        RdmaRequest r = first;
        while (r != null) {
            r.recvWr.next(r.next == null ? null : r.next.recvWr);
            r = r.next;
        }
        while (reposts.poll() != null) { /* unlink */ }
        int rc = qp.postRecv(first.recvWr);
        if (rc != 0) {
            LOG.log(System.Logger.Level.ERROR, "queue {0} qid {1}: ibv_post_recv failed with errno {2}", slot, qid, rc);
            startDrain("post_recv failed (errno " + rc + ")", true);
            return;
        }
        postedRecvs += n;
        metrics.recvWorkRequestsPosted.add(n);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Lifecycle (poller thread)

    /** ESTABLISHED (or COMM_EST answered with rdma_notify): replay the kept capsules in arrival order. */
    public void onEstablished() {
        if (state != QueueState.CONNECTING) return;
        state = QueueState.LIVE;
        RdmaRequest r;
        while ((r = parked.poll()) != null) {
            if (state != QueueState.LIVE) {
                r.state = RdmaRequest.FREE;
                freeContext(r, false);
                continue;
            }
            handleCommand(r);
        }
    }

    /**
     * Every teardown cause ends here (seed 000): QP to error, wait for every posted WR to come back (flushed, in
     * order) and for the core to return what it holds, then release.
     *
     * @param local true when the target decided (errors, core request, shutdown): it also disconnects the CM id
     */
    public void startDrain(String reason, boolean local) {
        if (state == QueueState.DRAINING || state == QueueState.CLOSED) return;
        state = QueueState.DRAINING;
        closeReason = reason;
        LOG.log(System.Logger.Level.INFO, "queue qid {0} from {1}: closing ({2})", qid, peer, reason);
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
        // Requests not yet handed to the HCA or the core: give them back now.
        abandon(parked);
        abandon(sendWaiters);
        abandon(readWaiters);
        for (RdmaRequest r : contexts) {
            if (r.state == RdmaRequest.WAIT_BUFFER && r.pool.cancel(r)) {
                r.pool = null;
                r.state = RdmaRequest.FREE;
                freeStack[freeCount++] = r;
            }
        }
        RdmaRequest rp;
        while ((rp = reposts.poll()) != null) {
            rp.state = RdmaRequest.FREE;
            freeStack[freeCount++] = rp;
        }
        repostDebt = 0;
        // No marker WRs: every send chain ends with a signaled WR whose slots stay reserved in the budget until its
        // completion (success or flush) is polled, and every posted receive is counted. The queue is drained
        // when both counts are back to zero (nvmf-rdma.md section 5, "count outstanding WRs down to zero"). This
        // does not depend on the provider flushing work posted after the error transition (rxe in Linux 6.1
        // flushes receives posted then, but not sends).
        checkDrained();
    }

    private void abandon(RequestFifo fifo) {
        RdmaRequest r;
        while ((r = fifo.poll()) != null) {
            releaseBuffer(r);
            r.state = RdmaRequest.FREE;
            freeStack[freeCount++] = r;
        }
    }

    private void checkDrained() {
        if (state != QueueState.DRAINING || postedRecvs != 0 || !budget.idle() || inCore != 0) return;
        state = QueueState.CLOSED;
        for (RdmaRequest r : contexts) {
            if (r.bufferIndex >= 0) releaseBuffer(r); // defensive: nothing should still hold one
        }
        poller.queueDrained(this);
    }

    // ------------------------------------------------------------------------------------------------------------
    // QueueTransport (any thread)

    @Override
    public void complete(NvmeRequest request) {
        // Only the poller touches the context's state: hand it over through the poller's lock-free inbox.
        poller.submitCompletion(contexts[request.tag()]);
    }

    @Override
    public void requestDisconnect(String reason) {
        poller.submitCommand(() -> startDrain(reason, true));
    }

    @Override
    public String peer() { return peer; }

    // ------------------------------------------------------------------------------------------------------------
    // Accessors (tests, metrics, CM thread)

    public QueueState state() { return state; }

    public int slot() { return slot; }

    public int qid() { return qid; }

    public int portId() { return portId; }

    public int depth() { return depth; }

    public int inCapsuleDataSize() { return inCapsuleDataSize; }

    public CmId cmId() { return cmId; }

    public QueuePair queuePair() { return qp; }

    public CommandQueue commandQueue() { return commandQueue; }

    public QueuePoller poller() { return poller; }

    public QueueDevice device() { return device; }

    public SendBudget budget() { return budget; }

    public int postedReceives() { return postedRecvs; }

    public int freeContexts() { return freeCount; }

    public int contextCount() { return contexts.length; }

    public int requestsInCore() { return inCore; }

    public int sendWaiters() { return sendWaiters.size(); }

    public int readWaiters() { return readWaiters.size(); }

    public int parkedCapsules() { return parked.size(); }

    public int cqEntries() { return cqEntries; }

    public RegisteredRegion recvRegion() { return recvRegion; }

    public RegisteredRegion responseRegion() { return responseRegion; }

    public String closeReason() { return closeReason; }

    /** For logs when a drain takes long: what is still outstanding. */
    public String describe() {
        return "queue qid " + qid + " from " + peer + " state " + state + ": posted receives " + postedRecvs
                + ", send slots out " + (budget.capacity() - budget.available()) + ", READs out "
                + (budget.readCapacity() - budget.readAvailable()) + ", in core " + inCore + ", free contexts "
                + freeCount + "/" + contexts.length;
    }

    public RdmaRequest context(int index) { return contexts[index]; }
}
