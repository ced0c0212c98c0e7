package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.WrOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Test harness: two devices on a fabric, a listener on the "server" (target role, 10.0.0.1:4420) and a "client"
 * (host role, 10.0.0.2) connected through the CM, each end with a PD, a CQ, a 64 KiB registered slab and a QP.
 * Drives a manual fabric with deliverAll() between steps.
 */
final class Pair implements AutoCloseable {
    static final InetSocketAddress SERVER = new InetSocketAddress("10.0.0.1", 4420);
    static final InetSocketAddress CLIENT = new InetSocketAddress("10.0.0.2", 0);

    /** A completion copied to the heap. */
    record Wc(long wrId, int status, int opcode, int byteLen, int invalidatedRkey, int flags, int qpNum) {
        @Override
        public String toString() { return "wc{" + wrId + " " + WcStatus.name(status) + " op " + opcode + " len " + byteLen + "}"; }
    }

    /** How to build the pair. */
    static final class Setup {
        int sendWr = 16;
        int recvWr = 16;
        int sge = 4;
        int inline = 64;
        int cqSize = 64;
        int serverRecvs = 4;
        int clientRecvs = 4;
        boolean signalAll;
        int clientRnrRetry = 7;   // how often the server retries RNR towards the client
        int serverRnrRetry = 7;   // how often the client retries RNR towards the server
        int retry = 7;
        int clientResponderResources = 4;
        int clientInitiatorDepth = 4;
        int serverInitiatorDepth = 4;
        byte[] clientPrivate = new byte[] {1, 2, 3};
        byte[] serverPrivate = new byte[] {9, 8};
    }

    final SoftFabric fabric;
    final End server = new End("server");
    final End client = new End("client");
    final CmEventChannel serverEvents;
    final CmEventChannel clientEvents;
    final CmId listener;
    CmEvent connectRequest;
    CmEvent clientEstablished;

    private Pair(SoftFabric fabric) {
        this.fabric = fabric;
        if (fabric.device("soft0") == null) fabric.addDevice("soft0", "10.0.0.1");
        if (fabric.device("soft1") == null) fabric.addDevice("soft1", "10.0.0.2");
        serverEvents = fabric.createEventChannel();
        clientEvents = fabric.createEventChannel();
        listener = serverEvents.createId("listener");
        listener.bind(SERVER);
        listener.listen(16);
    }

    /** A connected pair on a new manual fabric, both sides ESTABLISHED. */
    static Pair connected() { return connected(SoftFabric.manual(), new Setup()); }

    static Pair connected(SoftFabric fabric, Setup s) {
        Pair p = upToRequest(fabric, s);
        p.accept(s);
        p.fabric.deliverAll();
        p.clientEstablished = p.expect(p.clientEvents, CmEventType.ESTABLISHED);
        p.clientEstablished.ack();
        p.expect(p.serverEvents, CmEventType.ESTABLISHED).ack();
        return p;
    }

    /** Resolves, creates the client QP, connects, and stops at the server's CONNECT_REQUEST (acked). */
    static Pair upToRequest(SoftFabric fabric, Setup s) {
        Pair p = new Pair(fabric);
        p.client.id = p.clientEvents.createId("client");
        p.client.id.resolveAddress(CLIENT, SERVER, 1000);
        p.fabric.deliverAll();
        p.expect(p.clientEvents, CmEventType.ADDR_RESOLVED).ack();
        p.client.id.resolveRoute(1000);
        p.fabric.deliverAll();
        p.expect(p.clientEvents, CmEventType.ROUTE_RESOLVED).ack();
        p.client.create(p.client.id.device(), p.client.id, s);
        for (int i = 0; i < s.clientRecvs; i++) assertEquals(0, p.client.recv(100 + i, 1024L * i, 1024));
        p.client.id.connect(new ConnectionParameters(s.clientPrivate, s.clientResponderResources, s.clientInitiatorDepth,
                1, s.retry, s.clientRnrRetry, false, 0));
        p.fabric.deliverAll();
        p.connectRequest = p.expect(p.serverEvents, CmEventType.CONNECT_REQUEST);
        p.connectRequest.ack();
        p.server.id = p.connectRequest.id();
        return p;
    }

    /** Creates the server QP, posts its receives, accepts (does not deliver). */
    void accept(Setup s) {
        server.create(server.id.device(), server.id, s);
        for (int i = 0; i < s.serverRecvs; i++) assertEquals(0, server.recv(200 + i, 1024L * i, 1024));
        server.id.accept(new ConnectionParameters(s.serverPrivate, 0, s.serverInitiatorDepth, 1, 0, s.serverRnrRetry,
                false, 0));
    }

    CmEvent expect(CmEventChannel ch, CmEventType type) {
        CmEvent e = ch.pollEvent(fabric.mode() == SoftFabric.Mode.MANUAL ? 0 : 2000);
        assertNotNull(e, "no " + type + " event");
        assertEquals(type, e.type(), "event " + e);
        return e;
    }

    /** Drains every queued event of a channel (acked), returning their types. */
    static List<CmEventType> drain(CmEventChannel ch) {
        List<CmEventType> out = new ArrayList<>();
        CmEvent e;
        while ((e = ch.pollEvent(0)) != null) {
            out.add(e.type());
            e.ack();
        }
        return out;
    }

    @Override
    public void close() {
        drain(clientEvents);
        drain(serverEvents);
        if (client.id != null) client.id.close();
        if (server.id != null) server.id.close();
        listener.close();
        client.close();
        server.close();
        clientEvents.close();
        serverEvents.close();
    }

    /** One end: its resources and flyweights. */
    static final class End implements AutoCloseable {
        final String name;
        final Arena arena = Arena.ofShared();
        final MemorySegment slab = arena.allocate(64 * 1024, 4096);
        final WorkCompletion wc = WorkCompletion.allocate(arena, 64);
        final SendWorkRequest[] sends = new SendWorkRequest[16];
        final RecvWorkRequest recvWr = RecvWorkRequest.allocate(arena);
        final ScatterGatherEntry sges = ScatterGatherEntry.allocate(arena, 16);
        final ScatterGatherEntry[] sge = new ScatterGatherEntry[16];
        CmId id;
        Device device;
        ProtectionDomain pd;
        CompletionChannel channel;
        CompletionQueue cq;
        MemoryRegion mr;
        QueuePair qp;

        End(String name) {
            this.name = name;
            for (int i = 0; i < sends.length; i++) sends[i] = SendWorkRequest.allocate(arena);
            for (int i = 0; i < sge.length; i++) sge[i] = sges.at(i);
        }

        void create(Device d, CmId cmId, Setup s) {
            device = d;
            pd = d.allocProtectionDomain();
            channel = d.createCompletionChannel();
            cq = d.createCompletionQueue(s.cqSize, channel);
            mr = pd.register(slab, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            qp = cmId.createQueuePair(new QpInitAttributes(pd, cq, cq,
                    new QpCapabilities(s.sendWr, s.recvWr, s.sge, s.sge, s.inline), s.signalAll));
        }

        SoftQueuePair softQp() { return (SoftQueuePair) qp; }

        long addr(long off) { return mr.address() + off; }

        MemorySegment at(long off, long len) { return slab.asSlice(off, len); }

        int recv(long wrId, long off, int len) {
            sge[15].set(addr(off), len, mr.lkey());
            recvWr.wrId(wrId).next(null).sgList(sge[15], 1);
            return qp.postRecv(recvWr);
        }

        /** Prepares send WR {@code i} (not chained). */
        SendWorkRequest wr(int i, long wrId, int opcode, int flags, long off, int len) {
            sge[i].set(addr(off), len, mr.lkey());
            return sends[i].wrId(wrId).next(null).sgList(sge[i], 1).opcode(opcode).sendFlags(flags);
        }

        int send(long wrId, int flags, long off, int len) {
            return qp.postSend(wr(0, wrId, WrOpcode.SEND, flags, off, len));
        }

        int write(long wrId, int flags, long off, int len, long remote, int rkey) {
            return qp.postSend(wr(0, wrId, WrOpcode.RDMA_WRITE, flags, off, len).remote(remote, rkey));
        }

        int read(long wrId, int flags, long off, int len, long remote, int rkey) {
            return qp.postSend(wr(0, wrId, WrOpcode.RDMA_READ, flags, off, len).remote(remote, rkey));
        }

        /** Polls everything available now. */
        List<Wc> poll() {
            List<Wc> out = new ArrayList<>();
            int n;
            while ((n = cq.poll(wc)) > 0) {
                for (int i = 0; i < n; i++) {
                    out.add(new Wc(wc.wrId(i), wc.status(i), wc.opcode(i), wc.byteLen(i), wc.invalidatedRkey(i),
                            wc.wcFlags(i), wc.qpNum(i)));
                }
            }
            return out;
        }

        void fill(long off, int len, int seed) {
            for (int i = 0; i < len; i++) slab.set(JAVA_BYTE, off + i, (byte) (seed + i * 7));
        }

        @Override
        public void close() {
            if (mr != null) mr.close();
            if (cq != null) cq.close();
            if (channel != null) channel.close();
            if (pd != null) pd.close();
            arena.close();
        }
    }
}
