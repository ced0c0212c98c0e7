package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.VerbsException;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * An RDMA CM id on the soft fabric, with the IB CM exchange (REQ, REP, RTU, REJ, DREQ, DREP) and the QP
 * transitions librdmacm makes: rdma_create_qp leaves the QP in INIT; accept moves the passive QP to RTR and RTS
 * and sends REP; on REP the active QP goes to RTR and RTS, the RTU goes out and the active side reports
 * ESTABLISHED; the passive side reports ESTABLISHED when the RTU arrives (or on rdma_notify after COMM_EST).
 * REJECTED, UNREACHABLE and CONNECT_ERROR move the QP to the error state; disconnect moves the local QP to ERR
 * and sends DREQ; the peer reports DISCONNECTED and answers DREP; both sides report TIMEWAIT_EXIT later.
 */
public final class SoftCmId implements CmId {
    enum State {
        IDLE, BOUND, LISTEN, ADDR_QUERY, ADDR_RESOLVED, ROUTE_QUERY, ROUTE_RESOLVED, CONNECTING, REQ_RECEIVED,
        REP_SENT, ESTABLISHED, REJECTED, DISCONNECTING, DISCONNECTED, TIMEWAIT_DONE, ERROR, DEVICE_REMOVED, DESTROYED
    }

    private static final java.util.concurrent.atomic.AtomicInteger SERIALS = new java.util.concurrent.atomic.AtomicInteger();

    final SoftFabric fabric;
    final SoftCmEventChannel channel;
    final int serial = SERIALS.incrementAndGet();
    private Object context;
    State state = State.IDLE;
    DeviceNode node;
    private boolean wildcard;
    private InetSocketAddress local;
    private InetSocketAddress peer;
    SoftQueuePair qp;
    private SoftCmId remote;
    private ConnectionParameters requestParameters;
    int unacked;
    private Action timer;

    SoftCmId(SoftCmEventChannel channel, Object context) {
        this.fabric = channel.fabric;
        this.channel = channel;
        this.context = context;
    }

    @Override
    public Object context() { return context; }

    @Override
    public void context(Object context) { this.context = context; }

    @Override
    public Device device() {
        fabric.lock.lock();
        try {
            return node == null ? null : node.cmContext;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** The CM state, for tests ("ESTABLISHED", "DISCONNECTED", ...). */
    public String cmState() {
        fabric.lock.lock();
        try {
            return state.name();
        } finally {
            fabric.lock.unlock();
        }
    }

    private void checkAlive(String call) {
        if (state == State.DESTROYED) throw new VerbsException(call, Errno.EINVAL, "Invalid argument: id destroyed");
        if (node != null && node.removed) throw new VerbsException(call, Errno.ENODEV, "No such device");
        fabric.faults.checkControl(call);
    }

    /** Calls that need the device's hardware (a QP, its transitions) fail on a dead device. */
    private void checkHardware(String call) {
        if (node != null && node.dead) throw new VerbsException(call, Errno.EIO, "Input/output error: the device is dead");
    }

    private static VerbsException invalid(String call, String why) {
        return new VerbsException(call, Errno.EINVAL, "Invalid argument: " + why);
    }

    // ------------------------------------------------------------------------------------------ addresses

    @Override
    public void bind(InetSocketAddress address) {
        fabric.lock.lock();
        try {
            checkAlive("rdma_bind_addr");
            if (state != State.IDLE) throw invalid("rdma_bind_addr", "already bound");
            bindLocked(address, "rdma_bind_addr");
        } finally {
            fabric.lock.unlock();
        }
    }

    private void bindLocked(InetSocketAddress address, String call) {
        InetAddress ip = address.getAddress();
        DeviceNode n = null;
        if (ip.isAnyLocalAddress()) {
            wildcard = true;
        } else {
            n = fabric.nodeByAddress(ip);
            if (n == null) throw new VerbsException(call, 99, "Cannot assign requested address: " + ip.getHostAddress());
        }
        int port = address.getPort() == 0 ? fabric.allocatePort() : address.getPort();
        for (SoftCmId other : fabric.boundIds) {
            if (other == this || other.local == null || other.local.getPort() != port) continue;
            // An id keeps its address until it is destroyed, even after its device went away (DEVICE_REMOVAL).
            if (other.wildcard || wildcard || other.local.getAddress().equals(ip)) {
                throw new VerbsException(call, 98, "Address already in use: port " + port);
            }
        }
        local = new InetSocketAddress(ip, port);
        attach(n);
        fabric.boundIds.add(this);
        state = State.BOUND;
    }

    private void attach(DeviceNode n) {
        if (node == n) return;
        if (node != null) node.cmIds.remove(this);
        node = n;
        if (n != null) n.cmIds.add(this);
    }

    @Override
    public void listen(int backlog) {
        fabric.lock.lock();
        try {
            checkAlive("rdma_listen");
            if (state != State.BOUND) throw invalid("rdma_listen", "not bound");
            state = State.LISTEN;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, int timeoutMillis) {
        fabric.lock.lock();
        try {
            checkAlive("rdma_resolve_addr");
            if (state != State.IDLE && state != State.BOUND) throw invalid("rdma_resolve_addr", "state " + state);
            if (source != null && state == State.IDLE) bindLocked(source, "rdma_resolve_addr");
            state = State.ADDR_QUERY;
            peer = destination;
            DeviceNode dst = fabric.nodeByAddress(destination.getAddress());
            if (fabric.faults.takeAddressError() || dst == null) {
                // Nobody answers ARP for the address: ADDR_ERROR when the timeout expires.
                fabric.scheduleIn(timeoutMillis * 1_000_000L, () -> {
                    if (state != State.ADDR_QUERY) return;
                    state = wildcard || node != null ? State.BOUND : State.IDLE;
                    emit(CmEventType.ADDR_ERROR, -Errno.ETIMEDOUT, null);
                });
            } else {
                fabric.scheduleIn(0, () -> {
                    if (state != State.ADDR_QUERY) return;
                    if (node == null) {
                        DeviceNode chosen = dst;
                        // The route to another device's address leaves from a different device, if there is one.
                        for (DeviceNode d : fabric.devices.values()) {
                            if (d != dst) { chosen = d; break; }
                        }
                        attach(chosen);
                        wildcard = false;
                    }
                    if (local == null || local.getAddress().isAnyLocalAddress()) {
                        local = new InetSocketAddress(node.ip, local == null ? fabric.allocatePort() : local.getPort());
                    }
                    state = State.ADDR_RESOLVED;
                    emit(CmEventType.ADDR_RESOLVED, 0, null);
                });
            }
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public void resolveRoute(int timeoutMillis) {
        fabric.lock.lock();
        try {
            checkAlive("rdma_resolve_route");
            if (state != State.ADDR_RESOLVED) throw invalid("rdma_resolve_route", "state " + state);
            state = State.ROUTE_QUERY;
            boolean fail = fabric.faults.takeRouteError();
            fabric.scheduleIn(fail ? timeoutMillis * 1_000_000L : 0, () -> {
                if (state != State.ROUTE_QUERY) return;
                if (fail) {
                    state = State.ADDR_RESOLVED;
                    emit(CmEventType.ROUTE_ERROR, -Errno.ETIMEDOUT, null);
                } else {
                    state = State.ROUTE_RESOLVED;
                    emit(CmEventType.ROUTE_RESOLVED, 0, null);
                }
            });
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public InetSocketAddress localAddress() {
        fabric.lock.lock();
        try {
            return local;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public InetSocketAddress peerAddress() {
        fabric.lock.lock();
        try {
            return peer;
        } finally {
            fabric.lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------ QP

    @Override
    public QueuePair createQueuePair(QpInitAttributes attributes) {
        fabric.lock.lock();
        try {
            checkAlive("rdma_create_qp");
            checkHardware("rdma_create_qp");
            if (node == null) throw invalid("rdma_create_qp", "id not bound to a device");
            if (qp != null) throw invalid("rdma_create_qp", "id already has a QP");
            if (!(attributes.pd() instanceof SoftProtectionDomain pd) || pd.closed || pd.context != node.cmContext) {
                throw invalid("rdma_create_qp", "protection domain is not on this id's device context");
            }
            SoftCompletionQueue scq = cqOf(attributes.sendCq());
            SoftCompletionQueue rcq = cqOf(attributes.recvCq());
            QpCapabilities c = attributes.capabilities();
            SoftSharedReceiveQueue srq = null;
            if (attributes.srq() != null) {
                if (!(attributes.srq() instanceof SoftSharedReceiveQueue s) || s.closed || s.pd.context != node.cmContext) {
                    throw invalid("rdma_create_qp", "shared receive queue is not on this id's device context");
                }
                srq = s;
                // The receive queue's capacities do not apply (ibv_qp_init_attr: ignored with an SRQ).
                c = new QpCapabilities(c.maxSendWr(), 0, c.maxSendSge(), 0, c.maxInlineData());
            }
            int maxWr = node.attributes.maxQpWr();
            int maxSge = node.attributes.maxSge();
            if (c.maxSendWr() < 1 || c.maxSendWr() > maxWr || c.maxRecvWr() < 0 || c.maxRecvWr() > maxWr
                    || c.maxSendSge() < 0 || c.maxSendSge() > maxSge || c.maxRecvSge() < 0 || c.maxRecvSge() > maxSge
                    || c.maxInlineData() < 0 || c.maxInlineData() > 1024) {
                throw invalid("rdma_create_qp", "capabilities beyond the device's limits: " + c);
            }
            SoftQueuePair q = new SoftQueuePair(node.cmContext, pd, scq, rcq, c, attributes.signalAll(), srq);
            if (srq != null) srq.qps.add(q);
            q.cmId = this;
            scq.qps.add(q);
            if (rcq != scq) rcq.qps.add(q);
            pd.users++;
            node.qps.add(q);
            fabric.resources.add(SoftResources.Kind.QP, q, "qp " + q.qpNum() + " " + node.name);
            q.transition(QpState.INIT);
            qp = q;
            return q;
        } finally {
            fabric.lock.unlock();
        }
    }

    private SoftCompletionQueue cqOf(CompletionQueue cq) {
        if (!(cq instanceof SoftCompletionQueue s) || s.context != node.cmContext) {
            throw invalid("rdma_create_qp", "completion queue is not on this id's device context");
        }
        return s;
    }

    @Override
    public QueuePair queuePair() {
        fabric.lock.lock();
        try {
            return qp;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public void destroyQueuePair() {
        fabric.lock.lock();
        try {
            if (qp != null) {
                qp.destroy();
                qp = null;
            }
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    // ------------------------------------------------------------------------------------------ connection

    @Override
    public void connect(ConnectionParameters parameters) {
        fabric.lock.lock();
        try {
            checkAlive("rdma_connect");
            checkHardware("rdma_connect");
            if (state != State.ROUTE_RESOLVED) throw invalid("rdma_connect", "route not resolved (state " + state + ")");
            if (parameters.privateDataLength() > SoftFabric.REQ_PRIVATE_DATA_SIZE) {
                throw invalid("rdma_connect", "private data longer than " + SoftFabric.REQ_PRIVATE_DATA_SIZE);
            }
            // retry_count governs both sides; rnr_retry_count is how often the *peer* retries (rdma_cm(7)).
            if (qp != null) qp.retryCount = parameters.retryCount();
            state = State.CONNECTING;
            requestParameters = parameters;
            send(CmMessage.REQ, null, () -> deliverRequest(parameters));
            timer = fabric.scheduleIn(fabric.cmTimeoutNanos, () -> {
                if (state != State.CONNECTING) return;
                state = State.ERROR;
                if (qp != null) qp.enterError(false);
                emit(CmEventType.UNREACHABLE, -Errno.ETIMEDOUT, null);
            });
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    /** Passive side: a REQ arrives at the destination address. */
    private void deliverRequest(ConnectionParameters p) {
        if (state != State.CONNECTING) return;
        DeviceNode dst = fabric.nodeByAddress(peer.getAddress());
        if (dst == null || dst.offTheWire()) return;
        SoftCmId listener = fabric.findListener(dst, peer.getPort());
        if (listener == null) {
            // Nobody listens on the service: the IB CM answers with REJ "invalid service ID".
            SoftCmId self = this;
            send(CmMessage.REJ, this, () -> self.deliverReject(SoftFabric.REJ_INVALID_SERVICE_ID, new byte[0]));
            return;
        }
        SoftCmId id = new SoftCmId(listener.channel, listener.context);
        fabric.resources.add(SoftResources.Kind.CM_ID, id, "cm_id " + id.serial + " (request from " + local + ")");
        id.attach(dst);
        id.local = new InetSocketAddress(dst.ip, peer.getPort());
        id.peer = local;
        id.remote = this;
        id.state = State.REQ_RECEIVED;
        id.requestParameters = p;
        remote = id;
        // The receiver sees the sender's depths swapped to its own point of view (rdma_cm does the same).
        ConnectionParameters seen = new ConnectionParameters(pad(p.privateData(), SoftFabric.REQ_PRIVATE_DATA_SIZE),
                p.initiatorDepth(), p.responderResources(), p.flowControl(), p.retryCount(), p.rnrRetryCount(),
                p.srq(), qp == null ? 0 : qp.qpNum());
        listener.channel.enqueue(new SoftCmEvent(CmEventType.CONNECT_REQUEST, 0, id, listener, seen));
    }

    @Override
    public void accept(ConnectionParameters parameters) {
        fabric.lock.lock();
        try {
            checkAlive("rdma_accept");
            checkHardware("rdma_accept");
            if (state != State.REQ_RECEIVED) throw invalid("rdma_accept", "no connect request pending (state " + state + ")");
            if (parameters.privateDataLength() > SoftFabric.REP_PRIVATE_DATA_SIZE) {
                throw invalid("rdma_accept", "private data longer than " + SoftFabric.REP_PRIVATE_DATA_SIZE);
            }
            if (qp != null) {
                if (qp.transition(QpState.RTR) != 0) throw invalid("rdma_accept", "QP in state " + qp.state);
                if (!fabric.acceptLeavesRtr) qp.transition(QpState.RTS);
                qp.retryCount = requestParameters.retryCount();
                qp.rnrRetry = requestParameters.rnrRetryCount();
                qp.peer = remote.qp;
                // READs this side may issue: its own initiator depth, within the responder resources the REQ offered.
                qp.readDepthLimit = Math.min(parameters.initiatorDepth(), requestParameters.responderResources());
            }
            state = State.REP_SENT;
            SoftCmId self = this;
            SoftCmId active = remote;
            send(CmMessage.REP, active, () -> active.deliverReply(self, parameters));
            timer = fabric.scheduleIn(fabric.cmTimeoutNanos, () -> {
                // No RTU and no rdma_notify: the REP times out (IB_CM_REP_ERROR -> UNREACHABLE).
                if (state != State.REP_SENT) return;
                state = State.ERROR;
                if (qp != null) qp.enterError(false);
                emit(CmEventType.UNREACHABLE, -Errno.ETIMEDOUT, null);
            });
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    /** Active side: the REP arrives. */
    private void deliverReply(SoftCmId passive, ConnectionParameters p) {
        if (state != State.CONNECTING) return;
        fabric.cancel(timer);
        remote = passive;
        int err = fabric.faults.takeConnectError();
        if (err != 0) {
            // librdmacm could not complete the connection (e.g. the QP transition failed): CONNECT_ERROR here,
            // and a reject goes to the passive side.
            state = State.ERROR;
            if (qp != null) qp.enterError(false);
            emit(CmEventType.CONNECT_ERROR, -err, null);
            send(CmMessage.REJ, passive, () -> passive.deliverReject(SoftFabric.REJ_CONSUMER_DEFINED,
                    new byte[SoftFabric.REJ_PRIVATE_DATA_SIZE]));
            return;
        }
        ConnectionParameters seen = new ConnectionParameters(pad(p.privateData(), SoftFabric.REP_PRIVATE_DATA_SIZE),
                p.initiatorDepth(), p.responderResources(), p.flowControl(), p.retryCount(), p.rnrRetryCount(),
                p.srq(), passive.qp == null ? 0 : passive.qp.qpNum());
        state = State.ESTABLISHED;
        if (qp != null) {
            qp.peer = passive.qp;
            qp.rnrRetry = p.rnrRetryCount();
            qp.readDepthLimit = Math.min(requestParameters.initiatorDepth(), p.responderResources());
            qp.transition(QpState.RTR);
            qp.transition(QpState.RTS);
        }
        SoftCmId self = this;
        send(CmMessage.RTU, passive, passive::deliverReadyToUse);
        emit(qp != null ? CmEventType.ESTABLISHED : CmEventType.CONNECT_RESPONSE, 0, seen);
        if (self.qp != null) self.qp.unpark();
    }

    /** Passive side: the RTU arrives. */
    private void deliverReadyToUse() {
        if (state == State.REP_SENT) establish();
    }

    private void establish() {
        fabric.cancel(timer);
        if (qp != null && qp.state == QpState.RTR) qp.transition(QpState.RTS);
        state = State.ESTABLISHED;
        emit(CmEventType.ESTABLISHED, 0, new ConnectionParameters(new byte[0], 0, 0, 0, 0, 0, false,
                remote != null && remote.qp != null ? remote.qp.qpNum() : 0));
    }

    boolean awaitingRtu() { return state == State.REP_SENT; }

    @Override
    public void notifyEstablished() {
        fabric.lock.lock();
        try {
            checkAlive("rdma_notify");
            if (state == State.REP_SENT) establish();
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public void reject(byte[] privateData) {
        fabric.lock.lock();
        try {
            checkAlive("rdma_reject");
            if (state != State.REQ_RECEIVED) throw invalid("rdma_reject", "no connect request pending (state " + state + ")");
            byte[] data = privateData == null ? new byte[0] : privateData.clone();
            if (data.length > SoftFabric.REJ_PRIVATE_DATA_SIZE) {
                throw invalid("rdma_reject", "private data longer than " + SoftFabric.REJ_PRIVATE_DATA_SIZE);
            }
            state = State.REJECTED;
            SoftCmId active = remote;
            send(CmMessage.REJ, active, () -> active.deliverReject(SoftFabric.REJ_CONSUMER_DEFINED,
                    pad(data, SoftFabric.REJ_PRIVATE_DATA_SIZE)));
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    private void deliverReject(int reason, byte[] privateData) {
        if (state != State.CONNECTING && state != State.REP_SENT) return;
        fabric.cancel(timer);
        state = State.REJECTED;
        if (qp != null) qp.enterError(false);
        emit(CmEventType.REJECTED, reason, new ConnectionParameters(privateData, 0, 0, 0, 0, 0, false, 0));
    }

    @Override
    public void disconnect() {
        fabric.lock.lock();
        try {
            checkAlive("rdma_disconnect");
            switch (state) {
                case ESTABLISHED, REP_SENT -> {
                    if (qp != null) qp.enterError(false);
                    fabric.cancel(timer);
                    state = State.DISCONNECTING;
                    sendDisconnectRequest();
                    timer = fabric.scheduleIn(fabric.cmTimeoutNanos, () -> {
                        // No DREP: DISCONNECTED anyway when the DREQ times out.
                        if (state == State.DISCONNECTING) disconnected();
                    });
                }
                case DISCONNECTING, DISCONNECTED, TIMEWAIT_DONE, REJECTED, ERROR, DEVICE_REMOVED -> {
                    if (qp != null) qp.enterError(false);
                }
                default -> throw invalid("rdma_disconnect", "not connected (state " + state + ")");
            }
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    private void sendDisconnectRequest() {
        SoftCmId self = this;
        SoftCmId other = remote;
        if (other != null) send(CmMessage.DREQ, other, () -> other.deliverDisconnectRequest(self));
    }

    private void deliverDisconnectRequest(SoftCmId from) {
        switch (state) {
            case ESTABLISHED, REP_SENT, DISCONNECTING -> {
                fabric.cancel(timer);
                send(CmMessage.DREP, from, from::deliverDisconnectReply);
                disconnected();
            }
            default -> {
                if (state != State.DESTROYED) send(CmMessage.DREP, from, from::deliverDisconnectReply);
            }
        }
    }

    private void deliverDisconnectReply() {
        if (state != State.DISCONNECTING) return;
        fabric.cancel(timer);
        disconnected();
    }

    private void disconnected() {
        state = State.DISCONNECTED;
        emit(CmEventType.DISCONNECTED, 0, null);
        timer = fabric.scheduleIn(fabric.timewaitNanos, () -> {
            if (state != State.DISCONNECTED) return;
            state = State.TIMEWAIT_DONE;
            emit(CmEventType.TIMEWAIT_EXIT, 0, null);
        });
    }

    void deviceRemoved() {
        if (state == State.DESTROYED || state == State.DEVICE_REMOVED) return;
        fabric.cancel(timer);
        state = State.DEVICE_REMOVED;
        emit(CmEventType.DEVICE_REMOVAL, 0, null);
    }

    /** The id's QP was killed (peer vanished): the id neither sends nor answers CM messages any more. */
    private boolean silent() {
        return qp != null && qp.vanished;
    }

    private void send(CmMessage kind, SoftCmId to, Runnable delivery) {
        if (silent()) return;
        long delay = fabric.faults.cmDelay(kind);
        if (delay < 0) return;   // dropped
        fabric.scheduleIn(delay, () -> {
            if (to != null && (to.state == State.DESTROYED || to.silent() || (to.node != null && to.node.offTheWire()))) return;
            if (node != null && node.offTheWire()) return;
            delivery.run();
        });
    }

    private void emit(CmEventType type, int status, ConnectionParameters parameters) {
        if (state == State.DESTROYED) return;
        if (node != null && node.cmSilent) return;   // a dead device: its ids hear nothing any more
        channel.enqueue(new SoftCmEvent(type, status, this, null, parameters));
    }

    static byte[] pad(byte[] data, int size) {
        return data.length >= size ? data : Arrays.copyOf(data, size);
    }

    @Override
    public void close() {
        fabric.lock.lock();
        try {
            if (state == State.DESTROYED) return;
            if (unacked > 0) {
                // rdma_destroy_id blocks until every event it returned is acknowledged: a deadlock, reported here.
                throw new VerbsException("rdma_destroy_id", Errno.EBUSY, unacked + " event(s) not acknowledged");
            }
            channel.discard(this);
            fabric.cancel(timer);
            switch (state) {
                case ESTABLISHED, REP_SENT -> sendDisconnectRequest();
                case REQ_RECEIVED -> {
                    SoftCmId active = remote;
                    send(CmMessage.REJ, active, () -> active.deliverReject(SoftFabric.REJ_CONSUMER_DEFINED,
                            new byte[SoftFabric.REJ_PRIVATE_DATA_SIZE]));
                }
                default -> { }
            }
            if (qp != null) {
                qp.destroy();
                qp = null;
            }
            state = State.DESTROYED;
            DeviceNode was = node;
            attach(null);
            if (was != null) was.cmContextUnused();
            fabric.boundIds.remove(this);
            fabric.resources.remove(SoftResources.Kind.CM_ID, this);
            fabric.pumpIfAutomatic();
        } finally {
            fabric.lock.unlock();
        }
    }

    boolean listening() { return state == State.LISTEN; }

    boolean wildcard() { return wildcard; }

    InetSocketAddress local() { return local; }

    @Override
    public String toString() { return "SoftCmId[" + serial + " " + state + " " + local + " -> " + peer + "]"; }
}
