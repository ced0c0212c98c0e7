package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.WrOpcode;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A reliable-connected queue pair with the IBA state machine (RESET, INIT, RTR, RTS, SQD, SQE, ERR).
 *
 * <p>Posting copies each native WR (and its SGE list) into a work queue entry, as hardware does; data is read
 * from registered memory when the WR executes, one WR per fabric step, in order. Completions go through a per-queue
 * pipe (which a fault can delay) so they reach the CQ in posting order. A send-queue slot is held from post until
 * the consumer polls the completion that retires it: its own, or a later signaled one on the same send queue
 * (unsignaled work never retires itself).
 */
public final class SoftQueuePair implements QueuePair {
    final SoftFabric fabric;
    final SoftDevice context;
    final DeviceNode node;
    final SoftProtectionDomain pd;
    final SoftCompletionQueue sendCq;
    final SoftCompletionQueue recvCq;
    /** The shared receive queue its receives come from, or null: then its own receive queue ({@link #rq}). */
    final SoftSharedReceiveQueue srq;
    private final QpCapabilities caps;
    private final boolean signalAll;
    private final int qpNum;

    SoftCmId cmId;
    SoftQueuePair peer;
    QpState state = QpState.RESET;
    boolean destroyed;
    /** Killed by a fault: gone from the network as if its host vanished. */
    boolean vanished;
    /**
     * RDMA READs this QP may have outstanding as requester: the smaller of the initiator depth it was connected with
     * and the responder resources of its peer (what the CM negotiated); -1 until it is connected (no limit).
     */
    int readDepthLimit = -1;
    /** READs posted and not yet answered: queued, executing, or with their completion still on the way. */
    private int readsOutstanding;
    private int readDepthViolations;
    /** Completions of this QP that no CQ took (dead device, failed or overrun CQ): a drain of it cannot end. */
    int lostCompletions;
    int retryCount = 7;
    int rnrRetry = 7;

    private final ArrayDeque<SendWqe> sq = new ArrayDeque<>();
    private final ArrayDeque<SendWqe> sendPool = new ArrayDeque<>();
    private long sqPosted;
    private long sqRetired;
    private int transportWaits;
    private int rnrWaits;
    private boolean headParked;

    private final ArrayDeque<RecvWqe> rq = new ArrayDeque<>();
    private final ArrayDeque<RecvWqe> recvPool = new ArrayDeque<>();
    private long rqPosted;
    private long rqRetired;

    final Pipe sendPipe;
    final Pipe recvPipe;
    private boolean commEstReported;

    /** Requests of the last failed post that were posted (bad_wr's index in the chain). */
    private int postedBeforeFailure;

    // Faults (SoftFaults sets them). failSendAt / failRecvAt: index in the next chain that reaches it, or -1.
    int failSendAt = -1;
    int failSendErrno;
    int failRecvAt = -1;
    int failRecvErrno;
    int nextSendStatus = -1;
    int nextRecvStatus = -1;

    // Scratch for gather/scatter (no allocation per WR).
    private final SoftMemoryRegion[] srcMr;
    private final SoftMemoryRegion[] dstMr;

    private final Action sqAction = new Action() {
        @Override
        void run() { executeHead(); }
    };

    SoftQueuePair(SoftDevice context, SoftProtectionDomain pd, SoftCompletionQueue sendCq,
                  SoftCompletionQueue recvCq, QpCapabilities caps, boolean signalAll, SoftSharedReceiveQueue srq) {
        this.fabric = context.fabric;
        this.srq = srq;
        this.context = context;
        this.node = context.node;
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.caps = caps;
        this.signalAll = signalAll;
        this.qpNum = context.node.allocateQpNum();
        this.sendPipe = new Pipe(sendCq);
        this.recvPipe = new Pipe(recvCq);
        int sge = Math.max(1, Math.max(caps.maxSendSge(), srq != null ? srq.maxSge() : caps.maxRecvSge()));
        this.srcMr = new SoftMemoryRegion[sge];
        this.dstMr = new SoftMemoryRegion[sge];
    }

    @Override
    public int qpNum() { return qpNum; }

    @Override
    public QpCapabilities capabilities() { return caps; }

    @Override
    public QpState state() {
        fabric.lock.lock();
        try {
            fabric.pumpIfAutomatic();
            return state;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** Send WRs posted and not yet retired by a polled completion (what counts against max_send_wr). */
    public int outstandingSends() {
        fabric.lock.lock();
        try {
            return (int) (sqPosted - sqRetired);
        } finally {
            fabric.lock.unlock();
        }
    }

    /**
     * READs this QP posted beyond its READ depth (see {@link SoftFabric#enforceReadDepth}), counted whether or not
     * the fabric enforces the limit.
     */
    public int readDepthViolations() {
        fabric.lock.lock();
        try {
            return readDepthViolations;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** RDMA READs posted and not yet answered (queued, executing, or completion still on the way to the CQ). */
    public int readsOutstanding() {
        fabric.lock.lock();
        try {
            return readsOutstanding;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** Receive WRs posted and not yet consumed by an incoming message or a flush. */
    public int postedRecvs() {
        fabric.lock.lock();
        try {
            return rq.size();
        } finally {
            fabric.lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------ posting

    @Override
    public int postedBeforeFailure() {
        fabric.lock.lock();
        try {
            return postedBeforeFailure;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public int postSend(SendWorkRequest first) {
        fabric.lock.lock();
        try {
            postedBeforeFailure = 0;
            if (destroyed) return Errno.EINVAL;
            int rc = 0;
            int posted = 0;
            long addr = first.address();
            while (addr != 0) {
                if (posted == failSendAt) {
                    // Injected: the provider refuses this request; bad_wr points at it.
                    rc = failSendErrno;
                    failSendAt = -1;
                    break;
                }
                rc = postOneSend(addr);
                if (rc != 0) break;
                posted++;
                addr = SoftFabric.ALL.get(JAVA_LONG_UNALIGNED, addr + SendWorkRequest.NEXT_OFFSET);
            }
            if (rc != 0) postedBeforeFailure = posted;
            fabric.pumpIfAutomatic();
            return rc;
        } finally {
            fabric.lock.unlock();
        }
    }

    private int postOneSend(long wr) {
        MemorySegment all = SoftFabric.ALL;
        int opcode = all.get(JAVA_INT_UNALIGNED, wr + SendWorkRequest.OPCODE_OFFSET);
        int flags = all.get(JAVA_INT_UNALIGNED, wr + SendWorkRequest.SEND_FLAGS_OFFSET);
        int numSge = all.get(JAVA_INT_UNALIGNED, wr + SendWorkRequest.NUM_SGE_OFFSET);
        if (numSge < 0 || numSge > caps.maxSendSge()) return Errno.EINVAL;
        switch (opcode) {
            case WrOpcode.SEND, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ -> { }
            case WrOpcode.SEND_WITH_INV, WrOpcode.LOCAL_INV -> {
                if (!node.attributes.memoryManagementExtensions()) return Errno.EINVAL;
            }
            case WrOpcode.BIND_MW -> {
                // rxe's provider: a bind carries no data; it reads the window's and the region's keys at post time.
                if (numSge != 0) return Errno.EINVAL;
                if (node.windowByHandle(all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.BIND_MW_MW_OFFSET)) == null
                        || all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.BIND_MW_MR_OFFSET) == 0) {
                    return Errno.EINVAL;
                }
            }
            default -> { return Errno.EINVAL; }
        }
        // A send queue is usable from RTS on; before that a real provider refuses the post (rxe: EINVAL).
        if (state == QpState.RESET || state == QpState.INIT || state == QpState.RTR) return Errno.EINVAL;
        if (sqPosted - sqRetired >= caps.maxSendWr()) return Errno.ENOMEM;
        boolean inline = (flags & SendFlags.INLINE) != 0 && opcode != WrOpcode.RDMA_READ && opcode != WrOpcode.LOCAL_INV
                && opcode != WrOpcode.BIND_MW;
        long sgList = all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.SG_LIST_OFFSET);
        if (inline) {
            long total = 0;
            for (int i = 0; i < numSge; i++) {
                total += all.get(JAVA_INT_UNALIGNED, sgList + (long) i * ScatterGatherEntry.SIZE + ScatterGatherEntry.LENGTH_OFFSET) & 0xffffffffL;
            }
            if (total > caps.maxInlineData()) return Errno.EINVAL;
        }
        SendWqe w = sendPool.poll();
        if (w == null) w = new SendWqe(Math.max(1, caps.maxSendSge()), caps.maxInlineData());
        w.wrId = all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.WR_ID_OFFSET);
        w.opcode = opcode;
        w.signaled = signalAll || (flags & SendFlags.SIGNALED) != 0;
        w.solicited = (flags & SendFlags.SOLICITED) != 0;
        w.invalidateRkey = all.get(JAVA_INT_UNALIGNED, wr + SendWorkRequest.INVALIDATE_RKEY_OFFSET);
        w.remoteAddr = all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.REMOTE_ADDR_OFFSET);
        w.rkey = all.get(JAVA_INT_UNALIGNED, wr + SendWorkRequest.RKEY_OFFSET);
        if (opcode == WrOpcode.BIND_MW) {
            SoftMemoryWindow mw = node.windowByHandle(all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.BIND_MW_MW_OFFSET));
            w.bindWindow = mw;
            w.bindWindowRkey = mw.userRkeyLocked();
            w.bindRkey = all.get(JAVA_INT_UNALIGNED, wr + SendWorkRequest.BIND_MW_RKEY_OFFSET);
            w.bindRegionLkey = (int) all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.BIND_MW_MR_OFFSET);
            w.bindAddr = all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.BIND_MW_ADDR_OFFSET);
            w.bindLength = all.get(JAVA_LONG_UNALIGNED, wr + SendWorkRequest.BIND_MW_LENGTH_OFFSET);
            w.bindAccess = all.get(JAVA_INT_UNALIGNED, wr + SendWorkRequest.BIND_MW_ACCESS_OFFSET);
        } else {
            w.bindWindow = null;
        }
        w.numSge = numSge;
        w.inline = inline;
        w.inlineLength = 0;
        for (int i = 0; i < numSge; i++) {
            long e = sgList + (long) i * ScatterGatherEntry.SIZE;
            w.addr[i] = all.get(JAVA_LONG_UNALIGNED, e + ScatterGatherEntry.ADDR_OFFSET);
            w.len[i] = all.get(JAVA_INT_UNALIGNED, e + ScatterGatherEntry.LENGTH_OFFSET);
            w.lkey[i] = all.get(JAVA_INT_UNALIGNED, e + ScatterGatherEntry.LKEY_OFFSET);
            if (inline) {
                // Inline data is copied at post time: the buffer may be reused as soon as the post returns.
                MemorySegment.copy(all, w.addr[i], w.inlineData, w.inlineLength, w.len[i]);
                w.inlineLength += w.len[i];
            }
        }
        w.index = sqPosted++;
        w.exceedsReadDepth = false;
        if (opcode == WrOpcode.RDMA_READ && state != QpState.ERR && state != QpState.SQE) {
            // A requester sends READ requests back to back; the responder holds one resource per READ until it
            // has answered it. One READ more than the peer's responder resources is a protocol violation.
            readsOutstanding++;
            if (readDepthLimit >= 0 && readsOutstanding > readDepthLimit) {
                w.exceedsReadDepth = true;
                readDepthViolations++;
                fabric.readDepthViolations++;
            }
        }
        if (state == QpState.ERR || state == QpState.SQE) {
            // Posting to a queue in error is not a synchronous failure: the WR completes flushed (thread "drain_sq and
            // drain_rq") --
            // unless the fault models rxe on Linux 6.1, which never completes a send posted after the transition.
            if (!fabric.faults.sendsPostedInErrorVanish) completeSend(w, WcStatus.WR_FLUSH_ERR, 0);
            sendPool.add(w);
        } else {
            sq.add(w);
            kickSq();
        }
        return 0;
    }

    @Override
    public int postRecv(RecvWorkRequest first) {
        fabric.lock.lock();
        try {
            postedBeforeFailure = 0;
            // A QP on an SRQ has no receive queue of its own: rxe refuses the post (rxe_post_recv, EINVAL).
            if (destroyed || srq != null) return Errno.EINVAL;
            int rc = 0;
            int posted = 0;
            long addr = first.address();
            MemorySegment all = SoftFabric.ALL;
            while (addr != 0) {
                if (posted == failRecvAt) {
                    rc = failRecvErrno;
                    failRecvAt = -1;
                    break;
                }
                int numSge = all.get(JAVA_INT_UNALIGNED, addr + RecvWorkRequest.NUM_SGE_OFFSET);
                if (numSge < 0 || numSge > caps.maxRecvSge()) { rc = Errno.EINVAL; break; }
                // Receives are accepted from INIT on (so they can be posted before the connection is accepted).
                if (state == QpState.RESET) { rc = Errno.EINVAL; break; }
                if (rqPosted - rqRetired >= caps.maxRecvWr()) { rc = Errno.ENOMEM; break; }
                RecvWqe r = recvPool.poll();
                if (r == null) r = new RecvWqe(Math.max(1, caps.maxRecvSge()));
                r.copy(addr, numSge);
                r.index = rqPosted++;
                if (state == QpState.ERR) {
                    if (!fabric.faults.receivesPostedInErrorVanish) completeRecv(r, WcStatus.WR_FLUSH_ERR, 0, 0, 0, false);
                    recvPool.add(r);
                } else {
                    rq.add(r);
                }
                posted++;
                addr = all.get(JAVA_LONG_UNALIGNED, addr + RecvWorkRequest.NEXT_OFFSET);
            }
            if (rc != 0) postedBeforeFailure = posted;
            // A sender stalled on receiver-not-ready with infinite retries proceeds once a receive is posted.
            if (peer != null && peer.headParked && !rq.isEmpty()) peer.unpark();
            fabric.pumpIfAutomatic();
            return rc;
        } finally {
            fabric.lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------ state

    @Override
    public void moveToError() {
        fabric.lock.lock();
        try {
            if (destroyed) return;
            enterError(false);
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    /**
     * ibv_modify_qp to {@code target} with the IBA transition rules: any state to RESET or ERR; RESET to INIT;
     * INIT to INIT or RTR; RTR to RTS; RTS to RTS or SQD; SQD to SQD or RTS; SQE to RTS.
     *
     * @return 0, or EINVAL for a transition the state machine does not allow
     */
    public int modify(QpState target) {
        fabric.lock.lock();
        try {
            if (destroyed) return Errno.EINVAL;
            int rc = transition(target);
            fabric.pumpIfAutomatic();
            return rc;
        } finally {
            fabric.lock.unlock();
        }
    }

    int transition(QpState target) {
        QpState s = state;
        switch (target) {
            case RESET -> {
                reset();
                return 0;
            }
            case ERR -> {
                enterError(false);
                return 0;
            }
            case INIT -> {
                if (s != QpState.RESET && s != QpState.INIT) return Errno.EINVAL;
            }
            case RTR -> {
                if (s != QpState.INIT) return Errno.EINVAL;
            }
            case RTS -> {
                if (s != QpState.RTR && s != QpState.RTS && s != QpState.SQD && s != QpState.SQE) return Errno.EINVAL;
            }
            case SQD -> {
                if (s != QpState.RTS && s != QpState.SQD) return Errno.EINVAL;
            }
            default -> {
                return Errno.EINVAL;
            }
        }
        state = target;
        if (target == QpState.SQD && s == QpState.RTS) {
            // Work runs one WR at a time, so nothing is in flight: the drain is immediate.
            context.postAsync(new AsyncEvent(AsyncEvent.Type.SQ_DRAINED, qpNum));
        }
        if (target == QpState.RTS) kickSq();
        notifyPeer();
        return 0;
    }

    private void reset() {
        // RESET discards every WR without completions.
        for (SendWqe w : sq) sendPool.add(w);
        sq.clear();
        for (RecvWqe r : rq) recvPool.add(r);
        rq.clear();
        sendPipe.drop();
        recvPipe.drop();
        sqPosted = sqRetired = rqPosted = rqRetired = 0;
        readsOutstanding = 0;
        transportWaits = rnrWaits = 0;
        headParked = false;
        commEstReported = false;
        fabric.cancel(sqAction);
        state = QpState.RESET;
        notifyPeer();
    }

    /**
     * The QP enters the error state: every WR still queued completes with WR_FLUSH_ERR, send queue then receive
     * queue, each in posting order and behind the completions already produced.
     */
    void enterError(boolean fatal) {
        if (destroyed || state == QpState.ERR) return;
        state = QpState.ERR;
        fabric.cancel(sqAction);
        headParked = false;
        transportWaits = rnrWaits = 0;
        flushSendQueue();
        for (RecvWqe r : rq) {
            completeRecv(r, WcStatus.WR_FLUSH_ERR, 0, 0, 0, false);
            recvPool.add(r);
        }
        rq.clear();
        if (fatal) context.postAsync(new AsyncEvent(AsyncEvent.Type.QP_FATAL, qpNum));
        notifyPeer();
    }

    /** Send Queue Error: the send queue flushes, the receive queue keeps working; modify to RTS recovers. */
    void enterSendQueueError() {
        if (destroyed || state == QpState.ERR || state == QpState.SQE) return;
        state = QpState.SQE;
        fabric.cancel(sqAction);
        headParked = false;
        transportWaits = rnrWaits = 0;
        flushSendQueue();
    }

    private void flushSendQueue() {
        for (SendWqe w : sq) {
            completeSend(w, WcStatus.WR_FLUSH_ERR, 0);
            sendPool.add(w);
        }
        sq.clear();
    }

    private void notifyPeer() {
        if (peer != null && peer.headParked) peer.unpark();
    }

    /** A receive was posted to this QP's SRQ: a sender parked on receiver-not-ready towards it proceeds. */
    void peerMayProceed() {
        if (peer != null && peer.headParked) peer.unpark();
    }

    /**
     * Where an arriving SEND takes its receive from: the SRQ, or its own receive queue. Only what was already taken
     * is this QP's; the error state flushes its own queue and leaves the SRQ's receives to the other QPs (IBA chapter
     * 10, shared receive queues).
     */
    private ArrayDeque<RecvWqe> receiveQueue() { return srq != null ? srq.rq : rq; }

    void unpark() {
        headParked = false;
        kickSq();
    }

    private void kickSq() {
        if (!headParked && !sqAction.scheduled && !sq.isEmpty() && state == QpState.RTS) {
            fabric.scheduleWire(sqAction);
        }
    }

    /** The peer stopped answering (a fault): treated like an unreachable peer. */
    void vanish() {
        vanished = true;
        enterError(false);
    }

    void destroy() {
        if (destroyed) return;
        boolean undrained = !sq.isEmpty() || !rq.isEmpty() || sendPipe.pending() || recvPipe.pending()
                || sendCq.holds(this) || recvCq.holds(this) || lostCompletions > 0;
        if (undrained && state != QpState.RESET) fabric.resources.undrainedQpDestroys++;
        destroyed = true;
        if (srq != null) srq.qps.remove(this);
        fabric.cancel(sqAction);
        sendPipe.drop();
        recvPipe.drop();
        sendCq.purge(this);
        if (recvCq != sendCq) recvCq.purge(this);
        sendCq.qps.remove(this);
        if (recvCq != sendCq) recvCq.qps.remove(this);
        pd.users--;
        node.qps.remove(this);
        fabric.resources.remove(SoftResources.Kind.QP, this);
        notifyPeer();
    }

    boolean reachable() {
        return !destroyed && !vanished && !node.offTheWire()
                && (state == QpState.RTR || state == QpState.RTS || state == QpState.SQD || state == QpState.SQE);
    }

    // ------------------------------------------------------------------------------------------ execution

    /** Executes the WR at the head of the send queue (one fabric step). */
    private void executeHead() {
        // A dead device executes nothing: what is queued stays queued, and never completes.
        if (state != QpState.RTS || node.dead) return;
        SendWqe w = sq.peek();
        if (w == null) return;
        if (nextSendStatus >= 0) {
            int st = nextSendStatus;
            nextSendStatus = -1;
            finishHead(w, st, st == WcStatus.SUCCESS ? totalLength(w) : 0);
            return;
        }
        if (w.opcode == WrOpcode.LOCAL_INV) {
            // rxe: only windows (and fast-registration regions, which user space cannot make) can be invalidated;
            // anything else fails the WR with LOC_QP_OP_ERR.
            SoftMemoryWindow mw = node.windowByRkey(w.invalidateRkey);
            if (mw == null || !mw.valid || mw.pd != pd) {
                finishHead(w, WcStatus.LOC_QP_OP_ERR, 0);
            } else {
                mw.unbind();
                finishHead(w, WcStatus.SUCCESS, 0);
            }
            return;
        }
        if (w.opcode == WrOpcode.BIND_MW) {
            finishHead(w, bindWindow(w), 0);
            return;
        }
        boolean readsLocal = w.opcode != WrOpcode.RDMA_READ;
        long total = 0;
        if (w.inline) {
            total = w.inlineLength;
        } else {
            for (int i = 0; i < w.numSge; i++) {
                long len = w.len[i] & 0xffffffffL;
                SoftMemoryRegion mr = localRegion(w.lkey[i], w.addr[i], len, !readsLocal);
                if (mr == null) {
                    finishHead(w, WcStatus.LOC_PROT_ERR, 0);
                    return;
                }
                srcMr[i] = mr;
                total += len;
            }
        }
        SoftQueuePair p = peer;
        if (p == null || p.peer != this || !p.reachable() || !reachable()) {
            // No ACK comes back: the requester retries retry_count times, one local ACK timeout each.
            if (transportWaits <= retryCount) {
                transportWaits++;
                fabric.scheduleIn(sqAction, fabric.ackTimeoutNanos);
                return;
            }
            finishHead(w, WcStatus.RETRY_EXC_ERR, 0);
            return;
        }
        p.maybeCommunicationEstablished();
        switch (w.opcode) {
            case WrOpcode.SEND, WrOpcode.SEND_WITH_INV -> executeSend(w, p, total);
            case WrOpcode.RDMA_WRITE -> {
                if (total > 0) {
                    SoftMemoryRegion rmr = p.remoteRegion(w.rkey, w.remoteAddr, total, Access.REMOTE_WRITE);
                    if (rmr == null) {
                        responderError(p, w, WcStatus.REM_ACCESS_ERR);
                        return;
                    }
                    scatterTo(w, rmr.segment(), w.remoteAddr - rmr.address(), total);
                }
                finishHead(w, WcStatus.SUCCESS, (int) total);
            }
            case WrOpcode.RDMA_READ -> {
                if (w.exceedsReadDepth && fabric.enforceReadDepth) {
                    // The responder has no resource left for it: NAK "invalid request" (kernel rxe, rxe_resp.c:
                    // RESPST_ERR_TOO_MANY_RDMA_ATM_REQ, class C); the responder goes to error, and so does the
                    // requester, whose READ completes with REM_INV_REQ_ERR (IBA chapter 9, responder errors).
                    responderError(p, w, WcStatus.REM_INV_REQ_ERR);
                    return;
                }
                if (total > 0) {
                    SoftMemoryRegion rmr = p.remoteRegion(w.rkey, w.remoteAddr, total, Access.REMOTE_READ);
                    if (rmr == null) {
                        responderError(p, w, WcStatus.REM_ACCESS_ERR);
                        return;
                    }
                    long off = w.remoteAddr - rmr.address();
                    for (int i = 0; i < w.numSge; i++) {
                        long len = w.len[i] & 0xffffffffL;
                        MemorySegment.copy(rmr.segment(), off, srcMr[i].segment(), w.addr[i] - srcMr[i].address(), len);
                        off += len;
                    }
                }
                finishHead(w, WcStatus.SUCCESS, (int) total);
            }
            default -> finishHead(w, WcStatus.LOC_QP_OP_ERR, 0);
        }
    }

    private void executeSend(SendWqe w, SoftQueuePair p, long total) {
        RecvWqe r = p.receiveQueue().peek();
        if (r == null) {
            // Receiver not ready: RNR NAK. rnr_retry 7 means retry forever: wait for a receive to be posted.
            if (rnrRetry == 7) {
                headParked = true;
                return;
            }
            if (rnrWaits < rnrRetry) {
                rnrWaits++;
                fabric.scheduleIn(sqAction, fabric.rnrTimerNanos);
                return;
            }
            finishHead(w, WcStatus.RNR_RETRY_EXC_ERR, 0);
            return;
        }
        if (p.nextRecvStatus >= 0) {
            int st = p.nextRecvStatus;
            p.nextRecvStatus = -1;
            p.consumeRecv(r, st, 0, 0, false, w.solicited);
            p.enterError(false);
            finishHead(w, WcStatus.REM_OP_ERR, 0);
            return;
        }
        long capacity = 0;
        for (int i = 0; i < r.numSge; i++) {
            long len = r.len[i] & 0xffffffffL;
            SoftMemoryRegion mr = p.localRegion(r.lkey[i], r.addr[i], len, true);
            if (mr == null) {
                p.consumeRecv(r, WcStatus.LOC_PROT_ERR, 0, 0, false, w.solicited);
                p.enterError(false);
                finishHead(w, WcStatus.REM_OP_ERR, 0);
                return;
            }
            p.dstMr[i] = mr;
            capacity += len;
        }
        if (total > capacity) {
            p.consumeRecv(r, WcStatus.LOC_LEN_ERR, 0, 0, false, w.solicited);
            p.enterError(false);
            finishHead(w, WcStatus.REM_INV_REQ_ERR, 0);
            return;
        }
        SoftMemoryWindow inv = null;
        boolean invalidateFails = false;
        if (w.opcode == WrOpcode.SEND_WITH_INV) {
            // Only a bound type-2 window of the receiver's PD can be invalidated remotely: a region's rkey (ibv_reg_mr)
            // cannot, nor an unknown, stale or already invalidated key.
            inv = p.node.windowByRkey(w.invalidateRkey);
            if (inv == null || !inv.valid || inv.pd != p.pd) invalidateFails = true;
        }
        // Gather from the requester, scatter into the receive buffers.
        long srcIndex = 0;
        int di = 0;
        long dstOff = 0;
        long remaining = total;
        int si = 0;
        long srcOff = 0;
        while (remaining > 0) {
            long srcLeft = (w.inline ? w.inlineLength : (w.len[si] & 0xffffffffL)) - srcOff;
            if (srcLeft == 0) { si++; srcOff = 0; continue; }
            long dstLeft = (r.len[di] & 0xffffffffL) - dstOff;
            if (dstLeft == 0) { di++; dstOff = 0; continue; }
            long n = Math.min(remaining, Math.min(srcLeft, dstLeft));
            MemorySegment dst = p.dstMr[di].segment();
            long dstPos = r.addr[di] - p.dstMr[di].address() + dstOff;
            if (w.inline) {
                MemorySegment.copy(w.inlineData, srcIndex, dst, dstPos, n);
            } else {
                MemorySegment.copy(srcMr[si].segment(), w.addr[si] - srcMr[si].address() + srcOff, dst, dstPos, n);
            }
            srcIndex += n;
            srcOff += n;
            dstOff += n;
            remaining -= n;
        }
        if (invalidateFails) {
            // rxe (rxe_resp.c, RESPST_ERR_INVALIDATE_RKEY, "Class J"): the payload has landed, the invalidation
            // fails, the receive completes with REM_INV_REQ_ERR and the receiver's QP goes to error -- but the
            // request was already ACKed, so the sender's SEND_WITH_INV completes successfully. The sender learns
            // of it only when its next request gets no answer (retries exhausted).
            p.consumeRecv(r, WcStatus.REM_INV_REQ_ERR, 0, 0, false, w.solicited);
            p.enterError(false);
            finishHead(w, WcStatus.SUCCESS, (int) total);
            return;
        }
        if (inv != null) inv.unbind();
        p.consumeRecv(r, WcStatus.SUCCESS, (int) total, inv == null ? 0 : w.invalidateRkey, inv != null, w.solicited);
        finishHead(w, WcStatus.SUCCESS, (int) total);
    }

    /** Copies the WR's gathered data (SGEs or inline) into one contiguous remote range. */
    private void scatterTo(SendWqe w, MemorySegment dst, long dstOff, long total) {
        if (w.inline) {
            MemorySegment.copy(w.inlineData, 0, dst, dstOff, total);
            return;
        }
        for (int i = 0; i < w.numSge; i++) {
            long len = w.len[i] & 0xffffffffL;
            MemorySegment.copy(srcMr[i].segment(), w.addr[i] - srcMr[i].address(), dst, dstOff, len);
            dstOff += len;
        }
    }

    /** A NAK from the responder (remote access error): both ends go to the error state (IBA class C/D). */
    private void responderError(SoftQueuePair p, SendWqe w, int status) {
        p.enterError(false);
        finishHead(w, status, 0);
    }

    private static long totalLength(SendWqe w) {
        if (w.inline) return w.inlineLength;
        long t = 0;
        for (int i = 0; i < w.numSge; i++) t += w.len[i] & 0xffffffffL;
        return t;
    }

    private void finishHead(SendWqe w, int status, long byteLen) {
        sq.poll();
        transportWaits = 0;
        rnrWaits = 0;
        // Error completions are always reported; success only for signaled WRs.
        if (status != WcStatus.SUCCESS || w.signaled) {
            completeSend(w, status, (int) byteLen);
        } else if (w.opcode == WrOpcode.RDMA_READ) {
            readsOutstanding--;   // answered, and no completion to wait for
        }
        sendPool.add(w);
        if (status != WcStatus.SUCCESS) {
            enterError(false);
        } else if (!sq.isEmpty()) {
            // The next WR follows back to back (no new wire latency within a burst).
            fabric.schedule(sqAction, fabric.nowLocked());
        }
    }

    private void consumeRecv(RecvWqe r, int status, int byteLen, int invalidatedRkey, boolean withInv, boolean solicited) {
        receiveQueue().poll();
        completeRecv(r, status, byteLen, invalidatedRkey, withInv ? WorkCompletion.WC_WITH_INV : 0, solicited);
        if (srq != null) srq.recycle(r); else recvPool.add(r);
    }

    /** IBV_EVENT_COMM_EST: the first packet reached a QP whose connection the CM has not yet reported established. */
    private void maybeCommunicationEstablished() {
        if (commEstReported) return;
        if (state == QpState.RTR || (cmId != null && cmId.awaitingRtu())) {
            commEstReported = true;
            context.postAsync(new AsyncEvent(AsyncEvent.Type.COMM_EST, qpNum));
        }
    }

    /**
     * Executes a BIND_MW (rxe_bind_mw / rxe_check_bind_mw): the window named by the key recorded at post time must
     * hold that key, be free (type 2 binds from the free state only) and belong to this QP's PD; the region must be
     * alive, of the same PD, registered with MW_BIND (and LOCAL_WRITE when remote write is granted) and contain the
     * range. Success gives the window the request's key byte and binds it to this QP.
     */
    private int bindWindow(SendWqe w) {
        SoftMemoryWindow mw = w.bindWindow;
        if (mw.closed || mw.deviceRkey != w.bindWindowRkey || mw.valid || mw.pd != pd) return WcStatus.MW_BIND_ERR;
        SoftMemoryRegion mr = node.byLkey(w.bindRegionLkey);
        if (mr == null || mr.closed || mr.pd != pd) return WcStatus.MW_BIND_ERR;
        if ((mr.access & Access.MW_BIND) == 0) return WcStatus.MW_BIND_ERR;
        if ((w.bindAccess & (Access.REMOTE_WRITE | Access.REMOTE_ATOMIC)) != 0 && (mr.access & Access.LOCAL_WRITE) == 0) {
            return WcStatus.MW_BIND_ERR;
        }
        if (w.bindLength < 0 || !mr.covers(w.bindAddr, w.bindLength)) return WcStatus.MW_BIND_ERR;
        mw.deviceRkey = (mw.deviceRkey & 0xffffff00) | (w.bindRkey & 0xff);
        mw.valid = true;
        mw.mr = mr;
        mw.addr = w.bindAddr;
        mw.length = w.bindLength;
        mw.access = w.bindAccess;
        mw.qp = this;
        mr.boundWindows++;
        return WcStatus.SUCCESS;
    }

    SoftMemoryRegion localRegion(int lkey, long addr, long len, boolean write) {
        SoftMemoryRegion mr = node.byLkey(lkey);
        if (mr == null || mr.closed || mr.pd != pd || !mr.covers(addr, len)) return null;
        if (write && (mr.access & Access.LOCAL_WRITE) == 0) return null;
        return mr;
    }

    /**
     * The region an incoming RDMA READ/WRITE reaches through {@code rkey}: a region's own rkey, or a bound window's
     * (checked against the window's range and access, and only for the QP that bound it), else null (REM_ACCESS_ERR).
     */
    SoftMemoryRegion remoteRegion(int rkey, long addr, long len, int access) {
        SoftMemoryRegion mr = node.byRkey(rkey);
        if (mr == null) {
            SoftMemoryWindow mw = node.windowByRkey(rkey);
            if (mw == null || !mw.valid || mw.qp != this || mw.pd != pd || !mw.covers(addr, len)) return null;
            if ((mw.access & access) == 0 || mw.mr == null || mw.mr.closed) return null;
            return mw.mr;
        }
        if (mr.closed || mr.pd != pd || !mr.covers(addr, len)) return null;
        if ((mr.access & access) == 0) return null;
        return mr;
    }

    // ------------------------------------------------------------------------------------------ completions

    private void completeSend(SendWqe w, int status, int byteLen) {
        Cqe c = fabric.obtainCqe();
        c.wrId = w.wrId;
        c.status = status;
        c.opcode = switch (w.opcode) {
            case WrOpcode.RDMA_WRITE -> WcOpcode.RDMA_WRITE;
            case WrOpcode.RDMA_READ -> WcOpcode.RDMA_READ;
            case WrOpcode.LOCAL_INV -> WcOpcode.LOCAL_INV;
            case WrOpcode.BIND_MW -> WcOpcode.BIND_MW;
            default -> WcOpcode.SEND;
        };
        c.byteLen = byteLen;
        c.invalidatedRkey = 0;
        c.qpNum = qpNum;
        c.wcFlags = 0;
        c.solicited = false;
        c.qp = this;
        c.sendQueue = true;
        c.index = w.index;
        sendPipe.push(c);
    }

    private void completeRecv(RecvWqe r, int status, int byteLen, int invalidatedRkey, int flags, boolean solicited) {
        Cqe c = fabric.obtainCqe();
        c.wrId = r.wrId;
        c.status = status;
        c.opcode = WcOpcode.RECV;
        c.byteLen = byteLen;
        c.invalidatedRkey = invalidatedRkey;
        c.qpNum = qpNum;
        c.wcFlags = flags;
        c.solicited = solicited;
        c.qp = this;
        c.sendQueue = false;
        c.index = r.index;
        recvPipe.push(c);
    }

    /** Polling a completion frees its slot and, on the send queue, every earlier slot. */
    void retire(Cqe c) {
        if (destroyed) return;
        if (c.sendQueue) {
            if (c.index + 1 > sqRetired) sqRetired = c.index + 1;
        } else if (srq == null && c.index + 1 > rqRetired) {
            rqRetired = c.index + 1;
        }
    }

    @Override
    public String toString() { return "SoftQueuePair[" + qpNum + " " + state + " on " + node.name + "]"; }

    // ------------------------------------------------------------------------------------------ inner types

    static final class SendWqe {
        long wrId;
        int opcode;
        boolean signaled;
        boolean solicited;
        int invalidateRkey;
        // BIND_MW: the window, the key it was named by at post time, the new key, the region's lkey, range, access.
        SoftMemoryWindow bindWindow;
        int bindWindowRkey;
        int bindRkey;
        int bindRegionLkey;
        long bindAddr;
        long bindLength;
        int bindAccess;
        long remoteAddr;
        int rkey;
        int numSge;
        final long[] addr;
        final int[] len;
        final int[] lkey;
        boolean inline;
        /** An RDMA READ posted beyond the QP's READ depth. */
        boolean exceedsReadDepth;
        final MemorySegment inlineData;
        int inlineLength;
        long index;

        SendWqe(int maxSge, int maxInline) {
            addr = new long[maxSge];
            len = new int[maxSge];
            lkey = new int[maxSge];
            inlineData = MemorySegment.ofArray(new byte[Math.max(0, maxInline)]);
        }
    }

    static final class RecvWqe {
        long wrId;
        int numSge;
        final long[] addr;
        final int[] len;
        final int[] lkey;
        long index;

        RecvWqe(int maxSge) {
            addr = new long[maxSge];
            len = new int[maxSge];
            lkey = new int[maxSge];
        }

        /** Copies the native ibv_recv_wr at {@code wr} (its {@code numSge} entries, checked by the caller). */
        void copy(long wr, int numSge) {
            MemorySegment all = SoftFabric.ALL;
            wrId = all.get(JAVA_LONG_UNALIGNED, wr + RecvWorkRequest.WR_ID_OFFSET);
            this.numSge = numSge;
            long sgList = all.get(JAVA_LONG_UNALIGNED, wr + RecvWorkRequest.SG_LIST_OFFSET);
            for (int i = 0; i < numSge; i++) {
                long e = sgList + (long) i * ScatterGatherEntry.SIZE;
                addr[i] = all.get(JAVA_LONG_UNALIGNED, e + ScatterGatherEntry.ADDR_OFFSET);
                len[i] = all.get(JAVA_INT_UNALIGNED, e + ScatterGatherEntry.LENGTH_OFFSET);
                lkey[i] = all.get(JAVA_INT_UNALIGNED, e + ScatterGatherEntry.LKEY_OFFSET);
            }
        }
    }

    /** Completions of one queue on their way to the CQ, in order; a delay fault holds them back. */
    final class Pipe extends Action {
        private final SoftCompletionQueue cq;
        private final ArrayDeque<Cqe> queue = new ArrayDeque<>();
        private long lastDue;
        long delayNanos;

        Pipe(SoftCompletionQueue cq) { this.cq = cq; }

        void push(Cqe c) {
            long now = fabric.nowLocked();
            long due = Math.max(now + delayNanos, lastDue);
            if (queue.isEmpty() && due <= now) {
                handOver(c);
                return;
            }
            c.due = due;
            lastDue = due;
            queue.add(c);
            if (!scheduled) fabric.schedule(this, queue.peek().due);
        }

        @Override
        void run() {
            long now = fabric.nowLocked();
            while (!queue.isEmpty() && queue.peek().due <= now) handOver(queue.poll());
            if (!queue.isEmpty()) fabric.schedule(this, queue.peek().due);
        }

        /** The completion reaches the CQ: a READ's answer has arrived. */
        private void handOver(Cqe c) {
            if (c.sendQueue && c.opcode == WcOpcode.RDMA_READ) readsOutstanding--;
            cq.deliver(c);
        }

        boolean pending() { return !queue.isEmpty(); }

        void drop() {
            fabric.cancel(this);
            for (Cqe c : queue) fabric.recycle(c);
            queue.clear();
            lastDue = 0;
        }
    }
}
