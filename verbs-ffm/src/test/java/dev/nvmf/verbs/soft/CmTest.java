package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.VerbsException;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CmTest {

    @Test
    void privateDataIsPaddedAndDepthsAreSeenFromTheReceiversSide() {
        Pair.Setup s = new Pair.Setup();
        s.clientPrivate = new byte[] {1, 2, 3, 4, 5};
        Pair p = Pair.upToRequest(SoftFabric.manual(), s);
        ConnectionParameters req = p.connectRequest.parameters();
        // IB/RoCE carry 56 bytes of REQ private data: the target cannot tell a short payload from zeros.
        assertEquals(SoftFabric.REQ_PRIVATE_DATA_SIZE, req.privateDataLength());
        assertArrayEquals(Arrays.copyOf(s.clientPrivate, 56), req.privateData());
        assertEquals(p.client.qp.qpNum(), req.qpNum());
        assertSame(p.listener, p.connectRequest.listenId());
        assertEquals("listener", p.server.id.context(), "the new id inherits the listener's context");
        assertSame(p.fabric.device("soft0"), p.server.id.device());
        assertSame(p.server.id.device(), p.listener.device(), "one Device object per device");
        assertEquals(new InetSocketAddress("10.0.0.1", 4420), p.server.id.localAddress());
        assertEquals(p.client.id.localAddress(), p.server.id.peerAddress());
        p.accept(s);
        p.fabric.deliverAll();
        CmEvent est = p.expect(p.clientEvents, CmEventType.ESTABLISHED);
        assertEquals(SoftFabric.REP_PRIVATE_DATA_SIZE, est.parameters().privateDataLength());
        assertArrayEquals(Arrays.copyOf(s.serverPrivate, SoftFabric.REP_PRIVATE_DATA_SIZE), est.parameters().privateData());
        assertEquals(p.server.qp.qpNum(), est.parameters().qpNum());
        est.ack();
        p.close();
    }

    @Test
    void privateDataLongerThanTheCmCarriesIsRefused() {
        Pair.Setup s = new Pair.Setup();
        Pair p = Pair.upToRequest(SoftFabric.manual(), s);
        p.server.create(p.server.id.device(), p.server.id, s);
        VerbsException e = assertThrows(VerbsException.class,
                () -> p.server.id.accept(new ConnectionParameters(new byte[197], 0, 0, 1, 0, 7, false, 0)));
        assertEquals(Errno.EINVAL, e.errno());
        p.close();
    }

    @Test
    void rejectCarriesPrivateDataAndPutsTheActiveQpInError() {
        Pair p = Pair.upToRequest(SoftFabric.manual(), new Pair.Setup());
        p.server.id.reject(new byte[] {0, 0, 6, 0});   // NVMe/RDMA: recfmt 0, sts 6 "no resources"
        p.fabric.deliverAll();
        CmEvent rej = p.expect(p.clientEvents, CmEventType.REJECTED);
        assertEquals(SoftFabric.REJ_CONSUMER_DEFINED, rej.status());
        assertEquals(SoftFabric.REJ_PRIVATE_DATA_SIZE, rej.parameters().privateDataLength());
        assertEquals(6, rej.parameters().privateData()[2]);
        rej.ack();
        assertEquals(QpState.ERR, p.client.qp.state());
        p.close();
    }

    @Test
    void connectErrorsNoListenerLostRequestUnknownAddressActiveFailure() {
        SoftFabric f = SoftFabric.manual();
        f.addDevice("soft0", "10.0.0.1");
        f.addDevice("soft1", "10.0.0.2");
        CmEventChannel ch = f.createEventChannel();

        // Unknown destination: nobody answers ARP; ADDR_ERROR when the resolve timeout expires.
        CmId a = ch.createId(null);
        a.resolveAddress(null, new InetSocketAddress("10.9.9.9", 4420), 500);
        f.deliverAll();
        assertNull(ch.pollEvent(0));
        f.advanceTime(500_000_000L);
        CmEvent e = ch.pollEvent(0);
        assertEquals(CmEventType.ADDR_ERROR, e.type());
        assertEquals(-Errno.ETIMEDOUT, e.status());
        e.ack();
        a.close();

        // No listener on the port: REJECTED, reason "invalid service id".
        CmId b = connectTo(f, ch, 4999);
        CmEvent r = ch.pollEvent(0);
        assertEquals(CmEventType.REJECTED, r.type());
        assertEquals(SoftFabric.REJ_INVALID_SERVICE_ID, r.status());
        r.ack();
        b.close();

        // Listener present but the REQ is lost: UNREACHABLE after the CM timeout.
        CmEventChannel sch = f.createEventChannel();
        CmId listener = sch.createId(null);
        listener.bind(new InetSocketAddress("0.0.0.0", 4420));   // wildcard: every device
        listener.listen(4);
        f.faults().dropNext(CmMessage.REQ);
        CmId c = connectTo(f, ch, 4420);
        assertNull(ch.pollEvent(0));
        assertNull(sch.pollEvent(0));
        f.advanceTime(f.cmTimeoutNanos);
        CmEvent u = ch.pollEvent(0);
        assertEquals(CmEventType.UNREACHABLE, u.type());
        assertEquals(-Errno.ETIMEDOUT, u.status());
        u.ack();
        c.close();

        // The active side fails to complete (e.g. its QP transition fails): CONNECT_ERROR there, REJECTED passive.
        f.faults().failNextConnect(Errno.EINVAL);
        CmId d = connectTo(f, ch, 4420);
        CmEvent req = sch.pollEvent(0);
        assertEquals(CmEventType.CONNECT_REQUEST, req.type());
        assertSame(f.device("soft0"), req.id().device(), "a wildcard listener's request is on the addressed device");
        req.ack();
        req.id().accept(new ConnectionParameters(new byte[0], 0, 0, 1, 0, 7, false, 0));
        f.deliverAll();
        CmEvent ce = ch.pollEvent(0);
        assertEquals(CmEventType.CONNECT_ERROR, ce.type());
        ce.ack();
        CmEvent pr = sch.pollEvent(0);
        assertEquals(CmEventType.REJECTED, pr.type());
        pr.ack();
        d.close();
        req.id().close();
        listener.close();
        ch.close();
        sch.close();
        assertTrue(f.resources().nothingLeaked(), f.resources().toString());
    }

    private static CmId connectTo(SoftFabric f, CmEventChannel ch, int port) {
        CmId id = ch.createId(null);
        id.resolveAddress(new InetSocketAddress("10.0.0.2", 0), new InetSocketAddress("10.0.0.1", port), 500);
        f.deliverAll();
        ch.pollEvent(0).ack();
        id.resolveRoute(500);
        f.deliverAll();
        ch.pollEvent(0).ack();
        id.connect(new ConnectionParameters(new byte[] {1}, 0, 0, 1, 7, 7, false, 0));
        f.deliverAll();
        return id;
    }

    @Test
    void firstReceiveMayCompleteBeforeEstablishedOnThePassiveSide() {
        SoftFabric f = SoftFabric.manual();
        Pair.Setup s = new Pair.Setup();
        Pair p = Pair.upToRequest(f, s);
        f.faults().delayNext(CmMessage.RTU, 2_000_000);   // the RTU is late (thread "posting send requests in RTR")
        p.accept(s);
        f.deliverAll();
        p.expect(p.clientEvents, CmEventType.ESTABLISHED).ack();
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 64), "the host sends its first capsule at once");
        f.deliverAll();
        assertEquals(List.of(200L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        assertEquals(List.of(), Pair.drain(p.serverEvents), "the receive completed; ESTABLISHED not yet");
        assertEquals(AsyncEvent.Type.COMM_EST, p.server.device.pollAsyncEvent(0).type());
        f.advanceTime(2_000_000);
        assertEquals(List.of(CmEventType.ESTABLISHED), Pair.drain(p.serverEvents));
        p.close();
    }

    @Test
    void lostRtuIsRescuedByNotifyOrTimesOut() {
        // Rescued: the target answers COMM_EST with rdma_notify.
        SoftFabric f = SoftFabric.manual();
        Pair.Setup s = new Pair.Setup();
        Pair p = Pair.upToRequest(f, s);
        f.faults().dropNext(CmMessage.RTU);
        p.accept(s);
        f.deliverAll();
        p.expect(p.clientEvents, CmEventType.ESTABLISHED).ack();
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 64));
        f.deliverAll();
        assertEquals(AsyncEvent.Type.COMM_EST, p.server.device.pollAsyncEvent(0).type());
        p.server.id.notifyEstablished();
        assertEquals(List.of(CmEventType.ESTABLISHED), Pair.drain(p.serverEvents));
        f.advanceTime(f.cmTimeoutNanos);
        assertEquals(List.of(), Pair.drain(p.serverEvents), "no timeout once established");
        p.close();

        // Not rescued: the REP times out and the passive side gets UNREACHABLE, its QP in error.
        SoftFabric g = SoftFabric.manual();
        Pair q = Pair.upToRequest(g, s);
        g.faults().dropNext(CmMessage.RTU);
        q.accept(s);
        g.deliverAll();
        g.advanceTime(g.cmTimeoutNanos);
        assertEquals(List.of(CmEventType.UNREACHABLE), Pair.drain(q.serverEvents));
        assertEquals(QpState.ERR, q.server.qp.state());
        q.close();
    }

    @Test
    void disconnectFromThePassiveSideAndCrossingDisconnects() {
        Pair p = Pair.connected();
        p.server.id.disconnect();
        p.fabric.deliverAll();
        assertEquals(List.of(CmEventType.DISCONNECTED), Pair.drain(p.clientEvents));
        assertEquals(List.of(CmEventType.DISCONNECTED), Pair.drain(p.serverEvents));
        p.close();

        Pair q = Pair.connected();
        q.server.id.disconnect();
        q.client.id.disconnect();   // before the DREQ arrived: the DREQs cross
        q.fabric.deliverAll();
        assertEquals(List.of(CmEventType.DISCONNECTED), Pair.drain(q.clientEvents));
        assertEquals(List.of(CmEventType.DISCONNECTED), Pair.drain(q.serverEvents));
        q.fabric.advanceTime(q.fabric.timewaitNanos);
        assertEquals(List.of(CmEventType.TIMEWAIT_EXIT), Pair.drain(q.clientEvents));
        assertEquals(List.of(CmEventType.TIMEWAIT_EXIT), Pair.drain(q.serverEvents));
        q.close();
    }

    @Test
    void lostDisconnectReplyCompletesByTimeoutAndDestroyNeedsAcks() {
        Pair p = Pair.connected();
        p.fabric.faults().dropNext(CmMessage.DREP);
        p.client.id.disconnect();
        p.fabric.deliverAll();
        assertEquals(List.of(CmEventType.DISCONNECTED), Pair.drain(p.serverEvents));
        assertNull(p.clientEvents.pollEvent(0));
        p.fabric.advanceTime(p.fabric.cmTimeoutNanos);
        CmEvent d = p.clientEvents.pollEvent(0);
        assertEquals(CmEventType.DISCONNECTED, d.type());
        VerbsException e = assertThrows(VerbsException.class, () -> p.client.id.close(),
                "rdma_destroy_id waits for every event to be acked");
        assertEquals(Errno.EBUSY, e.errno());
        d.ack();
        p.close();
    }

    @Test
    void bindConflictsAndBadAddresses() {
        SoftFabric f = SoftFabric.manual();
        f.addDevice("soft0", "10.0.0.1");
        CmEventChannel ch = f.createEventChannel();
        CmId a = ch.createId(null);
        a.bind(new InetSocketAddress("10.0.0.1", 4420));
        CmId b = ch.createId(null);
        assertEquals(98, assertThrows(VerbsException.class, () -> b.bind(new InetSocketAddress("0.0.0.0", 4420))).errno());
        CmId c = ch.createId(null);
        assertEquals(99, assertThrows(VerbsException.class, () -> c.bind(new InetSocketAddress("10.1.1.1", 1))).errno());
        a.close();
        b.close();
        c.close();
        ch.close();
    }
}
