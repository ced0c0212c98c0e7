package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SharedReceiveQueue;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Shared receive queues on the soft fabric: two connections to one server whose QPs take their receives from one
 * SRQ (IBA chapter 10, shared receive queues; ibv_create_srq(3), ibv_post_srq_recv(3)).
 */
class SharedReceiveQueueTest {
    private static final int SLOT = 256;

    private SoftFabric fabric;
    private CmEventChannel serverEvents;
    private CmEventChannel clientEvents;
    private CmId listener;
    private final Arena arena = Arena.ofShared();
    private final WorkCompletion wc = WorkCompletion.allocate(arena, 64);
    private final RecvWorkRequest recvWr = RecvWorkRequest.allocate(arena);
    private final ScatterGatherEntry recvSge = ScatterGatherEntry.allocate(arena, 1);
    private final MemorySegment serverSlab = arena.allocate(64 * 1024, 4096);
    private ProtectionDomain serverPd;
    private CompletionQueue serverCq;
    private MemoryRegion serverMr;
    private SharedReceiveQueue srq;
    private final List<CmId> serverIds = new ArrayList<>();
    private final List<Pair.End> clients = new ArrayList<>();

    @BeforeEach
    void setUp() {
        fabric = SoftFabric.manual();
        fabric.addDevice("soft0", "10.0.0.1");
        fabric.addDevice("soft1", "10.0.0.2");
        serverEvents = fabric.createEventChannel();
        clientEvents = fabric.createEventChannel();
        listener = serverEvents.createId("listener");
        listener.bind(Pair.SERVER);
        listener.listen(16);
    }

    @AfterEach
    void tearDown() {
        Pair.drain(clientEvents);
        Pair.drain(serverEvents);
        for (Pair.End c : clients) {
            c.id.close();
            c.close();
        }
        for (CmId id : serverIds) id.close();
        if (srq != null) srq.close();
        if (serverMr != null) serverMr.close();
        if (serverCq != null) serverCq.close();
        if (serverPd != null) serverPd.close();
        listener.close();
        clientEvents.close();
        serverEvents.close();
        arena.close();
        assertEquals(0, fabric.resources().count(SoftResources.Kind.SRQ), "SRQs left: " + fabric.resources());
        assertEquals(0, fabric.resources().qps(), "QPs left: " + fabric.resources());
    }

    /** Connects one more client; the server's QP takes its receives from the SRQ (made on the first connection). */
    private Pair.End connect(int srqDepth) {
        Pair.End c = new Pair.End("client" + clients.size());
        clients.add(c);
        c.id = clientEvents.createId(c.name);
        c.id.resolveAddress(Pair.CLIENT, Pair.SERVER, 1000);
        fabric.deliverAll();
        expect(clientEvents, CmEventType.ADDR_RESOLVED).ack();
        c.id.resolveRoute(1000);
        fabric.deliverAll();
        expect(clientEvents, CmEventType.ROUTE_RESOLVED).ack();
        c.create(c.id.device(), c.id, new Pair.Setup());
        c.id.connect(new ConnectionParameters(new byte[] {1}, 4, 4, 1, 7, 7, false, 0));
        fabric.deliverAll();
        CmEvent request = expect(serverEvents, CmEventType.CONNECT_REQUEST);
        request.ack();
        CmId id = request.id();
        serverIds.add(id);
        if (srq == null) {
            serverPd = id.device().allocProtectionDomain();
            serverCq = id.device().createCompletionQueue(64, null);
            serverMr = serverPd.register(serverSlab, Access.LOCAL_WRITE);
            srq = serverPd.createSharedReceiveQueue(srqDepth, 1);
        }
        QueuePair qp = id.createQueuePair(new QpInitAttributes(serverPd, serverCq, serverCq,
                new QpCapabilities(16, 16, 1, 1, 0), false, srq));
        assertEquals(0, qp.capabilities().maxRecvWr(), "a QP on an SRQ has no receive queue of its own");
        id.accept(new ConnectionParameters(new byte[] {2}, 0, 4, 1, 0, 7, false, 0));
        fabric.deliverAll();
        expect(clientEvents, CmEventType.ESTABLISHED).ack();
        expect(serverEvents, CmEventType.ESTABLISHED).ack();
        return c;
    }

    private static CmEvent expect(CmEventChannel ch, CmEventType type) {
        CmEvent e = ch.pollEvent(0);
        assertNotNull(e, "no " + type + " event");
        assertEquals(type, e.type(), "event " + e);
        return e;
    }

    private int postSrq(long wrId, int slot) {
        recvSge.set(serverMr.address() + (long) slot * SLOT, SLOT, serverMr.lkey());
        recvWr.wrId(wrId).next(null).sgList(recvSge, 1);
        return srq.postRecv(recvWr);
    }

    private int send(Pair.End c, long wrId, String text) {
        // Each SEND from its own bytes: the buffer stays untouched until the SEND's completion.
        byte[] b = text.getBytes();
        long offset = wrId * SLOT;
        MemorySegment.copy(MemorySegment.ofArray(b), 0, c.slab, offset, b.length);
        return c.send(wrId, SendFlags.SIGNALED, offset, b.length);
    }

    private List<Pair.Wc> pollServer() {
        List<Pair.Wc> out = new ArrayList<>();
        int n;
        while ((n = serverCq.poll(wc)) > 0) {
            for (int i = 0; i < n; i++) {
                out.add(new Pair.Wc(wc.wrId(i), wc.status(i), wc.opcode(i), wc.byteLen(i), wc.invalidatedRkey(i),
                        wc.wcFlags(i), wc.qpNum(i)));
            }
        }
        return out;
    }

    private String received(int slot, int length) {
        byte[] b = new byte[length];
        MemorySegment.copy(serverSlab, JAVA_BYTE, (long) slot * SLOT, b, 0, length);
        return new String(b);
    }

    private int serverQpNum(int i) { return serverIds.get(i).queuePair().qpNum(); }

    @Test
    void sendsOnEveryQpTakeTheSharedReceivesInPostingOrderAndNameTheirQp() {
        Pair.End a = connect(8);
        Pair.End b = connect(8);
        for (int i = 0; i < 4; i++) assertEquals(0, postSrq(500 + i, i));
        assertEquals(0, send(a, 1, "from a, first"));
        assertEquals(0, send(b, 2, "from b"));
        assertEquals(0, send(a, 3, "from a, second"));
        fabric.deliverAll();

        List<Pair.Wc> got = pollServer();
        assertEquals(3, got.size(), "completions " + got);
        int[] qps = {serverQpNum(0), serverQpNum(1), serverQpNum(0)};
        String[] texts = {"from a, first", "from b", "from a, second"};
        for (int i = 0; i < 3; i++) {
            Pair.Wc w = got.get(i);
            assertEquals(WcStatus.SUCCESS, w.status());
            assertEquals(WcOpcode.RECV, w.opcode());
            assertEquals(500 + i, w.wrId(), "the SRQ's receives are consumed in posting order");
            assertEquals(qps[i], w.qpNum(), "the completion names the QP the SEND reached");
            assertEquals(texts[i].length(), w.byteLen());
            assertEquals(texts[i], received(i, texts[i].length()));
        }
        assertEquals(1, ((SoftSharedReceiveQueue) srq).postedRecvs());
        assertEquals(2, a.poll().size());
        assertEquals(1, b.poll().size());
    }

    @Test
    void anEmptySrqIsReceiverNotReadyAndAPostedReceiveLetsTheSenderGoOn() {
        Pair.End a = connect(8);
        Pair.End b = connect(8);
        assertEquals(0, postSrq(600, 0));
        assertEquals(0, send(a, 1, "first"));
        assertEquals(0, send(b, 2, "second"));
        fabric.deliverAll();
        List<Pair.Wc> got = pollServer();
        assertEquals(1, got.size(), "one receive, one message: " + got);
        assertEquals(serverQpNum(0), got.get(0).qpNum());
        assertEquals(1, a.poll().size());
        assertEquals(0, b.poll().size(), "b's SEND waits on RNR (rnr_retry 7: forever), it does not fail");

        assertEquals(0, postSrq(601, 1));
        fabric.deliverAll();
        got = pollServer();
        assertEquals(1, got.size());
        assertEquals(601, got.get(0).wrId());
        assertEquals(serverQpNum(1), got.get(0).qpNum());
        assertEquals("second", received(1, 6));
        List<Pair.Wc> bDone = b.poll();
        assertEquals(1, bDone.size());
        assertEquals(WcStatus.SUCCESS, bDone.get(0).status());
    }

    @Test
    void aQpInErrorFlushesNothingOfTheSrqAndTheOtherQpKeepsReceiving() {
        Pair.End a = connect(8);
        Pair.End b = connect(8);
        for (int i = 0; i < 3; i++) assertEquals(0, postSrq(700 + i, i));
        serverIds.get(0).queuePair().moveToError();
        fabric.deliverAll();
        assertEquals(List.of(), pollServer(), "the SRQ's receives are not the QP's: none is flushed");
        assertEquals(3, ((SoftSharedReceiveQueue) srq).postedRecvs());

        assertEquals(0, send(b, 1, "still here"));
        fabric.deliverAll();
        List<Pair.Wc> got = pollServer();
        assertEquals(1, got.size());
        assertEquals(WcStatus.SUCCESS, got.get(0).status());
        assertEquals(700, got.get(0).wrId());
        assertEquals(serverQpNum(1), got.get(0).qpNum());
        assertEquals(2, ((SoftSharedReceiveQueue) srq).postedRecvs());
        a.poll();
    }

    @Test
    void aQpOnAnSrqRefusesItsOwnReceivesAndTheSrqOutlivesItsQps() {
        connect(4);
        QueuePair qp = serverIds.get(0).queuePair();
        recvSge.set(serverMr.address(), SLOT, serverMr.lkey());
        recvWr.wrId(1).next(null).sgList(recvSge, 1);
        assertEquals(Errno.EINVAL, qp.postRecv(recvWr));
        for (int i = 0; i < 4; i++) assertEquals(0, postSrq(800 + i, i));
        assertEquals(Errno.ENOMEM, postSrq(804, 4), "max_wr 4: the fifth receive does not fit");

        VerbsException busy = assertThrows(VerbsException.class, srq::close);
        assertEquals(Errno.EBUSY, busy.errno(), "an SRQ goes only after every QP on it");
        serverIds.get(0).destroyQueuePair();
        srq.close();
        srq = null;
        assertEquals(0, fabric.resources().count(SoftResources.Kind.SRQ));
    }

    @Test
    void creationStaysWithinTheDevicesSrqLimits() {
        connect(4);
        VerbsException tooDeep = assertThrows(VerbsException.class,
                () -> serverPd.createSharedReceiveQueue(SoftFabric.defaultAttributes().maxSrqWr() + 1, 1));
        assertEquals(Errno.EINVAL, tooDeep.errno());
        SoftDevice none = fabric.addDevice("soft2", "10.0.0.3",
                SoftFabric.defaultAttributes().withSharedReceiveQueues(0, 0, 0));
        ProtectionDomain pd = none.allocProtectionDomain();
        try {
            VerbsException unsupported = assertThrows(VerbsException.class, () -> pd.createSharedReceiveQueue(4, 1));
            assertEquals(Errno.ENOSYS, unsupported.errno());
        } finally {
            pd.close();
            none.close();
        }
        assertArrayEquals(new int[] {8388608, 32767, 31}, new int[] {SoftFabric.defaultAttributes().maxSrq(),
                SoftFabric.defaultAttributes().maxSrqWr(), SoftFabric.defaultAttributes().maxSrqSge()});
    }
}
