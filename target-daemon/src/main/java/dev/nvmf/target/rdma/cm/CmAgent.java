package dev.nvmf.target.rdma.cm;

import dev.nvmf.target.core.QueueAcceptor;
import dev.nvmf.target.rdma.NotifyingIdleStrategy;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.target.rdma.RdmaMetrics.RejectReason;
import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.target.rdma.poller.Poller;
import dev.nvmf.target.rdma.queue.QueueParameters;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.RdmaProvider;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The control plane agent: one per daemon owns the CM event channel, the listeners and every CM id. It validates
 * connect requests and rejects with the NVMe RDMA status codes, sizes the queue and has it open itself
 * ({@link RdmaQueue#open}: QP, memory, receives posted before the accept), accepts, hands ESTABLISHED and every
 * teardown cause to the queue, answers COMM_EST with rdma_notify (thread "posting send requests in RTR"), and
 * releases drained queues ({@link RdmaQueue#release}, then the CM id). An {@code AgentRunner} runs it with
 * {@link #idleStrategy()}, blocking on the CM channel when idle; tests drive it with an {@code AgentInvoker}.
 */
public final class CmAgent implements Agent, NotifyingIdleStrategy.Sleeper {
    private static final System.Logger LOG = System.getLogger(CmAgent.class.getName());
    /** The waiter's token of the CM event channel; devices get the tokens after it. */
    private static final int CHANNEL_TOKEN = 0;
    /**
     * Times in a row a device's asynchronous event fd may be reported readable with no event to take before it counts
     * as failed for good (a removed device's fd stays readable) and leaves the waiter, which would otherwise spin.
     */
    private static final int EMPTY_READINESS_LIMIT = 3;
    /** The Linux host's default; also a floor for the CM's backlog. */
    private static final int BACKLOG = 128;
    /** How often a listener whose device was removed tries to listen again, and librdmacm rescans the devices. */
    private static final long RELISTEN_INTERVAL_NANOS = 1_000_000_000L;
    /**
     * Rescans of the device list after a removed device was torn down: librdmacm keeps its own context of a removed
     * device open until it rescans (librdmacm cma.c, ucma_get_device_list), and the kernel's removal waits for that context to close.
     */
    private static final int RESCANS_AFTER_REMOVAL = 30;

    private final RdmaTransportConfig config;
    private final RdmaProvider provider;
    private final CmEventChannel channel;
    /** Where the idle agent sleeps: the CM channel, every device's async event fd and its deadlines, at once. */
    private final EventWaiter waiter;
    private final LongSupplier clock;
    /** Devices in the waiter, by token; and what the last wait reported readable. */
    private final Map<Integer, DeviceResources> deviceTokens = new HashMap<>();
    private final Map<Device, Integer> tokenOf = new IdentityHashMap<>();
    private final Map<Integer, Integer> emptyReadiness = new HashMap<>();
    private int nextToken = CHANNEL_TOKEN + 1;
    private int[] readyTokens = new int[16];
    private int readyCount;
    private final QueueAcceptor acceptor;
    private final Poller[] pollers;
    private final RdmaMetrics metrics;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(4096);
    private final List<PortListener> listeners = new ArrayList<>();
    private final Map<Device, DeviceResources> devices = new IdentityHashMap<>();
    /**
     * Queues by device and QP number: the key of a QP's asynchronous event (a QP number is unique on its device only;
     * rxe numbers the first QP of every device 17).
     */
    private final Map<Device, Map<Integer, RdmaQueue>> queuesByQp = new IdentityHashMap<>();
    private final List<RdmaQueue> open = new ArrayList<>();
    private int nextPoller;
    private volatile boolean shuttingDown;
    private volatile boolean stopping;
    private volatile Thread thread;
    /** Draining queues and when their drain must have ended (clock nanos); a dead device's are due at once. */
    private final Map<RdmaQueue, Long> drainDeadlines = new LinkedHashMap<>();
    /** Dead devices whose pollers are still letting go of them; closed once every poller has. */
    private final List<DeviceResources> dyingDevices = new ArrayList<>();
    /** Ports whose listener was lost with its device: they listen again when it returns. */
    private final List<RdmaPortConfig> lostListeners = new ArrayList<>();
    private long relistenAt = Long.MAX_VALUE;
    private int rescansLeft;
    /** The deadline the waiter's timer is armed for (clock nanos), or MAX_VALUE. */
    private long armedDeadline = Long.MAX_VALUE;

    public CmAgent(RdmaTransportConfig config, RdmaProvider provider, CmEventChannel channel, EventWaiter waiter,
                   QueueAcceptor acceptor, Poller[] pollers, RdmaMetrics metrics, LongSupplier clock) {
        this.config = config;
        this.provider = provider;
        this.channel = channel;
        this.waiter = waiter;
        this.clock = clock;
        waiter.add(channel, CHANNEL_TOKEN);
        this.acceptor = acceptor;
        this.pollers = pollers;
        this.metrics = metrics;
        for (Poller p : pollers) {
            p.onDrained(q -> submit(() -> release(q)));
            p.onDrainStarted(q -> submit(() -> watchDrain(q)));
            p.onDeviceFailed((res, why) -> submit(() -> deviceDead(res, why)));
        }
    }

    /** Binds and listens on every configured port (caller's thread, before the agent runs). */
    public void listen() {
        for (RdmaPortConfig port : config.ports()) addListener(port);
    }

    public List<PortListener> listeners() { return List.copyOf(listeners); }

    /**
     * Starts listening on another port at runtime (configuration reload). Call on the CM thread (or before the
     * agent runs). Throws, leaving nothing behind, if the address cannot be bound or listened on.
     */
    public void addListener(RdmaPortConfig port) {
        for (PortListener l : listeners) {
            if (l.config().portId() == port.portId()) {
                throw new IllegalStateException("port id " + port.portId() + " is already listening");
            }
        }
        if (shuttingDown) throw new IllegalStateException("shutting down");
        PortListener l = new PortListener(port);
        CmId id = channel.createId(l);
        try {
            id.bind(port.socketAddress());
            id.listen(BACKLOG);
        } catch (RuntimeException e) {
            id.close();
            throw e;
        }
        l.id(id);
        listeners.add(l);
        lostListeners.removeIf(p -> p.portId() == port.portId()); // listening (again) now
        LOG.log(System.Logger.Level.INFO, "listening on {0} (port id {1}, in-capsule {2} B, depth {3})",
                id.localAddress(), port.portId(), port.inCapsuleDataSize(), port.maxQueueDepth());
    }

    /**
     * Stops listening on a port (configuration reload); queues accepted through it stay connected. Call on the CM
     * thread. Returns whether the port was listening.
     */
    public boolean removeListener(int portId) {
        // A port lost with its device is not to listen again either.
        if (lostListeners.removeIf(p -> p.portId() == portId)) return true;
        for (PortListener l : listeners) {
            if (l.config().portId() == portId) {
                listeners.remove(l);
                try {
                    l.id().close();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "closing listener: " + e.getMessage());
                }
                LOG.log(System.Logger.Level.INFO, "stopped listening on port id {0}", portId);
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------------------------------------------------
    // Duty cycle

    @Override
    public String roleName() { return "nvmf-rdma-cm"; }

    @Override
    public void onStart() { thread = Thread.currentThread(); }

    /** How the thread that runs this agent waits: it blocks in its waiter at once, with no timeout. */
    public IdleStrategy idleStrategy() {
        return new NotifyingIdleStrategy(this);
    }

    /** Every pending CM event, commands from other threads, and the asynchronous events of every device. */
    @Override
    public int doWork() {
        int work = 0;
        // Events before commands: a command may release a queue and destroy its id, and rdma_destroy_id waits for
        // every event of the id it has handed out to be acknowledged (rdma_get_cm_event(3)); an event taken here is
        // acknowledged before the next is taken.
        CmEvent e;
        while ((e = channel.pollEvent(0)) != null) {
            work++;
            handle(e);
        }
        work += runCommands();
        work += pollAsyncEvents();
        work += checkDeadlines();
        return work;
    }

    @Override
    public boolean prepareToBlock() {
        // The CM channel needs no arming: an event or a wakeup ends the block.
        return commands.isEmpty() && !stopping;
    }

    /** Sleeps until a CM event, a device's asynchronous event, a command, or the next deadline. */
    @Override
    public void block() {
        int n = waiter.await(-1);
        if (n < 0) {
            // epoll_wait itself failed (it does not, short of a bug): do not spin on it.
            LOG.log(System.Logger.Level.ERROR, "the CM agent's epoll_wait failed: errno {0}", -n);
            LockSupport.parkNanos(100_000_000L);
            return;
        }
        if (readyTokens.length < n) readyTokens = new int[n];
        for (int i = 0; i < n; i++) readyTokens[i] = waiter.ready(i);
        readyCount = n;
    }

    /** How many times the agent's wait returned (it must not grow while the transport is idle). */
    public long wakeups() { return waiter.wakeups(); }

    /** The agent is about to be closed: it blocks no more, and is woken if it blocks now (any thread). */
    public void requestStop() {
        stopping = true;
        waiter.wakeup();
    }

    /** Runs {@code r} on the CM thread (any thread). */
    public void submit(Runnable r) {
        while (!commands.offer(r)) Thread.onSpinWait();
        if (Thread.currentThread() != thread) waiter.wakeup();
    }

    private int runCommands() {
        int n = 0;
        Runnable r;
        while ((r = commands.poll()) != null) {
            n++;
            try {
                r.run();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "CM command failed", e);
            }
        }
        return n;
    }

    private int pollAsyncEvents() {
        int n = 0;
        for (DeviceResources d : List.copyOf(devices.values())) {
            AsyncEvent ev;
            int before = n;
            while ((ev = d.device().pollAsyncEvent(0)) != null) {
                n++;
                onAsyncEvent(d.device(), ev);
            }
            Integer token = tokenOf.get(d.device());
            if (token != null && wasReady(token)) {
                // Readable, and nothing to take: after a few times in a row the fd has failed for good.
                int empty = n > before ? 0 : emptyReadiness.merge(token, 1, Integer::sum);
                if (n > before) emptyReadiness.remove(token);
                if (empty >= EMPTY_READINESS_LIMIT) {
                    LOG.log(System.Logger.Level.ERROR, "the asynchronous event fd of {0} stays readable with no event:"
                            + " no longer waiting on it", d.device().name());
                    unwatch(d.device());
                }
            }
        }
        readyCount = 0;
        return n;
    }

    private boolean wasReady(int token) {
        for (int i = 0; i < readyCount; i++) if (readyTokens[i] == token) return true;
        return false;
    }

    /** The CM agent wakes for {@code device}'s asynchronous events from now on. */
    private void watch(DeviceResources res) {
        int token = nextToken++;
        try {
            waiter.add(res.device(), token);
        } catch (RuntimeException e) {
            // Its events are still read on every duty cycle; only the wake-up on them is lost.
            LOG.log(System.Logger.Level.WARNING, "cannot wait on the asynchronous events of " + res.device().name()
                    + ": " + e.getMessage());
            return;
        }
        deviceTokens.put(token, res);
        tokenOf.put(res.device(), token);
    }

    private void unwatch(Device device) {
        Integer token = tokenOf.remove(device);
        if (token == null) return;
        deviceTokens.remove(token);
        emptyReadiness.remove(token);
        try {
            waiter.remove(device);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "epoll_ctl(DEL) of " + device.name() + ": " + e.getMessage());
        }
    }

    private void onAsyncEvent(Device device, AsyncEvent ev) {
        Map<Integer, RdmaQueue> qps = queuesByQp.get(device);
        RdmaQueue q = qps == null || ev.type().affiliation() != AsyncEvent.Affiliation.QP ? null : qps.get(ev.qpNum());
        switch (ev.type()) {
            case COMM_EST -> {
                // A receive completed before the RTU: tell the CM so ESTABLISHED follows (thread "posting send requests in RTR"). Not an error.
                if (q != null) {
                    try {
                        q.cmId().notifyEstablished();
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.DEBUG, "rdma_notify: " + e.getMessage());
                    }
                }
            }
            case QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR -> {
                if (q != null) {
                    LOG.log(System.Logger.Level.WARNING, "async event {0} on {1} qp {2}", ev.type(), device.name(),
                            ev.qpNum());
                    q.requestDrain("async event " + ev.type());
                }
            }
            case SQ_DRAINED, QP_LAST_WQE_REACHED -> { }
            // The whole device (or a CQ every queue of a poller on it shares) completes nothing any more.
            case DEVICE_FATAL -> deviceDead(devices.get(device), "IBV_EVENT_DEVICE_FATAL");
            case CQ_ERR -> deviceDead(devices.get(device), "IBV_EVENT_CQ_ERR");
            // The link may come back (netem loss, a cable): queues whose peer is unreachable end by their own
            // errors (RETRY_EXC_ERR) or the host's keep-alive, not here.
            case PORT_ERR -> LOG.log(System.Logger.Level.WARNING, "port {0} of {1} is down (IBV_EVENT_PORT_ERR)",
                    ev.portNum(), device.name());
            default -> LOG.log(System.Logger.Level.INFO, "async event {0} on {1} (qp {2})", ev.type(), device.name(),
                    ev.qpNum());
        }
    }

    private void handle(CmEvent e) {
        try {
            switch (e.type()) {
                case CONNECT_REQUEST -> {
                    onConnectRequest(e);
                    return; // acked inside (a rejected id is destroyed after the ack)
                }
                case ESTABLISHED -> {
                    if (e.id().context() instanceof RdmaQueue q) q.requestEstablished();
                }
                case DEVICE_REMOVAL -> onDeviceRemoval(e.id());
                case DISCONNECTED, CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                    if (e.id().context() instanceof RdmaQueue q) {
                        String why = "CM " + e.type();
                        // The host went away: the QP is (or will be) in error; disconnect our side as well.
                        q.requestDrain(why);
                    }
                }
                case TIMEWAIT_EXIT, ADDR_CHANGE -> { }
                default -> LOG.log(System.Logger.Level.DEBUG, "CM event {0}", e.type());
            }
        } finally {
            e.ack();
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Connect

    /** Validates a connect request, opens its queue and accepts, or rejects with the NVMe RDMA status. */
    private void onConnectRequest(CmEvent e) {
        CmId id = e.id();
        PortListener listener = e.listenId() == null ? null : (PortListener) e.listenId().context();
        RejectReason reason;
        DeviceResources known = devices.get(id.device());
        if (listener == null) {
            reason = RejectReason.UNKNOWN_PORT;
        } else if (shuttingDown || (known != null && known.dead())) {
            reason = RejectReason.NO_RESOURCES;
        } else {
            ConnectionParameters params = e.parameters();
            ConnectRequestData data = ConnectRequestData.parse(params.privateData());
            reason = data == null ? RejectReason.INVALID_PRIVATE_DATA_LENGTH
                    : data.validate(listener.config(), config.maxIoQueues());
            if (reason == null) reason = openAndAccept(id, listener.config(), data, params);
        }
        if (reason != null) {
            metrics.reject(reason);
            LOG.log(System.Logger.Level.INFO, "rejecting connect from {0}: {1}", safePeer(id), reason);
            try {
                id.reject(RdmaCmStatus.rejectPrivateData(RdmaCmStatus.statusOf(reason)));
            } catch (RuntimeException ex) {
                LOG.log(System.Logger.Level.WARNING, "rdma_reject failed: " + ex.getMessage());
            }
            e.ack();
            id.close();
            return;
        }
        e.ack();
        metrics.queuesAccepted.increment();
    }

    private static String safePeer(CmId id) {
        try {
            return String.valueOf(id.peerAddress());
        } catch (RuntimeException e) {
            return "?";
        }
    }

    /**
     * Sizes the queue from the request and the device, opens it on the next poller and accepts. Returns null when
     * accepted, else why not.
     */
    private RejectReason openAndAccept(CmId id, RdmaPortConfig port, ConnectRequestData data,
                                       ConnectionParameters request) {
        DeviceResources res;
        try {
            res = devices.get(id.device());
            if (res == null) {
                res = new DeviceResources(id.device(), config.zeroCopyRam() ? this::submit : null);
                devices.put(id.device(), res);
                watch(res);
            }
        } catch (RuntimeException ex) {
            // e.g. the first connection on a device whose PD cannot be allocated
            LOG.log(System.Logger.Level.ERROR, "connect request: " + ex.getMessage());
            return RejectReason.NO_RESOURCES;
        }
        QueueParameters params;
        DeviceAttributes attrs = res.attributes();
        // The CM reports the host's responder resources as our initiator depth: READs we may have outstanding.
        if (request.initiatorDepth() == 0) return RejectReason.INVALID_IRD;
        if (attrs.maxQpInitRdAtom() == 0) return RejectReason.INVALID_ORD;
        int readDepth = Math.min(request.initiatorDepth(), attrs.maxQpInitRdAtom());
        int depth = data.queueDepth();
        int maxWr = attrs.maxQpWr();
        // Send budget: a response chain is at most 2 WRs (WRITE + SEND) and a READ 1, for up to 2*depth contexts.
        int sendBudget = Math.min(2 * depth + readDepth, maxWr);
        if (sendBudget < 2 || depth > maxWr) return RejectReason.NO_RESOURCES;
        params = new QueueParameters(port.portId(), data.qid(), depth, port.inCapsuleDataSize(), config.maxIoSize(),
                readDepth, sendBudget, config.remoteInvalidation() && res.supportsRemoteInvalidation(), safePeer(id));
        Poller poller = pollers[nextPoller++ % pollers.length];
        RdmaQueue q;
        try {
            q = RdmaQueue.open(params, id, poller, res, acceptor, metrics);
        } catch (RuntimeException ex) {
            LOG.log(System.Logger.Level.WARNING, "connect of qid " + data.qid() + " failed: " + ex.getMessage());
            return RejectReason.NO_RESOURCES;
        }
        id.context(q);
        queuesByQp.computeIfAbsent(res.device(), d -> new HashMap<>()).put(q.queuePair().qpNum(), q);
        open.add(q);
        metrics.queuesOpen.incrementAndGet();
        try {
            id.accept(new ConnectionParameters(RdmaCmStatus.acceptPrivateData(depth), 0, readDepth, 1, 0, 7,
                    false, 0));
        } catch (RuntimeException ex) {
            // Receives are posted: the queue must drain like any other.
            LOG.log(System.Logger.Level.WARNING, "rdma_accept failed: " + ex.getMessage());
            q.requestDrain("accept failed");
        }
        LOG.log(System.Logger.Level.INFO, "accepted qid {0} depth {1} from {2} (poller {3}, read depth {4})",
                data.qid(), depth, params.peer(), poller.index(), readDepth);
        return null;
    }

    // ------------------------------------------------------------------------------------------------------------
    // Release (after the poller drained the queue)

    private void release(RdmaQueue q) {
        q.release();
        try {
            q.cmId().close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "rdma_destroy_id: " + e.getMessage());
        }
        DeviceResources res = q.resources();
        Map<Integer, RdmaQueue> qps = queuesByQp.get(res.device());
        if (qps != null) qps.remove(q.qpNum(), q);
        open.remove(q);
        drainDeadlines.remove(q);
        metrics.queuesOpen.decrementAndGet();
        metrics.queuesClosed.increment();
        if (res.dead() && queuesOn(res) == 0) closeDeadDevice(res);
    }

    private int queuesOn(DeviceResources res) {
        int n = 0;
        for (RdmaQueue q : open) if (q.resources() == res) n++;
        return n;
    }

    // ------------------------------------------------------------------------------------------------------------
    // Bounded drains and dead devices (CM thread)

    /** A queue started to drain: it must end within the drain timeout, at once on a dead device. */
    private void watchDrain(RdmaQueue q) {
        if (!open.contains(q)) return; // released already
        long now = clock.getAsLong();
        drainDeadlines.put(q, q.resources().dead() ? now : now + config.drainTimeoutMillis() * 1_000_000L);
    }

    /** Drains past their deadline are ended by destroying their QPs; lost listeners try again. Returns the work. */
    private int checkDeadlines() {
        if (drainDeadlines.isEmpty() && relistenAt == Long.MAX_VALUE && armedDeadline == Long.MAX_VALUE) return 0;
        long now = clock.getAsLong();
        int n = 0;
        List<RdmaQueue> due = null;
        long next = relistenAt;
        for (Iterator<Map.Entry<RdmaQueue, Long>> it = drainDeadlines.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<RdmaQueue, Long> d = it.next();
            if (d.getValue() - now <= 0) {
                it.remove();
                if (due == null) due = new ArrayList<>();
                due.add(d.getKey());
            } else {
                next = Math.min(next, d.getValue());
            }
        }
        if (due != null) {
            for (RdmaQueue q : due) {
                n++;
                destroyUndrained(q);
            }
        }
        if (relistenAt - now <= 0) {
            n++;
            relistenAt = Long.MAX_VALUE;
            relisten(now);
            next = Math.min(next, relistenAt);
            for (Long d : drainDeadlines.values()) next = Math.min(next, d);
        }
        armTimer(next, now);
        return n;
    }

    /** The waiter's timer fires at the next deadline ({@code next} and {@code now} on this agent's clock). */
    private void armTimer(long next, long now) {
        if (next == armedDeadline) return;
        armedDeadline = next;
        if (next == Long.MAX_VALUE) waiter.cancelTimer(); else waiter.timerAt(System.nanoTime() + (next - now));
    }

    /**
     * The drain did not end in time, or the device died: the QP is destroyed first, which stops the hardware (a dead
     * device completes nothing, not even flushes, so waiting longer would never end); only then does the queue end
     * what the hardware held, and once the core returned its requests it is released: regions back, controller
     * closed (kernel rdma.c, nvmet_rdma_free_queue: ib_destroy_qp before the buffers go).
     */
    private void destroyUndrained(RdmaQueue q) {
        if (!open.contains(q)) return;
        if (!q.resources().dead()) {
            metrics.drainTimeouts.increment();
            LOG.log(System.Logger.Level.WARNING, "{0}: the drain did not end in {1} ms; destroying the QP",
                    q.describe(), config.drainTimeoutMillis());
        }
        q.destroyQueuePair();
        q.requestQueuePairDestroyed();
    }

    /**
     * {@code res}'s device completes nothing any more: every queue on it drains at once (its QP is destroyed as soon
     * as the drain started), and once the last is released the pollers let go of the device and its memory is
     * deregistered and freed. A connection that arrives on it meanwhile is rejected; a device that returns is a new
     * device.
     */
    private void deviceDead(DeviceResources res, String why) {
        if (res == null || res.dead() || devices.get(res.device()) != res) return;
        res.markDead();
        metrics.deviceFailures.increment();
        int n = queuesOn(res);
        LOG.log(System.Logger.Level.ERROR, "device {0} is dead ({1}): destroying the QPs of its {2} queue(s), then"
                + " releasing its memory", res.device().name(), why, n);
        long now = clock.getAsLong();
        for (RdmaQueue q : List.copyOf(open)) {
            if (q.resources() != res) continue;
            if (drainDeadlines.containsKey(q)) drainDeadlines.put(q, now); else q.requestDrain("device dead: " + why);
        }
        if (n == 0) closeDeadDevice(res);
    }

    /** Every queue on a dead device is released: each poller lets go of it, then its memory goes. */
    private void closeDeadDevice(DeviceResources res) {
        devices.remove(res.device());
        queuesByQp.remove(res.device());
        unwatch(res.device());
        dyingDevices.add(res);
        int[] left = {pollers.length};
        for (Poller p : pollers) {
            p.submitCommand(() -> {
                p.removeDevice(res);
                submit(() -> {
                    if (--left[0] == 0) closeDeviceResources(res);
                });
            });
        }
    }

    private void closeDeviceResources(DeviceResources res) {
        if (!dyingDevices.remove(res)) return;
        res.close();
        LOG.log(System.Logger.Level.INFO, "device {0} released", res.device().name());
        if (!shuttingDown) {
            rescansLeft = RESCANS_AFTER_REMOVAL;
            scheduleRelisten();
        }
    }

    /**
     * DEVICE_REMOVAL (rdma_cm(7)): the id must be destroyed for the removal to finish. A queue's device is dead; a
     * listener is closed (after this event is acknowledged) and listens again when its device returns.
     */
    private void onDeviceRemoval(CmId id) {
        DeviceResources res = null;
        try {
            if (id.device() != null) res = devices.get(id.device());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "DEVICE_REMOVAL: " + e.getMessage());
        }
        if (id.context() instanceof PortListener l) submit(() -> listenerLost(l));
        deviceDead(res, "RDMA_CM_EVENT_DEVICE_REMOVAL");
        if (id.context() instanceof RdmaQueue q) q.requestDrain("CM DEVICE_REMOVAL");
    }

    private void listenerLost(PortListener l) {
        if (!listeners.remove(l)) return;
        try {
            l.id().close();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "closing listener: " + e.getMessage());
        }
        if (shuttingDown) return;
        LOG.log(System.Logger.Level.WARNING, "port id {0}: its device was removed; listening again when it returns",
                l.config().portId());
        lostListeners.add(l.config());
        scheduleRelisten();
    }

    /** A device is dead and not yet released: its queues, CQs, MRs or PD are still open on librdmacm's context. */
    private boolean releasingADevice() {
        if (!dyingDevices.isEmpty()) return true;
        for (DeviceResources d : devices.values()) {
            if (d.dead()) return true;
        }
        return false;
    }

    private void scheduleRelisten() {
        if (relistenAt == Long.MAX_VALUE) relistenAt = clock.getAsLong() + RELISTEN_INTERVAL_NANOS;
    }

    private void relisten(long now) {
        if (shuttingDown) return;
        if (releasingADevice()) {
            // librdmacm closes a removed device's context at a rescan that finds no CM id on it, or when the last id
            // goes after one (rdma-core librdmacm/cma.c: sync_devices_list, ucma_put_device), whatever verbs objects
            // are still open on it: a CQ then cannot be destroyed, nor its completion channel, whose open file keeps
            // the device in use (`rdma link delete` waits for it for ever, ib_uverbs_remove_one). Neither rescan
            // nor listen (a bind rescans too) until every queue, CQ, MR and PD on the device is gone.
            relistenAt = now + RELISTEN_INTERVAL_NANOS;
            return;
        }
        try {
            provider.listDevices(); // librdmacm rescans: a removed device's context closes, a returned one appears
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "listing devices: " + e.getMessage());
        }
        if (rescansLeft > 0) rescansLeft--;
        for (RdmaPortConfig port : List.copyOf(lostListeners)) {
            try {
                addListener(port); // takes it off lostListeners
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.DEBUG, "port id " + port.portId() + " cannot listen yet: "
                        + e.getMessage());
            }
        }
        if (!lostListeners.isEmpty() || rescansLeft > 0) relistenAt = now + RELISTEN_INTERVAL_NANOS;
    }

    // ------------------------------------------------------------------------------------------------------------
    // Shutdown (CM thread or a test)

    /** Stops listening and asks every open queue to drain. */
    public void beginShutdown() {
        shuttingDown = true;
        lostListeners.clear();
        relistenAt = Long.MAX_VALUE;
        for (PortListener l : listeners) {
            try {
                l.id().close();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "closing listener: " + e.getMessage());
            }
        }
        listeners.clear();
        for (RdmaQueue q : List.copyOf(open)) {
            q.requestDrain("target shutting down");
        }
    }

    /** stop() found queues that did not drain in its time: their QPs are destroyed, as for a drain timeout. */
    public void destroyUndrainedQueues() {
        for (RdmaQueue q : List.copyOf(open)) {
            drainDeadlines.remove(q);
            destroyUndrained(q);
        }
    }

    /**
     * The transport closes with queues still open (their requests still in the core): every QP is destroyed before
     * the CQs and the memory go. A device where that failed keeps its memory (leaked on purpose). After the agents
     * stopped.
     */
    public void destroyRemainingQueuePairs() {
        for (RdmaQueue q : open) {
            q.destroyQueuePair();
            if (!q.queuePairDestroyed() && q.queuePair() != null) q.resources().leakMemory();
        }
    }

    /** Open (not yet released) queues. */
    public int openQueues() { return open.size(); }

    public List<RdmaQueue> queues() { return List.copyOf(open); }

    /** Releases device resources (PDs, slabs); after every queue is released and the pollers are closed. */
    public void closeDevices() {
        for (DeviceResources d : devices.values()) {
            unwatch(d.device());
            d.close();
        }
        devices.clear();
        for (DeviceResources d : dyingDevices) d.close();
        dyingDevices.clear();
        waiter.remove(channel);
    }

    public Map<Device, DeviceResources> deviceResources() { return devices; }
}
