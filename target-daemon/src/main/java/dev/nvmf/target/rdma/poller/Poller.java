package dev.nvmf.target.rdma.poller;

import dev.nvmf.target.rdma.NotifyingIdleStrategy;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.VerbsCalls;
import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.target.rdma.queue.CompletionInbox;
import dev.nvmf.target.rdma.queue.QueuePoller;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.RdmaRequest;
import dev.nvmf.target.rdma.queue.SharedReceives;
import dev.nvmf.target.rdma.queue.WrId;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * A data-plane agent: owns one CQ per device and every QP on it, with no locks. {@link #doWork()} polls a batch of
 * completions per CQ, hands each to its queue, posts the receives they freed in one chain per queue, runs what
 * other threads handed over through its lock-free inbox (core completions, commands), and at the end of the pass
 * posts the READs and responses all of that produced in one chain per queue. An {@code AgentRunner} runs
 * it on its own thread with {@link #idleStrategy()}, which when idle arms the CQs, polls once more and blocks on
 * the completion channel (an idle daemon burns no CPU); tests drive it with an {@code AgentInvoker}.
 */
public final class Poller implements Agent, QueuePoller, NotifyingIdleStrategy.Sleeper {
    private static final System.Logger LOG = System.getLogger(Poller.class.getName());
    public static final int BATCH = 32;
    public static final int MAX_QUEUES = 4096;
    /** Control commands that may wait in the inbox; completions have their own, unbounded {@link CompletionInbox}. */
    private static final int COMMAND_CAPACITY = 8192;

    private final int index;
    private final RdmaTransportConfig config;
    private final RdmaMetrics metrics;
    /** Its clock (nanoseconds): the error log's rate limit reads it, and {@link #passClock} caches it per pass. */
    private final LongSupplier clock;
    /** The time of this pass: the busy-poll period and the commands' latency read it (at most once per pass). */
    private final PassClock passClock;
    private final VerbsCalls calls = new VerbsCalls();
    private final CompletionInbox completed = new CompletionInbox();
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(COMMAND_CAPACITY);
    /** Commands this poller gave itself while {@link #commands} was full (its own thread only; control path). */
    private final ArrayDeque<Runnable> ownCommands = new ArrayDeque<>();
    private final AtomicReferenceArray<RdmaQueue> queues = new AtomicReferenceArray<>(MAX_QUEUES);
    private final int[] freeSlots = new int[MAX_QUEUES];
    private int freeSlotCount;
    /** Native memory of the work-completion array: freed by {@link #close()}, never left to the collector. */
    private final Arena arena = Arena.ofShared();
    private final WorkCompletion completions = WorkCompletion.allocate(arena, BATCH);
    private final RdmaQueue[] repostQueues = new RdmaQueue[MAX_QUEUES];
    private int repostCount;
    /**
     * Queues with a send chain to post at the end of this pass, a ring from {@link #sendHead} to {@link #sendTail}: a
     * queue is on it at most once at a time (it schedules itself when it starts a chain and posts it when taken off),
     * so {@link #MAX_QUEUES} entries always do, even when a failed post makes queues already posted chain again.
     */
    private final RdmaQueue[] sendQueues = new RdmaQueue[MAX_QUEUES];
    private int sendHead;
    private int sendTail;
    private volatile PollerDevice[] devices = new PollerDevice[0];
    private volatile Consumer<RdmaQueue> drainedListener = q -> { };
    private volatile Consumer<RdmaQueue> drainStartedListener = q -> { };
    private volatile BiConsumer<DeviceResources, String> deviceFailedListener = (d, why) -> { };
    private volatile boolean sleeping;
    private volatile boolean stopping;
    private volatile Thread thread;
    private int openQueues;
    private final ErrorCompletionLog errorLog;
    /** Where the idle poller sleeps: its completion channels (one per device) and the wakeup. */
    private final EventWaiter waiter;
    private int nextToken;

    public Poller(int index, RdmaTransportConfig config, RdmaMetrics metrics, LongSupplier clock, EventWaiter waiter) {
        this.index = index;
        this.waiter = waiter;
        this.clock = clock;
        this.passClock = new PassClock(clock);
        this.errorLog = new ErrorCompletionLog(index, clock);
        this.config = config;
        this.metrics = metrics;
        for (int i = 0; i < MAX_QUEUES; i++) freeSlots[i] = MAX_QUEUES - 1 - i;
        freeSlotCount = MAX_QUEUES;
    }

    @Override
    public int index() { return index; }

    /** Who finishes a drained queue (the transport hands it to the CM thread). */
    public void onDrained(Consumer<RdmaQueue> listener) { this.drainedListener = listener; }

    /** Who bounds a drain that started (the CM agent). */
    public void onDrainStarted(Consumer<RdmaQueue> listener) { this.drainStartedListener = listener; }

    /** Who tears down a device whose CQ or completion channel failed (the CM agent). */
    public void onDeviceFailed(BiConsumer<DeviceResources, String> listener) { this.deviceFailedListener = listener; }

    // ------------------------------------------------------------------------------------------------------------
    // Duty cycle

    @Override
    public String roleName() { return "nvmf-rdma-poller-" + index; }

    @Override
    public void onStart() {
        thread = Thread.currentThread();
        passClock.ownedByCurrentThread();
    }

    /**
     * How the thread that runs this agent waits when it is idle: it keeps polling for the configured busy-poll period
     * ({@code transport.busy_poll}) after its last completion or inbox item, then arms its CQs and blocks.
     */
    public IdleStrategy idleStrategy() {
        return new NotifyingIdleStrategy(this, config.busyPollNanos(), passClock::nanoTime);
    }

    /** The time of the current pass (read once per pass on this poller's thread; {@link PassClock}). */
    @Override
    public PassClock passClock() { return passClock; }

    /** The verbs downcalls this poller made (any thread reads them). */
    @Override
    public VerbsCalls verbsCalls() { return calls; }

    /**
     * One pass: completions of every CQ, batched receive reposts, the inbox, then one send chain per queue. Returns
     * the work done.
     */
    @Override
    public int doWork() {
        passClock.newPass();
        int work = 0;
        PollerDevice[] devs = devices;
        for (PollerDevice d : devs) {
            if (d.failed()) continue;
            int n;
            // Drain the CQ in batches, but bound the pass so the inbox is served too.
            int rounds = 0;
            while (true) {
                n = d.cq().poll(completions);
                calls.pollCq(n);
                if (n <= 0) break;
                for (int i = 0; i < n; i++) dispatch(d, i);  // each contains its own failure
                work += n;
                if (n < BATCH || ++rounds == 8) break;
            }
            if (n < 0) deviceFailed(d, "ibv_poll_cq returned " + n);
        }
        flushReposts();
        work += drainInbox();
        flushReposts();
        flushSends();
        return work;
    }

    /** Posts the receive buffers that went back to each device's shared receive queue in this pass, one chain each. */
    private void flushSharedReceives() {
        PollerDevice[] devs = devices;
        for (PollerDevice d : devs) {
            SharedReceives s = d.sharedReceives();
            if (s == null || !s.hasPending() || d.failed()) continue;
            calls.postRecv();
            int before = s.posted();
            int rc = s.flush();
            metrics.recvWorkRequestsPosted.add(index, s.posted() - before);
            if (rc != 0) {
                // Not in error (an SRQ has no error state of its own): the provider refused; the rest is retried.
                LOG.log(System.Logger.Level.ERROR, "poller {0}: ibv_post_srq_recv on {1} failed with errno {2}",
                        index, d.resources().device().name(), rc);
            }
        }
    }

    /**
     * Hands completion {@code i} of the batch to its queue. A RuntimeException while the queue handles it is a bug
     * (ours or the core's) that leaves only that queue in doubt: the queue fails (fatal for its controller, kernel
     * rdma.c nvmet_rdma_error_comp) and the batch goes on, so the other queues' completions in it are not lost.
     * Errors (OutOfMemoryError, StackOverflowError) are not caught: they may strike between two writes of a request's
     * state, after which no buffer of any queue on this poller can be trusted to be free, so the poller ends (the
     * agent runner rethrows them) and the daemon reports itself unhealthy (systemd restarts it; the process exit
     * destroys every QP before its memory goes).
     */
    private void dispatch(PollerDevice d, int i) {
        long wrId = completions.wrId(i);
        int status = completions.status(i);
        if (WrId.kind(wrId) == WrId.SHARED_RECV) {
            dispatchShared(d, i, wrId, status);
            return;
        }
        RdmaQueue q = queues.get(WrId.slot(wrId));
        if (q == null || q.qpNum() != completions.qpNum(i)) {
            LOG.log(System.Logger.Level.DEBUG, "completion for no queue (slot {0}, qp {1}, status {2})",
                    WrId.slot(wrId), completions.qpNum(i), WcStatus.name(status));
            return;
        }
        if (!q.takesCompletions()) return; // its QP was destroyed before its drain ended: stale
        try {
            deliver(q, i, wrId, status);
        } catch (RuntimeException e) {
            q.fail("handling a completion failed", e);
        }
    }

    /**
     * A receive completion from the device's shared receive queue: its queue is the one whose QP has the completion's
     * qp_num (the wr_id names only the buffer). A buffer no live queue takes goes straight back to the SRQ.
     */
    private void dispatchShared(PollerDevice d, int i, long wrId, int status) {
        SharedReceives s = d.sharedReceives();
        if (s == null) {
            LOG.log(System.Logger.Level.WARNING, "shared receive completion on a device without an SRQ: {0}", wrId);
            return;
        }
        RdmaQueue q = s.queueFor(completions.qpNum(i));
        if (q != null && q.takesCompletions() && status != WcStatus.SUCCESS && status != WcStatus.WR_FLUSH_ERR) {
            metrics.errorCompletion(status);
            errorLog.log(q, WrId.SHARED_RECV, status, completions.vendorErr(i));
        }
        try {
            s.deliver(q, WrId.index(wrId), status, completions.byteLen(i));
        } catch (RuntimeException e) {
            if (q != null) {
                q.fail("handling a shared receive completion failed", e);
            } else {
                LOG.log(System.Logger.Level.ERROR, "poller " + index + ": reposting a shared receive failed", e);
            }
        }
    }

    private void deliver(RdmaQueue q, int i, long wrId, int status) {
        int idx = WrId.index(wrId);
        int kind = WrId.kind(wrId);
        if (status != WcStatus.SUCCESS && status != WcStatus.WR_FLUSH_ERR) {
            metrics.errorCompletion(status);
            errorLog.log(q, kind, status, completions.vendorErr(i));
        }
        switch (kind) {
            case WrId.RECV -> q.onRecv(idx, status, completions.byteLen(i));
            case WrId.SEND -> q.onSendComplete(idx, status);
            case WrId.READ -> q.onReadComplete(idx, status);
            case WrId.WRITE -> q.onWriteComplete(idx, status);
            case WrId.READ_UNSIGNALED -> q.onUnsignaledReadComplete(idx, status);
            default -> LOG.log(System.Logger.Level.WARNING, "completion with unknown wr_id {0}", wrId);
        }
    }

    private int drainInbox() {
        int n = 0;
        CompletionInbox.Node node;
        // Bounded so a flood of completions cannot starve the CQ.
        while (n < 4 * BATCH && (node = completed.poll()) != null) {
            n++;
            RdmaRequest r = (RdmaRequest) node;
            try {
                r.queue().onCoreComplete(r);
            } catch (RuntimeException e) {
                r.queue().fail("handling the core's completion failed", e);
            }
        }
        Runnable c;
        while (n < 8 * BATCH && ((c = commands.poll()) != null || (c = ownCommands.poll()) != null)) {
            n++;
            try {
                c.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "poller command failed", e);
            }
        }
        return n;
    }

    private boolean inboxEmpty() {
        return completed.isEmpty() && commands.isEmpty() && ownCommands.isEmpty();
    }

    private void flushReposts() {
        flushSharedReceives();
        for (int i = 0; i < repostCount; i++) {
            RdmaQueue q = repostQueues[i];
            repostQueues[i] = null;
            try {
                q.flushReposts();
            } catch (RuntimeException e) {
                q.fail("posting receives failed", e);
            }
        }
        repostCount = 0;
    }

    /**
     * Posts every queue's send chain of this pass, one ibv_post_send per queue, after its receives (a host answered
     * at once finds its next receive posted). A queue whose failed post hands buffers to other queues' waiters may
     * schedule them here: they are posted in this loop too.
     */
    private void flushSends() {
        while (sendHead != sendTail) {
            int i = sendHead++ & (MAX_QUEUES - 1);
            RdmaQueue q = sendQueues[i];
            sendQueues[i] = null;
            try {
                q.flushSends();
            } catch (RuntimeException e) {
                q.fail("posting sends failed", e);
            }
        }
    }

    @Override
    public boolean prepareToBlock() {
        sleeping = true;
        PollerDevice[] devs = devices;
        for (PollerDevice d : devs) {
            if (d.failed()) continue;
            calls.reqNotifyCq();
            if (d.cq().requestNotify(false) != 0) deviceFailed(d, "ibv_req_notify_cq failed");
        }
        // A completion that arrived between the last poll and the arming raised no event: look again.
        if (!inboxEmpty() || stopping || doWork() > 0) {
            sleeping = false;
            return false;
        }
        return true;
    }

    /** Sleeps in the waiter (every completion channel of this poller, and the wakeup) with no timeout. */
    @Override
    public void block() {
        try {
            calls.epollWait();
            int n = waiter.await(-1);
            if (n < 0) {
                LOG.log(System.Logger.Level.ERROR, "poller {0}: epoll_wait failed: errno {1}", index, -n);
                LockSupport.parkNanos(1_000_000L); // do not spin on a failing wait
                return;
            }
            for (int i = 0; i < n; i++) {
                int token = waiter.ready(i);
                if (token >= 0) takeChannelEvents(token);
            }
        } finally {
            sleeping = false;
        }
    }

    /**
     * Reads and acknowledges one CQ event of the device with {@code token}, whose channel the wait reported readable;
     * its CQ is polled by the next doWork. One, not until none is left: the channel has one CQ, armed once before
     * each block, and an armed CQ raises one event and is disarmed by it (ibv_req_notify_cq(3)), so a wake-up finds
     * one event, and looking again would be an ibv_get_cq_event that only says EAGAIN. An event left over (an arming
     * whose pass found work, so that the poller did not block on it, raised one as well) keeps the channel readable,
     * and the wait is level-triggered (epoll(7); {@code EventSource#readinessFd}): the next block returns at once and
     * reads it. Every event read is acknowledged at once by nextEvent (ibv_ack_cq_events), so destroying the CQ
     * never waits (ibv_get_cq_event(3)).
     */
    private void takeChannelEvents(int token) {
        for (PollerDevice d : devices) {
            if (d.token() != token) continue;
            int rc = d.channel().nextEvent(0);
            calls.getCqEvent(rc == CompletionChannel.EVENT);
            if (rc < 0) channelFailed(d, rc);
            return;
        }
    }

    /**
     * ibv_get_cq_event failed: the channel (and with it the device) will deliver nothing more. It leaves the waiter,
     * which would otherwise report it readable forever.
     */
    private void channelFailed(PollerDevice d, int rc) {
        unwatch(d);
        deviceFailed(d, "its completion channel failed (errno " + (-rc) + ")");
    }

    /**
     * The CQ or the completion channel of a device failed: it will deliver no more completions, so the queues on the
     * device can never drain by themselves. The poller stops polling it and tells the CM agent, which treats the
     * device as dead (its queues' QPs are destroyed, then its memory deregistered). Once per device.
     */
    private void deviceFailed(PollerDevice d, String why) {
        if (d.failed()) return;
        d.failed(true);
        LOG.log(System.Logger.Level.ERROR, "poller {0}: device {1}: {2}", index, d.resources().device().name(), why);
        deviceFailedListener.accept(d.resources(), why);
    }

    private void unwatch(PollerDevice d) {
        try {
            waiter.remove(d.channel());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "epoll_ctl(DEL): " + e.getMessage());
        }
    }

    /** How many times the poller's wait returned (it must not grow while the poller is idle). */
    public long wakeups() { return waiter.wakeups(); }

    /** Wakes the poller if it sleeps (any thread). */
    public void wakeup() {
        if (sleeping) waiter.wakeup();
    }

    // ------------------------------------------------------------------------------------------------------------
    // From other threads

    /**
     * A core completion (any thread; the poller's own thread too). Lock-free, wait-free and allocation-free, and never
     * refused: the inbox is linked through the requests.
     */
    @Override
    public void submitCompletion(RdmaRequest request) {
        if (Thread.currentThread() == thread) {
            completed.offerFromConsumer(request);
        } else {
            completed.offer(request);
            wakeup();
        }
    }

    /** A control command (any thread). */
    @Override
    public void submitCommand(Runnable command) {
        if (Thread.currentThread() == thread) {
            // The poller cannot wait for itself to make room: keep it here (control path, may allocate).
            if (!commands.offer(command)) ownCommands.add(command);
            return;
        }
        while (!commands.offer(command)) Thread.onSpinWait(); // the poller runs them: room comes
        wakeup();
    }

    /** Called by a queue (poller thread) when it has receives to repost at the end of this batch. */
    @Override
    public void scheduleRepost(RdmaQueue queue) {
        repostQueues[repostCount++] = queue;
    }

    /** Called by a queue (poller thread) when it starts a send chain: posted at the end of this pass. */
    @Override
    public void scheduleSend(RdmaQueue queue) {
        sendQueues[sendTail++ & (MAX_QUEUES - 1)] = queue;
    }

    @Override
    public void drainStarted(RdmaQueue queue) {
        drainStartedListener.accept(queue);
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
        PollerDevice d = new PollerDevice(resources, config, nextToken++);
        try {
            waiter.add(d.channel(), d.token());
        } catch (RuntimeException e) {
            d.close();
            throw e;
        }
        SharedReceives s = d.sharedReceives();
        if (s != null) {
            LOG.log(System.Logger.Level.INFO, "poller {0} on {1}: shared receive queue of {2} buffers of {3} bytes",
                    index, resources.device().name(), s.depth(), s.bufferSize());
        }
        PollerDevice[] next = Arrays.copyOf(devices, devices.length + 1);
        next[next.length - 1] = d;
        devices = next;
        wakeup();
        return d;
    }

    public PollerDevice[] devices() { return devices; }

    /**
     * Forgets a dead device (poller thread, once every queue on it is released): its channel leaves the waiter, its
     * CQ and channel are destroyed and its pools' regions go back to the device's slabs.
     */
    public synchronized void removeDevice(DeviceResources resources) {
        PollerDevice[] devs = devices;
        for (int i = 0; i < devs.length; i++) {
            PollerDevice d = devs[i];
            if (d.resources() != resources) continue;
            PollerDevice[] next = new PollerDevice[devs.length - 1];
            System.arraycopy(devs, 0, next, 0, i);
            System.arraycopy(devs, i + 1, next, i, devs.length - i - 1);
            devices = next;
            unwatch(d);
            try {
                d.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "poller {0}: closing the CQ of {1} failed: {2}", index,
                        resources.device().name(), e.getMessage());
            }
            return;
        }
    }

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
            unwatch(d);
            try {
                d.close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing CQ failed: " + e.getMessage());
            }
        }
        devices = new PollerDevice[0];
        if (arena.scope().isAlive()) arena.close();
        waiter.close();
    }

    /** The thread that runs this agent (null before it started). */
    public Thread thread() { return thread; }
}
