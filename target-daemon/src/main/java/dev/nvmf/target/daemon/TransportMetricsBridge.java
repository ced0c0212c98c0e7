package dev.nvmf.target.daemon;

import dev.nvmf.target.metrics.ConnectionReject;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.rdma.PollerCounter;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.target.rdma.RdmaMetrics.RejectReason;
import dev.nvmf.target.rdma.VerbsCalls;
import dev.nvmf.verbs.WcStatus;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * Exposes the RDMA transport's own counters ({@link RdmaMetrics}: LongAdders the CM thread bumps, PollerCounters the
 * pollers bump) in the daemon's registry. Function counters and gauges read them when Prometheus scrapes, so the I/O
 * path pays nothing beyond the counters it already has. Names are transport-wide ({@code nvmf_rdma_*}, no poller label)
 * and do not collide with {@code PollerMetrics}' per-poller series.
 *
 * <p>Connection rejects are the exception: {@link TargetMetrics} already owns {@code nvmf_connection_rejects_total}
 * as push counters, so {@link #pushRejects()} (before every scrape, and on the daemon's timer turns) adds the adders' growth to
 * them.
 */
final class TransportMetricsBridge implements AutoCloseable {
    private final MeterRegistry registry;
    private final TargetMetrics metrics;
    private final RdmaMetrics rdma;
    private final List<Meter> meters = new ArrayList<>();
    private final long[] rejectsSeen = new long[RejectReason.values().length];
    private final Runnable pushOnScrape = this::pushRejects;

    TransportMetricsBridge(TargetMetrics metrics, RdmaMetrics rdma) {
        this(metrics, rdma, List.of());
    }

    /**
     * @param pollerCalls each poller's count of verbs downcalls, by poller index: {@code
     *                    nvmf_rdma_verbs_calls_total{poller,call}} (single-writer counters read when scraped)
     */
    TransportMetricsBridge(TargetMetrics metrics, RdmaMetrics rdma, List<VerbsCalls> pollerCalls) {
        this.metrics = metrics;
        this.registry = metrics.registry();
        this.rdma = rdma;
        metrics.beforeScrape(pushOnScrape);
        counter("nvmf.rdma.commands.received", "command capsules received", rdma.commandsReceived);
        counter("nvmf.rdma.responses.sent", "response capsules sent (SEND or SEND_WITH_INV)", rdma.responsesSent);
        counter("nvmf.rdma.in.capsule.commands", "commands whose data came inside the capsule",
                rdma.inCapsuleCommands);
        counter("nvmf.rdma.zero.copy.commands", "keyed commands whose data moved straight between the host and a RAM"
                + " namespace's memory (transport.zero_copy)", rdma.zeroCopyCommands);
        counter("nvmf.rdma.reads", "RDMA READs posted (host data of writes with a keyed SGL)", rdma.rdmaReads);
        counter("nvmf.rdma.writes", "RDMA WRITEs posted (data of reads, before the response)", rdma.rdmaWrites);
        counter("nvmf.rdma.remote.invalidations", "responses sent with SEND_WITH_INV (host asked to invalidate)",
                rdma.remoteInvalidations);
        counter("nvmf.rdma.send.work.requests", "send-queue work requests posted (SEND, WRITE, READ)",
                rdma.sendWorkRequestsPosted);
        counter("nvmf.rdma.recv.work.requests", "receive work requests posted", rdma.recvWorkRequestsPosted);
        counter("nvmf.rdma.signaled.work.requests", "send-queue work requests posted signaled",
                rdma.signaledWorkRequests);
        counter("nvmf.rdma.send.queue.waits", "times a request waited for send-queue budget or READ depth",
                rdma.sendBudgetWaits);
        counter("nvmf.rdma.buffer.waits", "times a request waited for a free registered data buffer",
                rdma.bufferWaits);
        counter("nvmf.rdma.flushed.completions", "completions flushed by a queue drain (WR_FLUSH_ERR)",
                rdma.flushCompletions);
        counter("nvmf.rdma.early.capsules", "capsules that arrived before the CM's ESTABLISHED event",
                rdma.earlyCapsules);
        counter("nvmf.rdma.credit.overruns", "queues closed because the host sent beyond its credits",
                rdma.creditOverruns);
        counter("nvmf.rdma.drain.timeouts", "queue drains that did not end within transport.drain_timeout (their QPs"
                + " were destroyed)", rdma.drainTimeouts);
        counter("nvmf.rdma.device.failures", "devices found dead (fatal event, removal, failed CQ or completion"
                + " channel) and torn down", rdma.deviceFailures);
        counter("nvmf.rdma.queues.accepted", "RDMA queues (connections) accepted", rdma.queuesAccepted);
        counter("nvmf.rdma.queues.released", "RDMA queues drained and released", rdma.queuesClosed);
        meters.add(Gauge.builder("nvmf.rdma.queues.open", rdma.queuesOpen, a -> a.get())
                .description("RDMA queues accepted and not yet released").register(registry));
        // Every command gets exactly one response capsule, so the difference is what the target holds now.
        meters.add(Gauge.builder("nvmf.queue.depth.in.use", rdma,
                        m -> Math.max(0, m.commandsReceived.sum() - m.responsesSent.sum()))
                .description("commands received and not yet answered, over all queues").register(registry));
        for (int p = 0; p < pollerCalls.size(); p++) {
            VerbsCalls calls = pollerCalls.get(p);
            for (VerbsCalls.Call call : VerbsCalls.Call.values()) {
                meters.add(FunctionCounter.builder("nvmf.rdma.verbs.calls", calls, c -> c.count(call))
                        .tag("poller", Integer.toString(p)).tag("call", call.label())
                        .description("verbs downcalls a poller made (poll_cq_empty: the poll_cq calls that found"
                                + " nothing; epoll_wait: its blocks)")
                        .register(registry));
            }
        }
        for (int s = 0; s <= WcStatus.GENERAL_ERR; s++) {
            if (s == WcStatus.SUCCESS || s == WcStatus.WR_FLUSH_ERR) {
                continue;
            }
            int status = s;
            meters.add(FunctionCounter.builder("nvmf.rdma.failed.completions", rdma,
                            m -> m.errorCompletions(status)).tag("status", WcStatus.name(status))
                    .description("work completions with an error status other than flush, by ibv_wc_status")
                    .register(registry));
        }
    }

    private void counter(String name, String description, LongAdder adder) {
        meters.add(FunctionCounter.builder(name, adder, LongAdder::sum).description(description).register(registry));
    }

    private void counter(String name, String description, PollerCounter counter) {
        meters.add(FunctionCounter.builder(name, counter, PollerCounter::sum).description(description)
                .register(registry));
    }

    /** The transport's reject reasons in the metrics' vocabulary. */
    static ConnectionReject map(RejectReason r) {
        return switch (r) {
            case INVALID_PRIVATE_DATA_LENGTH, INVALID_RECFMT -> ConnectionReject.INVALID_PRIVATE_DATA;
            case INVALID_QID -> ConnectionReject.INVALID_QUEUE_ID;
            case INVALID_HSQSIZE, INVALID_HRQSIZE -> ConnectionReject.INVALID_QUEUE_SIZE;
            case NO_RESOURCES -> ConnectionReject.NO_RESOURCES;
            case INVALID_IRD, INVALID_ORD -> ConnectionReject.INVALID_IRD_ORD;
            default -> ConnectionReject.OTHER;
        };
    }

    /**
     * Adds rejects counted by the transport since the last call to the daemon's reject counters; returns how many
     * (one thread at a time: a scrape, a timer turn, then stop).
     */
    synchronized long pushRejects() {
        long total = 0;
        for (RejectReason r : RejectReason.values()) {
            long now = rdma.rejects(r);
            long delta = now - rejectsSeen[r.ordinal()];
            rejectsSeen[r.ordinal()] = now;
            for (long i = 0; i < delta; i++) {
                metrics.connectionRejected(map(r));
            }
            total += delta;
        }
        return total;
    }

    @Override
    public void close() {
        metrics.removeBeforeScrape(pushOnScrape);
        pushRejects();
        meters.forEach(registry::remove);
        meters.clear();
    }
}
