package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A link that goes down and up, and a device that is hot-removed and comes back. */
class LinkAndHotRemoveTest {

    @Test
    void aShortLinkOutageIsRiddenOutByRetriesAndReportedAsPortEvents() {
        Pair p = Pair.connected();
        p.fabric.faults().linkDown("soft1");
        AsyncEvent down = p.client.device.pollAsyncEvent(0);
        assertEquals(AsyncEvent.ofPort(AsyncEvent.Type.PORT_ERR, 1), down);
        assertEquals(AsyncEvent.Affiliation.PORT, down.type().affiliation());
        assertEquals(0, p.server.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        p.fabric.advanceTime(p.fabric.ackTimeoutNanos * 3);
        assertTrue(p.server.poll().isEmpty(), "still retrying");
        p.fabric.faults().linkUp("soft1");
        assertEquals(AsyncEvent.ofPort(AsyncEvent.Type.PORT_ACTIVE, 1), p.client.device.pollAsyncEvent(0));
        p.fabric.advanceTime(p.fabric.ackTimeoutNanos);
        assertEquals(WcStatus.SUCCESS, p.server.poll().getFirst().status());
        assertEquals(List.of(100L), p.client.poll().stream().map(Pair.Wc::wrId).toList());
        p.close();
    }

    @Test
    void aLongLinkOutageExhaustsTheRetries() {
        Pair p = Pair.connected();
        p.fabric.faults().linkDown("soft1");
        assertEquals(0, p.server.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.advanceTime(p.fabric.ackTimeoutNanos * 9);
        assertEquals(WcStatus.RETRY_EXC_ERR, p.server.poll().getFirst().status());
        assertEquals(QpState.ERR, p.server.qp.state());
        p.close();
    }

    @Test
    void afterHotRemoveTheConsumerDestroysEverythingAndListensAgainOnTheReturnedDevice() {
        Pair p = Pair.connected();
        SoftDevice old = (SoftDevice) p.server.id.device();
        int oldQpNum = p.server.qp.qpNum();
        p.fabric.removeDevice("soft0");
        List<CmEvent> events = List.of(p.serverEvents.pollEvent(0), p.serverEvents.pollEvent(0));
        assertTrue(events.stream().allMatch(e -> e.type() == CmEventType.DEVICE_REMOVAL), events.toString());
        assertTrue(events.stream().anyMatch(e -> e.id() == p.listener), "the listener is told");
        assertTrue(events.stream().anyMatch(e -> e.id() == p.server.id), "the connection's id is told");
        events.forEach(CmEvent::ack);
        assertEquals(4, p.server.poll().size(), "the QP flushed its receives");
        SoftDevice back = p.fabric.returnDevice("soft0");
        assertNotSame(old, back);
        // The removed listener still holds 10.0.0.1:4420 until it is destroyed.
        CmId early = p.serverEvents.createId("new listener");
        VerbsException busy = assertThrows(VerbsException.class, () -> early.bind(Pair.SERVER));
        assertEquals(98, busy.errno(), "EADDRINUSE");
        early.close();
        p.close();
        assertTrue(p.fabric.resources().nothingLeaked(), p.fabric.resources().toString());

        // A new listener on the returned device, and a host connecting to it.
        CmEventChannel serverEvents = p.fabric.createEventChannel();
        CmId listener = serverEvents.createId("listener 2");
        listener.bind(Pair.SERVER);
        listener.listen(4);
        assertSame(back, listener.device());
        Pair.End server = new Pair.End("server 2");
        Pair.End client = new Pair.End("client 2");
        CmEventChannel clientEvents = p.fabric.createEventChannel();
        client.id = clientEvents.createId("client 2");
        client.id.resolveAddress(Pair.CLIENT, Pair.SERVER, 1000);
        p.fabric.deliverAll();
        Pair.drain(clientEvents);
        client.id.resolveRoute(1000);
        p.fabric.deliverAll();
        Pair.drain(clientEvents);
        Pair.Setup s = new Pair.Setup();
        client.create(client.id.device(), client.id, s);
        client.id.connect(new ConnectionParameters(new byte[0], 4, 4, 1, 7, 7, false, 0));
        p.fabric.deliverAll();
        CmEvent request = serverEvents.pollEvent(0);
        assertNotNull(request);
        assertEquals(CmEventType.CONNECT_REQUEST, request.type());
        assertSame(listener, request.listenId());
        request.ack();
        server.id = request.id();
        assertSame(back, server.id.device(), "the request arrived on the new device");
        server.create(server.id.device(), server.id, s);
        assertEquals(oldQpNum, server.qp.qpNum(), "QP numbers start again on the returned device");
        server.id.accept(new ConnectionParameters(new byte[0], 0, 4, 1, 0, 7, false, 0));
        p.fabric.deliverAll();
        assertEquals(List.of(CmEventType.ESTABLISHED), Pair.drain(serverEvents));
        assertEquals(List.of(CmEventType.ESTABLISHED), Pair.drain(clientEvents));
        assertEquals(0, server.recv(1, 0, 64));
        assertEquals(0, client.send(2, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(List.of(1L), server.poll().stream().map(Pair.Wc::wrId).toList());
        client.id.close();
        server.id.close();
        listener.close();
        client.close();
        server.close();
        assertTrue(p.fabric.resources().nothingLeaked(), p.fabric.resources().toString());
    }

    @Test
    void aWildcardListenerIsNotToldOfARemovalAndReachesTheReturnedDevice() {
        SoftFabric f = SoftFabric.manual();
        f.addDevice("soft0", "10.0.0.1");
        f.addDevice("soft1", "10.0.0.2");
        CmEventChannel events = f.createEventChannel();
        CmId listener = events.createId("any");
        listener.bind(new InetSocketAddress("0.0.0.0", 4420));
        listener.listen(4);
        f.removeDevice("soft0");
        assertNull(events.pollEvent(0), "a wildcard listener is bound to no device");
        f.returnDevice("soft0");
        CmEventChannel hostEvents = f.createEventChannel();
        CmId host = hostEvents.createId(null);
        host.resolveAddress(Pair.CLIENT, Pair.SERVER, 1000);
        f.deliverAll();
        Pair.drain(hostEvents);
        host.resolveRoute(1000);
        f.deliverAll();
        Pair.drain(hostEvents);
        host.connect(new ConnectionParameters(new byte[0], 4, 4, 1, 7, 7, false, 0));
        f.deliverAll();
        CmEvent request = events.pollEvent(0);
        assertNotNull(request);
        assertEquals(CmEventType.CONNECT_REQUEST, request.type());
        assertEquals("soft0", request.id().device().name());
        request.ack();
        request.id().reject(new byte[0]);
        f.deliverAll();
        Pair.drain(hostEvents);
        request.id().close();
        host.close();
        listener.close();
        assertTrue(f.resources().nothingLeaked(), f.resources().toString());
    }
}
