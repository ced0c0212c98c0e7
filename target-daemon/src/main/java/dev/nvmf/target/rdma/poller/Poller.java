package dev.nvmf.target.rdma.poller;

import dev.nvmf.target.rdma.NotifyingIdleStrategy;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.target.rdma.queue.QueuePoller;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.RdmaRequest;
import dev.nvmf.target.rdma.queue.WrId;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.lang.foreign.Arena;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A data-plane agent: owns one CQ per device and every QP on it, with no locks. {@link #doWork()} polls a batch of
 * completions per CQ, hands each to its queue, posts the receives they freed in one chain per queue, and runs what
 * other threads handed over through its lock-free inbox (core completions, commands). An {@code AgentRunner} runs
 * it on its own thread with {@link #idleStrategy()}, which when idle arms the CQs, polls once more and blocks on
 * the completion channel (an idle daemon burns no CPU); tests drive it with an {@code AgentInvoker}.
 */
public final class Poller implements Agent, QueuePoller, NotifyingIdleStrategy.Sleeper {
    private static final System.Logger LOG = System.getLogger(Poller.class.getName());
    public static final int BATCH = 32;
    public static final int MAX_QUEUES = 4096;
    private static final int INBOX_CAPACITY = 1 << 16;
    /** Idle duty cycles that spin before the poller blocks. */
    private static final int SPINS_BEFORE_BLOCKING = 200;

    private final int index;
    private final RdmaTransportConfig config;
    private final RdmaMetrics metrics;
    private final ManyToOneConcurrentArrayQueue<Object> inbox = new ManyToOneConcurrentArrayQueue<>(INBOX_CAPACITY);
    private final AtomicReferenceArray<RdmaQueue> queues = new AtomicReferenceArray<>(MAX_QUEUES);
    private final int[] freeSlots = new int[MAX_QUEUES];
    private int freeSlotCount;
    private final WorkCompletion completions = WorkCompletion.allocate(Arena.ofAuto(), BATCH);
    private final RdmaQueue[] repostQueues = new RdmaQueue[MAX_QUEUES];
    private int repostCount;
    private volatile PollerDevice[] devices = new PollerDevice[0];
    private volatile Consumer<RdmaQueue> drainedListener = q -> { };
    private volatile boolean sleeping;
    private volatile boolean stopping;
    private volatile Thread thread;
    private int openQueues;

    public Poller(int index, RdmaTransportConfig config, RdmaMetrics metrics) {
        this.index = index;
        this.config = config;
        this.metrics = metrics;
        for (int i = 0; i < MAX_QUEUES; i++) freeSlots[i] = MAX_QUEUES - 1 - i;
        freeSlotCount = MAX_QUEUES;
    }

    @Override
    public int index() { return index; }

    /** Who finishes a drained queue (the transport hands it to the CM thread). */
    public void onDrained(Consumer<RdmaQueue> listener) { this.drainedListener = listener; }

    // ------------------------------------------------------------------------------------------------------------
    // Duty cycle

    @Override
    public String roleName() { return "nvmf-rdma-poller-" + index; }

    @Override
    public void onStart() { thread = Thread.currentThread(); }

    /** How the thread that runs this agent waits when it is idle. */
    public IdleStrategy idleStrategy() {
        return new NotifyingIdleStrategy(this, SPINS_BEFORE_BLOCKING, config.pollerIdleMillis());
    }

    /** One pass: completions of every CQ, batched receive reposts, then the inbox. Returns the work done. */
    @Override
    public int doWork() {
        int work = 0;
        PollerDevice[] devs = devices;
        for (PollerDevice d : devs) {
            int n;
            // Drain the CQ in batches, but bound the pass so the inbox is served too.
            int rounds = 0;
            while ((n = d.cq().poll(completions)) > 0) {
                for (int i = 0; i < n; i++) dispatch(i);
                work += n;
                if (n < BATCH || ++rounds == 8) break;
            }
            if (n < 0) LOG.log(System.Logger.Level.ERROR, "ibv_poll_cq on {0} returned {1}",
                    d.resources().device().name(), n);
        }
        flushReposts();
        work += drainInbox();
        flushReposts();
        return work;
    }

    private void dispatch(int i) {
        long wrId = completions.wrId(i);
        int status = completions.status(i);
        RdmaQueue q = queues.get(WrId.slot(wrId));
        if (q == null) {
            LOG.log(System.Logger.Level.WARNING, "completion for unknown queue slot {0} (status {1})",
                    WrId.slot(wrId), WcStatus.name(status));
            return;
        }
        int idx = WrId.index(wrId);
        switch (WrId.kind(wrId)) {
            case WrId.RECV -> q.onRecv(idx, status, completions.byteLen(i));
            case WrId.SEND -> q.onSendComplete(idx, status);
            case WrId.READ -> q.onReadComplete(idx, status);
            case WrId.WRITE -> q.onWriteComplete(idx, status);
            default -> LOG.log(System.Logger.Level.WARNING, "completion with unknown wr_id {0}", wrId);
        }
    }

    private int drainInbox() {
        int n = 0;
        Object o;
        // Bounded so a flood of completions cannot starve the CQ.
        while (n < 4 * BATCH && (o = inbox.poll()) != null) {
            n++;
            if (o instanceof RdmaRequest r) {
                r.queue().onCoreComplete(r);
            } else {
                try {
                    ((Runnable) o).run();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, "poller command failed", e);
                }
            }
        }
        return n;
    }

    private void flushReposts() {
        for (int i = 0; i < repostCount; i++) {
            RdmaQueue q = repostQueues[i];
            repostQueues[i] = null;
            q.flushReposts();
        }
        repostCount = 0;
    }

    @Override
    public boolean prepareToBlock() {
        sleeping = true;
        PollerDevice[] devs = devices;
        for (PollerDevice d : devs) d.cq().requestNotify(false);
        // A completion that arrived between the last poll and the arming raised no event: look again.
        if (!inbox.isEmpty() || stopping || doWork() > 0) {
            sleeping = false;
            return false;
        }
        return true;
    }

    @Override
    public void block(long timeoutMillis) {
        try {
            PollerDevice[] devs = devices;
            if (devs.length == 1) {
                devs[0].channel().awaitEvent(timeoutMillis);
            } else if (devs.length == 0) {
                LockSupport.parkNanos(timeoutMillis * 1_000_000L);
            } else {
                // Several devices, one channel each: look at each without blocking, then nap briefly.
                for (PollerDevice d : devs) d.channel().awaitEvent(0);
                LockSupport.parkNanos(1_000_000L);
            }
        } finally {
            sleeping = false;
        }
    }

    /** Wakes the poller if it sleeps (any thread). */
    public void wakeup() {
        if (!sleeping) return;
        PollerDevice[] devs = devices;
        for (PollerDevice d : devs) d.channel().wakeup();
        Thread t = thread;
        if (t != null) LockSupport.unpark(t);
    }

    // ------------------------------------------------------------------------------------------------------------
    // From other threads

    /** A core completion (any thread; the poller's own thread too). Lock-free and allocation-free. */
    @Override
    public void submitCompletion(RdmaRequest request) {
        offer(request);
    }

    /** A control command (any thread). */
    @Override
    public void submitCommand(Runnable command) {
        offer(command);
    }

    private void offer(Object o) {
        if (!inbox.offer(o)) {
            // Cannot happen while admission keeps contexts below the inbox capacity; never drop a completion.
            if (Thread.currentThread() == thread) throw new IllegalStateException("poller inbox full");
            while (!inbox.offer(o)) Thread.onSpinWait();
        }
        if (Thread.currentThread() != thread) wakeup();
    }

    /** Called by a queue (poller thread) when it has receives to repost at the end of this batch. */
    @Override
    public void scheduleRepost(RdmaQueue queue) {
        repostQueues[repostCount++] = queue;
    }

    /** A queue finished its drain on this poller: no WR of it is outstanding any more (poller thread). */
    @Override
    public void queueDrained(RdmaQueue queue) {
        queues.set(queue.slot(), null);
        drainedListener.accept(queue);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Control path (CM thread)

    /** The poller's resources on a device, created on first use (CQ, channel, data buffer pools). */
    @Override
    public synchronized PollerDevice deviceFor(DeviceResources resources) {
        for (PollerDevice d : devices) if (d.resources() == resources) return d;
        PollerDevice d = new PollerDevice(resources, config);
        PollerDevice[] next = Arrays.copyOf(devices, devices.length + 1);
        next[next.length - 1] = d;
        devices = next;
        wakeup();
        return d;
    }

    public PollerDevice[] devices() { return devices; }

    /** A slot for a new queue, or -1 when the poller is full. */
    @Override
    public synchronized int allocateSlot() {
        if (freeSlotCount == 0) return -1;
        openQueues++;
        return freeSlots[--freeSlotCount];
    }

    /** Publishes a queue: from here its completions reach it (before its receives are posted). */
    @Override
    public void publish(RdmaQueue queue) {
        queues.set(queue.slot(), queue);
    }

    /** Gives a slot back (CM thread, after the queue's QP is destroyed). */
    @Override
    public synchronized void freeSlot(int slot) {
        queues.set(slot, null);
        freeSlots[freeSlotCount++] = slot;
        openQueues--;
    }

    public synchronized int openQueues() { return openQueues; }

    /** The queue in a slot, or null (tests, shutdown). */
    public RdmaQueue queue(int slot) { return queues.get(slot); }

    /** Every published queue (control path; allocates). */
    public java.util.List<RdmaQueue> liveQueues() {
        java.util.List<RdmaQueue> out = new java.util.ArrayList<>();
        for (int i = 0; i < MAX_QUEUES; i++) {
            RdmaQueue q = queues.get(i);
            if (q != null) out.add(q);
        }
        return out;
    }

    /** The agent is about to be closed: it blocks no more, and is woken if it blocks now (any thread). */
    public void requestStop() {
        stopping = true;
        sleeping = true;
        wakeup();
    }

    /** Releases the CQs, channels and pools; only once every queue is drained and the agent is closed. */
    public synchronized void close() {
        for (PollerDevice d : devices) {
            try {
                d.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing CQ failed: " + e.getMessage());
            }
        }
        devices = new PollerDevice[0];
    }

    /** The thread that runs this agent (null before it started). */
    public Thread thread() { return thread; }
}
