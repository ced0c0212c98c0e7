package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QueuePair;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/** An rdma_cm_id (RDMA_PS_TCP) on an {@link FfmEventChannel}. */
final class FfmCmId implements CmId {
    /** private_data_len is a uint8_t in struct rdma_conn_param and rdma_reject. */
    static final int MAX_PRIVATE_DATA = 255;

    private final FfmEventChannel channel;
    private final MemorySegment id;
    private volatile Object context;
    private volatile FfmQueuePair queuePair;
    private volatile FfmDevice device;
    private final long createdAt;
    private boolean closed;

    FfmCmId(FfmEventChannel channel, MemorySegment id, Object context) {
        this.channel = channel;
        this.id = id.reinterpret(NativeLayout.RDMA_CM_ID_SIZE);
        this.context = context;
        this.createdAt = channel.provider().nextSequence();
    }

    long address() { return id.address(); }

    private Rdma rdma() { return channel.rdma(); }

    @Override
    public Object context() { return context; }

    @Override
    public void context(Object context) { this.context = context; }

    /** The id's device, resolved once it is bound (an id never changes device: the same object for its life). */
    @Override
    public Device device() {
        FfmDevice d = device;
        if (d == null) {
            d = channel.provider().deviceFor(id.get(ADDRESS, NativeLayout.RDMA_CM_ID_VERBS).address(), createdAt);
            device = d;
        }
        return d;
    }

    @Override
    public void bind(InetSocketAddress address) {
        try (Arena arena = Arena.ofConfined()) {
            rdma().check("rdma_bind_addr", id, Sockaddr.write(arena, address));
        }
    }

    @Override
    public void listen(int backlog) {
        rdma().check("rdma_listen", id, backlog);
    }

    @Override
    public void resolveAddress(InetSocketAddress source, InetSocketAddress destination, int timeoutMillis) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment src = source == null ? MemorySegment.NULL : Sockaddr.write(arena, source);
            rdma().check("rdma_resolve_addr", id, src, Sockaddr.write(arena, destination), timeoutMillis);
        }
    }

    @Override
    public void resolveRoute(int timeoutMillis) {
        rdma().check("rdma_resolve_route", id, timeoutMillis);
    }

    @Override
    public QueuePair createQueuePair(QpInitAttributes attributes) {
        FfmProtectionDomain pd = (FfmProtectionDomain) attributes.pd();
        FfmCompletionQueue sendCq = (FfmCompletionQueue) attributes.sendCq();
        FfmCompletionQueue recvCq = (FfmCompletionQueue) attributes.recvCq();
        QpCapabilities cap = attributes.capabilities();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(NativeLayout.IBV_QP_INIT_ATTR_SIZE, 8);
            a.set(ADDRESS, NativeLayout.IBV_QP_INIT_ATTR_SEND_CQ, sendCq.cq());
            a.set(ADDRESS, NativeLayout.IBV_QP_INIT_ATTR_RECV_CQ, recvCq.cq());
            a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_SEND_WR, cap.maxSendWr());
            a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_RECV_WR, cap.maxRecvWr());
            a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_SEND_SGE, cap.maxSendSge());
            a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_RECV_SGE, cap.maxRecvSge());
            a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_INLINE_DATA, cap.maxInlineData());
            a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_QP_TYPE, NativeLayout.IBV_QPT_RC);
            a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_SQ_SIG_ALL, attributes.signalAll() ? 1 : 0);
            if (attributes.srq() != null) {
                // Receives come from the SRQ: the QP gets no receive queue of its own (verbs.h, ibv_qp_init_attr).
                a.set(ADDRESS, NativeLayout.IBV_QP_INIT_ATTR_SRQ, ((FfmSharedReceiveQueue) attributes.srq()).srq());
                a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_RECV_WR, 0);
                a.set(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_RECV_SGE, 0);
            }
            rdma().check("rdma_create_qp", id, pd.pd(), a);
            // rdma_create_qp writes the granted capacities back into the attributes.
            QpCapabilities granted = new QpCapabilities(
                    a.get(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_SEND_WR),
                    a.get(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_RECV_WR),
                    a.get(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_SEND_SGE),
                    a.get(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_RECV_SGE),
                    a.get(JAVA_INT, NativeLayout.IBV_QP_INIT_ATTR_MAX_INLINE_DATA));
            MemorySegment qp = id.get(ADDRESS, NativeLayout.RDMA_CM_ID_QP);
            FfmQueuePair q = new FfmQueuePair((FfmDevice) device(), qp, granted);
            queuePair = q;
            return q;
        }
    }

    @Override
    public QueuePair queuePair() { return queuePair; }

    @Override
    public void connect(ConnectionParameters parameters) {
        try (Arena arena = Arena.ofConfined()) {
            rdma().check("rdma_connect", id, connParam(arena, parameters));
        }
    }

    @Override
    public void accept(ConnectionParameters parameters) {
        try (Arena arena = Arena.ofConfined()) {
            rdma().check("rdma_accept", id, connParam(arena, parameters));
        }
    }

    @Override
    public void reject(byte[] privateData) {
        byte[] data = privateData == null ? new byte[0] : privateData;
        checkLength("rdma_reject", data.length);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = data.length == 0 ? MemorySegment.NULL : arena.allocateFrom(JAVA_BYTE, data);
            rdma().check("rdma_reject", id, p, (byte) data.length);
        }
    }

    @Override
    public void disconnect() {
        rdma().check("rdma_disconnect", id);
    }

    @Override
    public void notifyEstablished() {
        rdma().check("rdma_notify", id, NativeLayout.IBV_EVENT_COMM_EST);
    }

    @Override
    public InetSocketAddress localAddress() {
        return Sockaddr.read(id.asSlice(NativeLayout.RDMA_CM_ID_SRC_ADDR, NativeLayout.SOCKADDR_STORAGE_SIZE));
    }

    @Override
    public InetSocketAddress peerAddress() {
        return Sockaddr.read(id.asSlice(NativeLayout.RDMA_CM_ID_DST_ADDR, NativeLayout.SOCKADDR_STORAGE_SIZE));
    }

    @Override
    public synchronized void destroyQueuePair() {
        if (queuePair == null) return;
        rdma().run("rdma_destroy_qp", id);
        queuePair.release();
        queuePair = null;
    }

    /** rdma_destroy_id blocks until every event reported on this id has been acknowledged. */
    @Override
    public synchronized void close() {
        if (closed) return;
        destroyQueuePair();
        rdma().check("rdma_destroy_id", id);
        closed = true;
        channel.forget(this);
    }

    /** A struct rdma_conn_param with the private data copied into native memory of {@code arena}. */
    private MemorySegment connParam(Arena arena, ConnectionParameters p) {
        byte[] data = p.privateData();
        checkLength("rdma_conn_param", data.length);
        MemorySegment c = arena.allocate(NativeLayout.RDMA_CONN_PARAM_SIZE, 8);
        c.set(ADDRESS, NativeLayout.RDMA_CONN_PARAM_PRIVATE_DATA,
                data.length == 0 ? MemorySegment.NULL : arena.allocateFrom(JAVA_BYTE, data));
        c.set(JAVA_BYTE, NativeLayout.RDMA_CONN_PARAM_PRIVATE_DATA_LEN, (byte) data.length);
        c.set(JAVA_BYTE, NativeLayout.RDMA_CONN_PARAM_RESPONDER_RESOURCES, (byte) p.responderResources());
        c.set(JAVA_BYTE, NativeLayout.RDMA_CONN_PARAM_INITIATOR_DEPTH, (byte) p.initiatorDepth());
        c.set(JAVA_BYTE, NativeLayout.RDMA_CONN_PARAM_FLOW_CONTROL, (byte) p.flowControl());
        c.set(JAVA_BYTE, NativeLayout.RDMA_CONN_PARAM_RETRY_COUNT, (byte) p.retryCount());
        c.set(JAVA_BYTE, NativeLayout.RDMA_CONN_PARAM_RNR_RETRY_COUNT, (byte) p.rnrRetryCount());
        c.set(JAVA_BYTE, NativeLayout.RDMA_CONN_PARAM_SRQ, (byte) (p.srq() ? 1 : 0));
        c.set(JAVA_INT, NativeLayout.RDMA_CONN_PARAM_QP_NUM, p.qpNum());
        return c;
    }

    private static void checkLength(String call, int length) {
        if (length > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException(call + ": private data of " + length + " bytes exceeds "
                    + MAX_PRIVATE_DATA);
        }
    }

    @Override
    public String toString() {
        return "FfmCmId[0x" + Long.toHexString(id.address()) + "]";
    }
}
