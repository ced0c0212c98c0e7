package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class QueueDepthTest {

    @Test
    void sendQueueCountsUnsignaledWorkUntilASignaledCompletionIsPolled() {
        Pair.Setup s = new Pair.Setup();
        s.sendWr = 4;
        s.serverRecvs = 8;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        for (int i = 0; i < 4; i++) assertEquals(0, p.client.send(i, 0, 0, 8), "unsignaled " + i);
        assertEquals(Errno.ENOMEM, p.client.send(9, SendFlags.SIGNALED, 0, 8), "fifth WR beyond max_send_wr");
        p.fabric.deliverAll();
        assertEquals(Errno.ENOMEM, p.client.send(9, SendFlags.SIGNALED, 0, 8),
                "executed unsignaled WRs still hold their slots: nothing retired them");
        assertEquals(4, p.client.softQp().outstandingSends());
        // Make room the only way a consumer can: drain via error and poll the flush... instead use a fresh pair.
        p.close();

        Pair q = Pair.connected(SoftFabric.manual(), s);
        for (int i = 0; i < 3; i++) assertEquals(0, q.client.send(i, 0, 0, 8));
        assertEquals(0, q.client.send(3, SendFlags.SIGNALED, 0, 8));
        assertEquals(Errno.ENOMEM, q.client.send(4, 0, 0, 8));
        q.fabric.deliverAll();
        assertEquals(Errno.ENOMEM, q.client.send(4, 0, 0, 8), "the slot frees when the CQE is polled, not before");
        List<Pair.Wc> c = q.client.poll();
        assertEquals(List.of(3L), c.stream().map(Pair.Wc::wrId).toList());
        assertEquals(0, q.client.softQp().outstandingSends(), "the signaled completion retired all four");
        for (int i = 0; i < 4; i++) assertEquals(0, q.client.send(10 + i, SendFlags.SIGNALED, 0, 8));
        q.close();
    }

    @Test
    void chainBeyondDepthPostsThePrefixAndFailsTheRest() {
        Pair.Setup s = new Pair.Setup();
        s.sendWr = 2;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        p.client.wr(0, 1, dev.nvmf.verbs.WrOpcode.SEND, SendFlags.SIGNALED, 0, 8).next(
                p.client.wr(1, 2, dev.nvmf.verbs.WrOpcode.SEND, SendFlags.SIGNALED, 0, 8).next(
                        p.client.wr(2, 3, dev.nvmf.verbs.WrOpcode.SEND, SendFlags.SIGNALED, 0, 8)));
        p.client.sends[1].next(p.client.sends[2]);
        assertEquals(Errno.ENOMEM, p.client.qp.postSend(p.client.sends[0]));
        p.fabric.deliverAll();
        assertEquals(List.of(1L, 2L), p.client.poll().stream().map(Pair.Wc::wrId).toList(), "bad_wr semantics");
        p.close();
    }

    @Test
    void receiveQueueDepthEnforced() {
        Pair.Setup s = new Pair.Setup();
        s.recvWr = 4;
        s.clientRecvs = 4;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        assertEquals(Errno.ENOMEM, p.client.recv(999, 0, 64));
        assertEquals(0, p.server.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(Errno.ENOMEM, p.client.recv(999, 0, 64), "consumed but not yet polled");
        assertEquals(1, p.client.poll().size());
        assertEquals(0, p.client.recv(999, 0, 64));
        p.close();
    }

    @Test
    void completionQueueOverrunPutsItsQpsInError() {
        Pair.Setup s = new Pair.Setup();
        s.cqSize = 6;
        s.clientRecvs = 4;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        // 4 receives outstanding on the client CQ's QP; 3 signaled sends complete: 3 entries, fine.
        for (int i = 0; i < 3; i++) assertEquals(0, p.client.send(i, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        // 4 incoming sends: 3 fit (6 entries), the 7th completion overruns.
        for (int i = 0; i < 4; i++) assertEquals(0, p.server.send(10 + i, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(QpState.ERR, p.client.qp.state(), "CQ overrun puts the QP in error");
        AsyncEvent e1 = p.client.device.pollAsyncEvent(0);
        AsyncEvent e2 = p.client.device.pollAsyncEvent(0);
        assertEquals(AsyncEvent.Type.CQ_ERR, e1.type());
        assertEquals(AsyncEvent.Type.QP_FATAL, e2.type());
        List<Pair.Wc> c = p.client.poll();
        assertEquals(6, c.size(), "the CQ keeps what it held");
        assertTrue(p.client.cq.poll(p.client.wc) < 0, "then reports the error");
        p.close();
    }
}
