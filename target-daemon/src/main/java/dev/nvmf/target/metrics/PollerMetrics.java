package dev.nvmf.target.metrics;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLongArray;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/**
 * Counters of one poller (one thread owning one completion queue and its queue pairs): RDMA work requests,
 * send-budget waits, flush and error completions, open queues and commands in flight.
 *
 * <p>Single writer: every method except the gauges' readers is called by the owning poller thread only, so the
 * counters are plain fields published with opaque writes (no atomics, no allocation, no contention on the I/O
 * path); a scrape reads them with opaque reads, which is enough for monotonic counters. Exported through
 * FunctionCounter and Gauge. Labelled by poller index only: never per queue or per command.
 */
public final class PollerMetrics {
    private static final VarHandle LONG;

    static {
        try {
            LONG = MethodHandles.lookup().findVarHandle(Cell.class, "value", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** One single-writer counter. */
    static final class Cell {
        long value;

        void add(long n) {
            LONG.setOpaque(this, (long) LONG.getOpaque(this) + n);
        }

        double read() {
            return (long) LONG.getOpaque(this);
        }
    }

    private final MeterRegistry registry;
    private final Tags tags;
    private final Cell posted = new Cell();
    private final Cell signaled = new Cell();
    private final Cell budgetWaits = new Cell();
    private final Cell flushes = new Cell();
    private final Cell adminQueues = new Cell();
    private final Cell ioQueues = new Cell();
    private final Cell inFlight = new Cell();
    /** Error completions by ibv_wc_status; several threads never write the same poller, but a scrape reads. */
    private final AtomicLongArray errorsByStatus = new AtomicLongArray(32);
    private final boolean[] errorStatusRegistered = new boolean[32];

    PollerMetrics(MeterRegistry registry, int poller) {
        this.registry = registry;
        this.tags = Tags.of("poller", Integer.toString(poller));
        counter("nvmf.rdma.work.requests.posted", "RDMA work requests posted (sends, writes, reads, receives)",
                posted);
        counter("nvmf.rdma.work.requests.signaled", "RDMA work requests posted signaled (asking for a completion)",
                signaled);
        counter("nvmf.rdma.send.budget.waits", "times a request waited for send-queue budget", budgetWaits);
        counter("nvmf.rdma.flush.completions", "completions with status WR_FLUSH_ERR (queue drains)", flushes);
        Gauge.builder("nvmf.queues", adminQueues, Cell::read).tags(tags).tag("type", "admin")
                .description("open queues").register(registry);
        Gauge.builder("nvmf.queues", ioQueues, Cell::read).tags(tags).tag("type", "io")
                .description("open queues").register(registry);
        Gauge.builder("nvmf.queue.depth.in.use", inFlight, Cell::read).tags(tags)
                .description("commands received and not yet completed, over every queue of the poller")
                .register(registry);
    }

    private void counter(String name, String description, Cell cell) {
        FunctionCounter.builder(name, cell, Cell::read).tags(tags).description(description).register(registry);
    }

    /** {@code count} work requests were posted, {@code signaledCount} of them signaled. */
    public void workRequestsPosted(int count, int signaledCount) {
        posted.add(count);
        signaled.add(signaledCount);
    }

    /** A request found no send budget and queued behind others. */
    public void sendBudgetWait() {
        budgetWaits.add(1);
    }

    /** A completion with WR_FLUSH_ERR: normal while a queue drains. */
    public void flushCompletion() {
        flushes.add(1);
    }

    /**
     * A completion with an error status other than flush ({@code ibv_wc_status}). The first error of a status
     * registers its series (a one-time allocation on an error path); later ones only count.
     */
    public void errorCompletion(int wcStatus) {
        int s = wcStatus >= 0 && wcStatus < 32 ? wcStatus : 31;
        errorsByStatus.incrementAndGet(s);
        if (!errorStatusRegistered[s]) {
            errorStatusRegistered[s] = true;
            FunctionCounter.builder("nvmf.rdma.error.completions", errorsByStatus, a -> a.get(s)).tags(tags)
                    .tag("status", dev.nvmf.verbs.WcStatus.name(s))
                    .description("work completions with an error status, by ibv_wc_status").register(registry);
        }
    }

    public void queueOpened(boolean admin) {
        (admin ? adminQueues : ioQueues).add(1);
    }

    public void queueClosed(boolean admin) {
        (admin ? adminQueues : ioQueues).add(-1);
    }

    /** A command was received (queue depth in use +1). */
    public void commandStarted() {
        inFlight.add(1);
    }

    /** A command's completion was sent (queue depth in use -1). */
    public void commandCompleted() {
        inFlight.add(-1);
    }
}
