package dev.nvmf.target.rdma;

import dev.nvmf.verbs.WcStatus;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of the RDMA transport, written by the CM thread and the pollers, readable from any thread (the
 * metrics layer reads them on scrape). Those the I/O path bumps are {@link PollerCounter}s, a slot per poller written
 * without an atomic instruction; the control path's are LongAdders. Both allocate nothing once made.
 */
public final class RdmaMetrics {
    /** Send work requests posted (data WRs and response SENDs). */
    public final PollerCounter sendWorkRequestsPosted = new PollerCounter();
    /** Receive work requests posted. */
    public final PollerCounter recvWorkRequestsPosted = new PollerCounter();
    /** Send work requests posted with the SIGNALED flag. */
    public final PollerCounter signaledWorkRequests = new PollerCounter();
    /** Times a request had to wait for send-queue budget (or READ depth). */
    public final LongAdder sendBudgetWaits = new LongAdder();
    /** Times a request had to wait for a free data buffer. */
    public final LongAdder bufferWaits = new LongAdder();
    /** Completions with IBV_WC_WR_FLUSH_ERR (normal during a drain). */
    public final LongAdder flushCompletions = new LongAdder();
    /** Commands received. */
    public final PollerCounter commandsReceived = new PollerCounter();
    /** Responses sent (SEND or SEND_WITH_INV posted). */
    public final PollerCounter responsesSent = new PollerCounter();
    /** Responses sent with SEND_WITH_INV. */
    public final PollerCounter remoteInvalidations = new PollerCounter();
    /** Commands whose data moved straight between the host and a RAM namespace's memory (zero copy). */
    public final PollerCounter zeroCopyCommands = new PollerCounter();
    /** Commands whose data came inside the capsule (SGL data block, offset subtype). */
    public final PollerCounter inCapsuleCommands = new PollerCounter();
    /** RDMA READs posted (host data of writes with a keyed SGL). */
    public final PollerCounter rdmaReads = new PollerCounter();
    /** RDMA WRITEs posted (data of reads, chained before the response SEND). */
    public final PollerCounter rdmaWrites = new PollerCounter();
    /** Capsules that arrived before ESTABLISHED and were kept. */
    public final LongAdder earlyCapsules = new LongAdder();
    /** Queues closed because the host sent more capsules than its credits. */
    public final LongAdder creditOverruns = new LongAdder();
    /** Queues accepted / fully drained and released. */
    public final LongAdder queuesAccepted = new LongAdder();
    public final LongAdder queuesClosed = new LongAdder();
    /** Drains that did not end within the drain timeout: their QPs were destroyed to stop the hardware. */
    public final LongAdder drainTimeouts = new LongAdder();
    /** Devices found dead (DEVICE_FATAL, removal, a failed CQ or completion channel) and torn down. */
    public final LongAdder deviceFailures = new LongAdder();
    /** Queues currently open (accepted, not yet released). */
    public final AtomicLong queuesOpen = new AtomicLong();

    private final LongAdder[] errorCompletions = new LongAdder[WcStatus.GENERAL_ERR + 2];
    private final LongAdder[] rejects = new LongAdder[RejectReason.values().length];

    public RdmaMetrics() {
        for (int i = 0; i < errorCompletions.length; i++) errorCompletions[i] = new LongAdder();
        for (int i = 0; i < rejects.length; i++) rejects[i] = new LongAdder();
    }

    /** Error completions (other than flush) by {@link WcStatus} value; unknown values share the last slot. */
    public long errorCompletions(int wcStatus) {
        return errorCompletions[slot(wcStatus)].sum();
    }

    public void errorCompletion(int wcStatus) {
        errorCompletions[slot(wcStatus)].increment();
    }

    private int slot(int wcStatus) {
        return wcStatus >= 0 && wcStatus < errorCompletions.length - 1 ? wcStatus : errorCompletions.length - 1;
    }

    public long rejects(RejectReason reason) {
        return rejects[reason.ordinal()].sum();
    }

    public void reject(RejectReason reason) {
        rejects[reason.ordinal()].increment();
    }

    /** Why a connect request was refused (the first ones map to the NVMe RDMA reject status codes). */
    public enum RejectReason {
        INVALID_PRIVATE_DATA_LENGTH, INVALID_RECFMT, INVALID_QID, INVALID_HSQSIZE, INVALID_HRQSIZE, NO_RESOURCES,
        INVALID_IRD, INVALID_ORD, UNKNOWN_PORT
    }
}
