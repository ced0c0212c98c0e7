package dev.nvmf.target.core.controller;

import dev.nvmf.target.backend.BackendCallback;
import dev.nvmf.target.core.NvmeQueue;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.subsystem.AnaPortStates;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.IdentifyController;
import dev.nvmf.target.nvme.Status;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One controller of the dynamic model (NVMe-oF 1.1, 3.3; kernel: {@code struct nvmet_ctrl}), created by an admin
 * queue Connect and ended when its admin queue closes. It holds what a host negotiated: properties (CC/CSTS),
 * features (number of queues, keep-alive timeout, async event configuration, volatile write cache, arbitration,
 * power management, temperature thresholds), the queues
 * attached to it, its keep-alive timer, held async events, error log and changed namespace list.
 */
public final class Controller {
    private final int cntlid;
    private final Subsystem subsystem;
    private final Port port;
    private final AnaPortStates anaStates;
    private final String hostNqn;
    private final byte[] hostId;
    private final boolean discovery;
    private final TargetOptions options;
    private final ControllerProperties properties;
    private final KeepAliveTimer keepAlive;
    private final AsyncEventQueue events;
    private final ErrorLog errorLog;
    private final ChangedNamespaceList changedNamespaces = new ChangedNamespaceList();
    /** Indexed by qid (0 = admin); guarded by this. */
    private final NvmeQueue[] queues;
    /** The latest command (or close) time of the queues already detached; guarded by this. */
    private long retiredTrafficNanos = Long.MIN_VALUE;

    private volatile int grantedIoQueues;
    private volatile int asyncEventConfig;
    private volatile boolean volatileWriteCache = true;
    private volatile int arbitration;
    private volatile int powerManagement;
    private final Temperature temperature = new Temperature();
    /** Event types reported and not yet acknowledged by reading their log page (kernel: aen_masked). */
    private int maskedEvents;
    private volatile boolean ended;

    /** @param anaStates the ANA group states of the port the host came in on (read by every I/O command) */
    public Controller(int cntlid, Subsystem subsystem, Port port, AnaPortStates anaStates, String hostNqn,
                      byte[] hostId, long katoMillis, TargetOptions options, long nowNanos) {
        this.cntlid = cntlid;
        this.subsystem = subsystem;
        this.port = port;
        this.anaStates = anaStates;
        this.hostNqn = hostNqn;
        this.hostId = hostId.clone();
        this.discovery = subsystem.isDiscovery();
        this.options = options;
        int maxQueueEntries = discovery ? options.adminQueueDepth() : port.maxQueueSize();
        // VS is the subsystem's (kernel attr_version; the discovery subsystem's is the target's).
        this.properties = new ControllerProperties(maxQueueEntries, options.capTimeout(),
                subsystem.config().version(), discovery);
        this.keepAlive = new KeepAliveTimer(katoMillis, nowNanos);
        this.events = new AsyncEventQueue(options.asyncEventLimit());
        this.errorLog = new ErrorLog(options.errorLogEntries());
        int maxIo = discovery ? 0 : subsystem.config().maxIoQueues();
        this.queues = new NvmeQueue[maxIo + 1];
        this.grantedIoQueues = maxIo;
    }

    public int cntlid() { return cntlid; }
    public Subsystem subsystem() { return subsystem; }
    public Port port() { return port; }
    /** The ANA group states of this controller's port. */
    public AnaPortStates anaStates() { return anaStates; }
    public String hostNqn() { return hostNqn; }
    public byte[] hostId() { return hostId.clone(); }
    public boolean isDiscovery() { return discovery; }
    public TargetOptions options() { return options; }
    public ControllerProperties properties() { return properties; }
    public KeepAliveTimer keepAlive() { return keepAlive; }
    public AsyncEventQueue events() { return events; }
    public ErrorLog errorLog() { return errorLog; }
    public ChangedNamespaceList changedNamespaces() { return changedNamespaces; }
    public boolean isEnded() { return ended; }

    /** CNTRLTYPE of Identify Controller. */
    public int controllerType() {
        return discovery ? IdentifyController.CNTRLTYPE_DISCOVERY : IdentifyController.CNTRLTYPE_IO;
    }

    // ------------------------------------------------------------------------------------------- features

    /** I/O queues the host may create (Number of Queues feature; until it is set, the subsystem's maximum). */
    public int grantedIoQueues() { return grantedIoQueues; }

    public int maxIoQueues() { return queues.length - 1; }

    /** Set Features Number of Queues: grants min(requested, maximum); returns the grant. */
    public int requestIoQueues(int requested) {
        int granted = Math.max(1, Math.min(requested, maxIoQueues()));
        grantedIoQueues = granted;
        return granted;
    }

    public int asyncEventConfig() { return asyncEventConfig; }

    public void asyncEventConfig(int value) { asyncEventConfig = value; }

    public boolean volatileWriteCache() { return volatileWriteCache; }

    public void volatileWriteCache(boolean enabled) { volatileWriteCache = enabled; }

    /** Arbitration feature (01h): AB, LPW, MPW, HPW as the host set them (round robin only: CAP.AMS is 0). */
    public int arbitration() { return arbitration; }

    public void arbitration(int value) { arbitration = value; }

    /** Power Management feature (02h): the power state (always 0: NPSS is 0) and the workload hint. */
    public int powerManagement() { return powerManagement; }

    public void powerManagement(int value) { powerManagement = value; }

    /** The temperature reported and the Temperature Threshold feature (04h). */
    public Temperature temperature() { return temperature; }

    /**
     * Set Features Temperature Threshold: a new threshold in Kelvin. When it turns the temperature warning on, a
     * SMART / Health event goes to a host that enabled temperature warnings (AEC bit 1), once until it reads the
     * SMART log (NVMe Base 2.0, 5.2, 5.27.1.4).
     */
    public void temperatureThreshold(int thsel, int kelvin) {
        if (temperature.threshold(thsel, kelvin)
                && (asyncEventConfig & AsyncEvents.CONFIG_SMART_TEMPERATURE) != 0 && takeMask(MASK_SMART)) {
            events.raise(AsyncEvents.SMART_TEMPERATURE);
        }
    }

    // ------------------------------------------------------------------------------------------- queues

    /** Attaches a queue at its qid; false if one is there already (Connect: Controller Busy). */
    public synchronized boolean attach(NvmeQueue queue) {
        int qid = queue.qid();
        if (ended || qid >= queues.length || queues[qid] != null) {
            return false;
        }
        queues[qid] = queue;
        return true;
    }

    public synchronized void detach(NvmeQueue queue) {
        int qid = queue.qid();
        if (qid < queues.length && queues[qid] == queue) {
            queues[qid] = null;
            // Its traffic still counts for the keep-alive window it fell in (a host's I/O was its keep-alive).
            retiredTrafficNanos = Math.max(retiredTrafficNanos, queue.lastCommandNanos());
        }
    }

    public synchronized NvmeQueue queue(int qid) {
        return qid >= 0 && qid < queues.length ? queues[qid] : null;
    }

    /**
     * The latest command time over all queues, those already closed included, a close counting as a command
     * (traffic-based keep-alive; kernel core.c: nvmet_sq_destroy re-arms the timer, "nvmet: fix false keep-alive
     * timeout when a controller is torn down", linux-nvme, June 2021).
     */
    public synchronized long lastTrafficNanos() {
        long last = retiredTrafficNanos;
        for (NvmeQueue q : queues) {
            if (q != null) {
                last = Math.max(last, q.lastCommandNanos());
            }
        }
        return last;
    }

    /** True while an I/O queue is attached (Number of Queues may no longer change: Command Sequence Error). */
    public synchronized boolean hasIoQueues() {
        for (int qid = 1; qid < queues.length; qid++) {
            if (queues[qid] != null) {
                return true;
            }
        }
        return false;
    }

    /** Attached queues (a snapshot). */
    public synchronized List<NvmeQueue> queues() {
        List<NvmeQueue> list = new ArrayList<>();
        for (NvmeQueue q : queues) {
            if (q != null) {
                list.add(q);
            }
        }
        return list;
    }

    /** Controller reset or shutdown: the I/O queues go (NVMe Base 2.0, 3.7.2); the admin queue stays. */
    public void disconnectIoQueues(String reason) {
        List<NvmeQueue> list = queues();
        for (NvmeQueue q : list) {
            if (q.qid() != 0) {
                q.disconnect(reason);
            }
        }
    }

    /**
     * Shutdown (CC.SHN; NVMe Base 2.0, 3.6.2): the I/O queues go, and every namespace of the subsystem is flushed,
     * asynchronously (a backend's flush may take long on a large page cache): CSTS.SHST reports processing until the
     * last flush completes, then complete, so data the host wrote is durable when it sees shutdown complete. A flush
     * that fails still completes the shutdown (there is no status for it); the host's earlier Flush commands were
     * answered on their own. Control path.
     */
    public void shutdown() {
        disconnectIoQueues("controller shutdown (CC.SHN)");
        long shutdown = properties.shutdown();
        List<Namespace> namespaces = subsystem.namespaces();
        AtomicInteger pending = new AtomicInteger(namespaces.size() + 1);
        BackendCallback flushed = (attachment, result) -> {
            if (pending.decrementAndGet() == 0) {
                properties.shutdownComplete(shutdown);
            }
        };
        for (Namespace ns : namespaces) {
            ns.backend().flush(null, flushed);
        }
        flushed.backendDone(null, 0);
    }

    /** Tears the whole association down: every queue is disconnected; the controller ends when the admin queue closes. */
    public void disconnectAll(String reason) {
        for (NvmeQueue q : queues()) {
            q.disconnect(reason);
        }
    }

    /** Fatal: CSTS.CFS and teardown (keep-alive expiry). */
    public void fatal(String reason) {
        properties.markFatal();
        disconnectAll(reason);
    }

    /**
     * A queue bound to this controller closed (its transport drained it): it is detached; the admin queue's close
     * ends the controller (kernel core.c, nvmet_sq_destroy: held Asynchronous Event Requests are failed, then
     * nvmet_ctrl_put): the subsystem forgets the controller and frees its id, and every queue left is
     * disconnected.
     */
    public void queueClosed(NvmeQueue queue) {
        detach(queue);
        if (queue.qid() == 0) {
            events.abortAll(Status.ABORTED_SQ_DELETION);
            subsystem.detach(this);
            end();
        }
    }

    /** The admin queue closed: disconnects whatever queue is left. */
    private void end() {
        ended = true;
        disconnectAll("controller " + cntlid + " ended (admin queue closed)");
    }

    // ------------------------------------------------------------------------------------------- async events

    private static final int MASK_NAMESPACE = 1;
    private static final int MASK_DISCOVERY = 2;
    private static final int MASK_SMART = 4;
    private static final int MASK_ANA = 8;

    /** A namespace of the subsystem was added, removed or changed (control plane). */
    public void namespaceChanged(int nsid) {
        changedNamespaces.add(nsid);
        if ((asyncEventConfig & AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE) != 0 && takeMask(MASK_NAMESPACE)) {
            events.raise(AsyncEvents.NAMESPACE_CHANGED);
        }
    }

    /**
     * An ANA group's state on this controller's port changed, or a namespace moved to another group (control plane):
     * an ANA change notice when the host enabled them (AEC bit 11), once until it reads the ANA log without RAE
     * (kernel core.c, {@code nvmet_send_ana_event} and {@code nvmet_aen_bit_disabled}).
     */
    public void anaChanged() {
        if (!discovery && (asyncEventConfig & AsyncEvents.CONFIG_ANA_CHANGE) != 0 && takeMask(MASK_ANA)) {
            events.raise(AsyncEvents.ANA_CHANGED);
        }
    }

    /** The discovery log changed (discovery controllers; control plane). */
    public void discoveryLogChanged() {
        if (discovery && (asyncEventConfig & AsyncEvents.CONFIG_DISCOVERY_LOG_CHANGE) != 0
                && takeMask(MASK_DISCOVERY)) {
            events.raise(AsyncEvents.DISCOVERY_LOG_CHANGED);
        }
    }

    /** The host read the changed namespace list without RAE: namespace notices may be sent again. */
    public synchronized void acknowledgeNamespaceEvent() {
        maskedEvents &= ~MASK_NAMESPACE;
    }

    /** The host read the SMART / Health log without RAE: SMART events may be sent again. */
    public synchronized void acknowledgeSmartEvent() {
        maskedEvents &= ~MASK_SMART;
    }

    /** The host read the ANA log without RAE: ANA change notices may be sent again. */
    public synchronized void acknowledgeAnaEvent() {
        maskedEvents &= ~MASK_ANA;
    }

    /** The host read the discovery log without RAE. */
    public synchronized void acknowledgeDiscoveryEvent() {
        maskedEvents &= ~MASK_DISCOVERY;
    }

    private synchronized boolean takeMask(int bit) {
        if ((maskedEvents & bit) != 0) {
            return false;
        }
        maskedEvents |= bit;
        return true;
    }

    @Override
    public String toString() {
        return "controller " + cntlid + " of " + subsystem.nqn() + " for " + hostNqn;
    }
}
