package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FaultsTest {

    @Test
    void failNextPostIsOneShotAndPostsNothing() {
        Pair p = Pair.connected();
        p.fabric.faults().failNextPostSend(p.client.qp, Errno.ENOMEM).failNextPostRecv(p.client.qp, Errno.EAGAIN);
        assertEquals(Errno.ENOMEM, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        assertEquals(Errno.EAGAIN, p.client.recv(2, 0, 8));
        assertEquals(0, p.client.softQp().outstandingSends());
        assertEquals(0, p.client.send(3, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(List.of(3L), p.client.poll().stream().map(Pair.Wc::wrId).toList());
        p.close();
    }

    @Test
    void completeWithChosenStatusPutsTheQpInErrorAndFlushesTheRest() {
        Pair p = Pair.connected();
        p.fabric.faults().completeNextSendWith(p.server.qp, WcStatus.RETRY_EXC_ERR);
        assertEquals(0, p.server.send(1, 0, 0, 8));
        assertEquals(0, p.server.send(2, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        List<Pair.Wc> c = p.server.poll();
        assertEquals(1L, c.get(0).wrId());
        assertEquals(WcStatus.RETRY_EXC_ERR, c.get(0).status(), "an injected error is reported even unsignaled");
        assertEquals(2L, c.get(1).wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, c.get(1).status());
        assertEquals(QpState.ERR, p.server.qp.state());
        assertTrue(p.client.poll().isEmpty(), "nothing reached the client");
        p.close();
    }

    @Test
    void receiveSideInjectedError() {
        Pair p = Pair.connected();
        p.fabric.faults().completeNextRecvWith(p.server.qp, WcStatus.LOC_QP_OP_ERR);
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(WcStatus.REM_OP_ERR, p.client.poll().getFirst().status());
        Pair.Wc r = p.server.poll().getFirst();
        assertEquals(200L, r.wrId());
        assertEquals(WcStatus.LOC_QP_OP_ERR, r.status());
        p.close();
    }

    @Test
    void delayedCompletionsArriveLaterInOrder() {
        Pair p = Pair.connected();
        p.fabric.faults().delayCompletions(p.server.qp, 10_000);
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        assertEquals(0, p.client.send(2, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(2, p.client.poll().size(), "the sender is not delayed");
        assertTrue(p.server.poll().isEmpty());
        p.fabric.advanceTime(9_999);
        assertTrue(p.server.poll().isEmpty());
        p.fabric.advanceTime(1);
        assertEquals(List.of(200L, 201L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        p.close();
    }

    @Test
    void killedPeerMakesSendsTimeOutAndDisconnectCompleteByTimeout() {
        Pair p = Pair.connected();
        p.fabric.faults().killQueuePair(p.client.qp);   // the host vanished
        p.client.poll();
        assertEquals(0, p.server.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        long retries = 7 + 1;   // retry_count 7: the first try and 7 retries, one ACK timeout each
        p.fabric.advanceTime(p.fabric.ackTimeoutNanos * (retries - 1));
        assertTrue(p.server.poll().isEmpty(), "still retrying");
        p.fabric.advanceTime(p.fabric.ackTimeoutNanos);
        List<Pair.Wc> c = p.server.poll();
        assertEquals(WcStatus.RETRY_EXC_ERR, c.getFirst().status());
        assertEquals(QpState.ERR, p.server.qp.state());
        // The target tears down; the vanished host never answers the DREQ.
        p.server.id.disconnect();
        p.fabric.deliverAll();
        assertEquals(List.of(), Pair.drain(p.serverEvents));
        p.fabric.advanceTime(p.fabric.cmTimeoutNanos);
        assertEquals(List.of(CmEventType.DISCONNECTED), Pair.drain(p.serverEvents));
        assertEquals(List.of(), Pair.drain(p.clientEvents));
        p.close();
    }

    @Test
    void rxeQuirkSendsPostedInErrorNeverComplete() {
        Pair p = Pair.connected();
        p.fabric.faults().sendsPostedInErrorVanish(true);
        p.client.qp.moveToError();
        assertEquals(4, p.client.poll().size(), "the receives still flush");
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8), "the post is accepted");
        assertEquals(0, p.client.recv(2, 0, 8));
        p.fabric.advanceTime(60_000_000_000L);
        assertEquals(List.of(2L), p.client.poll().stream().map(Pair.Wc::wrId).toList(), "only the receive comes back");
        assertEquals(1, p.client.softQp().outstandingSends());
        p.close();
    }

    @Test
    void rxeQuirkReceivesPostedInErrorNeverComplete() {
        Pair p = Pair.connected();
        p.fabric.faults().receivesPostedInErrorVanish(true);
        p.client.qp.moveToError();
        assertEquals(List.of(100L, 101L, 102L, 103L), p.client.poll().stream().map(Pair.Wc::wrId).toList(),
                "the receives posted before the transition flush");
        assertEquals(0, p.client.recv(2, 0, 8), "the post is accepted");
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.advanceTime(60_000_000_000L);
        assertEquals(List.of(1L), p.client.poll().stream().map(Pair.Wc::wrId).toList(), "only the send comes back");
        p.close();
    }

    @Test
    void fatalQpErrorRaisesAsyncEvent() {
        Pair p = Pair.connected();
        p.fabric.faults().fatalError(p.server.qp);
        AsyncEvent e = p.server.device.pollAsyncEvent(0);
        assertEquals(AsyncEvent.Type.QP_FATAL, e.type());
        assertEquals(p.server.qp.qpNum(), e.qpNum());
        assertEquals(4, p.server.poll().size());
        p.close();
    }

    @Test
    void deviceRemovalReachesEveryIdAndFlushesItsQps() {
        Pair p = Pair.connected();
        p.fabric.removeDevice("soft0");
        assertEquals(List.of(CmEventType.DEVICE_REMOVAL), Pair.drain(p.serverEvents).subList(0, 1));
        assertEquals(AsyncEvent.Type.DEVICE_FATAL, p.server.device.pollAsyncEvent(0).type());
        assertEquals(QpState.ERR, p.server.qp.state());
        assertEquals(List.of(200L, 201L, 202L, 203L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        assertThrows(VerbsException.class, () -> p.fabric.openDevice("soft0"));
        assertThrows(VerbsException.class, () -> p.server.device.allocProtectionDomain());
        // The host's traffic to the removed device is lost: its sends time out.
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.advanceTime(p.fabric.ackTimeoutNanos * 8);
        assertEquals(WcStatus.RETRY_EXC_ERR, p.client.poll().getFirst().status());
        p.close();
        assertTrue(p.fabric.resources().nothingLeaked(), p.fabric.resources().toString());
        // Listed no more. (A listing rescans as librdmacm's does: made before everything on the removed device was
        // closed, it would have let librdmacm close the context under them; SoftDevice#closedByLibrary.)
        assertTrue(p.fabric.listDevices().stream().noneMatch(d -> d.name().equals("soft0")));
        assertTrue(p.fabric.cmContextClosed("soft0"));
    }

    /** A rescan while a removed device's objects are still open strands them: their destroy calls fail (EBADF). */
    @Test
    void aRescanAfterRemovalClosesTheContextOnceItsLastCmIdGoes() {
        Pair p = Pair.connected();
        p.fabric.removeDevice("soft0");
        p.fabric.listDevices();
        assertFalse(p.fabric.cmContextClosed("soft0"), "CM ids still use it");
        Pair.drain(p.serverEvents);
        p.server.id.close();
        p.listener.close();
        assertTrue(p.fabric.cmContextClosed("soft0"), "closed with its last CM id");
        VerbsException e = assertThrows(VerbsException.class, () -> p.server.mr.close());
        assertEquals(Errno.EBADF, e.errno(), "the region was left on a closed context");
        assertEquals(Errno.EBADF, assertThrows(VerbsException.class, () -> p.server.cq.close()).errno());
        assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, () -> p.server.channel.close()).errno(),
                "its CQ still counts on the channel: the channel cannot go (and would keep the device in use)");
    }

    @Test
    void controlPathFailures() {
        SoftFabric f = SoftFabric.manual();
        f.addDevice("soft0", "10.0.0.1");
        f.faults().failNextControl("ibv_reg_mr", Errno.ENOMEM);
        var ctx = f.openDevice("soft0");
        var pd = ctx.allocProtectionDomain();
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            var mem = arena.allocate(4096);
            VerbsException e = assertThrows(VerbsException.class, () -> pd.register(mem, 1));
            assertEquals("ibv_reg_mr", e.call());
            assertEquals(Errno.ENOMEM, e.errno());
            pd.register(mem, 1).close();
        }
        pd.close();
        ctx.close();
        assertTrue(f.resources().nothingLeaked());
    }
}
