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
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

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
    /** How long an idle CM agent blocks on its channel before it looks at the devices' async events again. */
    private static final long IDLE_BLOCK_MILLIS = 100;
    /** The Linux host's default; also a floor for the CM's backlog. */
    private static final int BACKLOG = 128;

    private final RdmaTransportConfig config;
    private final CmEventChannel channel;
    private final QueueAcceptor acceptor;
    private final Poller[] pollers;
    private final RdmaMetrics metrics;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(4096);
    private final List<PortListener> listeners = new ArrayList<>();
    private final Map<Device, DeviceResources> devices = new IdentityHashMap<>();
    private final Map<Integer, RdmaQueue> byQpNum = new HashMap<>();
    private final List<RdmaQueue> open = new ArrayList<>();
    private int nextPoller;
    private volatile boolean shuttingDown;
    private volatile boolean stopping;
    private volatile Thread thread;
    /** An event the idle strategy's block took off the channel; handled first by the next duty cycle. */
    private CmEvent pending;

    public CmAgent(RdmaTransportConfig config, CmEventChannel channel, QueueAcceptor acceptor,
                       Poller[] pollers, RdmaMetrics metrics) {
        this.config = config;
        this.channel = channel;
        this.acceptor = acceptor;
        this.pollers = pollers;
        this.metrics = metrics;
        for (Poller p : pollers) p.onDrained(q -> submit(() -> release(q)));
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
        LOG.log(System.Logger.Level.INFO, "listening on {0} (port id {1}, in-capsule {2} B, depth {3})",
                id.localAddress(), port.portId(), port.inCapsuleDataSize(), port.maxQueueDepth());
    }

    /**
     * Stops listening on a port (configuration reload); queues accepted through it stay connected. Call on the CM
     * thread. Returns whether the port was listening.
     */
    public boolean removeListener(int portId) {
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

    /** How the thread that runs this agent waits: it blocks on the CM channel at once. */
    public IdleStrategy idleStrategy() {
        return new NotifyingIdleStrategy(this, 0, IDLE_BLOCK_MILLIS);
    }

    /** Commands from other threads, every pending CM event, and async events of known devices. */
    @Override
    public int doWork() {
        int work = 0;
        // First the event the idle block took: it must be acknowledged before a command releases its queue, as
        // rdma_destroy_id waits for every event of its id to be acknowledged (rdma_get_cm_event(3)).
        CmEvent e = pending;
        pending = null;
        if (e != null) {
            work++;
            handle(e);
        }
        work += runCommands();
        while ((e = channel.pollEvent(0)) != null) {
            work++;
            handle(e);
        }
        work += runCommands();
        work += pollAsyncEvents();
        return work;
    }

    @Override
    public boolean prepareToBlock() {
        // The CM channel needs no arming: an event or a wakeup ends the block.
        return commands.isEmpty() && !stopping;
    }

    @Override
    public void block(long timeoutMillis) {
        pending = channel.pollEvent(timeoutMillis);
    }

    /** The agent is about to be closed: it blocks no more, and is woken if it blocks now (any thread). */
    public void requestStop() {
        stopping = true;
        channel.wakeup();
    }

    /** Runs {@code r} on the CM thread (any thread). */
    public void submit(Runnable r) {
        while (!commands.offer(r)) Thread.onSpinWait();
        if (Thread.currentThread() != thread) channel.wakeup();
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
        for (DeviceResources d : devices.values()) {
            AsyncEvent ev;
            while ((ev = d.device().pollAsyncEvent(0)) != null) {
                n++;
                onAsyncEvent(ev);
            }
        }
        return n;
    }

    private void onAsyncEvent(AsyncEvent ev) {
        RdmaQueue q = byQpNum.get(ev.qpNum());
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
                    LOG.log(System.Logger.Level.WARNING, "async event {0} on qp {1}", ev.type(), ev.qpNum());
                    q.requestDrain("async event " + ev.type());
                }
            }
            case SQ_DRAINED, QP_LAST_WQE_REACHED -> { }
            default -> LOG.log(System.Logger.Level.INFO, "async event {0} (qp {1})", ev.type(), ev.qpNum());
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
                case DISCONNECTED, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL -> {
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
        if (listener == null) {
            reason = RejectReason.UNKNOWN_PORT;
        } else if (shuttingDown) {
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
            res = devices.computeIfAbsent(id.device(), DeviceResources::new);
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
        byQpNum.put(q.queuePair().qpNum(), q);
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
        byQpNum.values().remove(q);
        open.remove(q);
        metrics.queuesOpen.decrementAndGet();
        metrics.queuesClosed.increment();
    }

    // ------------------------------------------------------------------------------------------------------------
    // Shutdown (CM thread or a test)

    /** Stops listening and asks every open queue to drain. */
    public void beginShutdown() {
        shuttingDown = true;
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

    /** Open (not yet released) queues. */
    public int openQueues() { return open.size(); }

    public List<RdmaQueue> queues() { return List.copyOf(open); }

    /** Releases device resources (PDs, slabs); after every queue is released and the pollers are closed. */
    public void closeDevices() {
        for (DeviceResources d : devices.values()) d.close();
        devices.clear();
    }

    public Map<Device, DeviceResources> deviceResources() { return devices; }
}
