package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

class FlushOrderTest {

    @Test
    void errorFlushesEveryOutstandingWrInPostingOrderAfterFinishedOnes() {
        Pair p = Pair.connected();
        // Two sends complete; three more are posted but not yet executed when the QP goes to error.
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 16));
        assertEquals(0, p.client.send(2, 0, 0, 16));               // unsignaled
        p.fabric.step();
        p.fabric.step();
        assertEquals(0, p.client.send(3, 0, 0, 16));
        assertEquals(0, p.client.send(4, SendFlags.SIGNALED, 0, 16));
        assertEquals(0, p.client.send(5, 0, 0, 16));
        p.client.qp.moveToError();
        assertEquals(QpState.ERR, p.client.qp.state());
        List<Pair.Wc> c = p.client.poll();
        // 1 (success), then the flushed sends 3,4,5 (unsignaled ones too), then the client's 4 receives.
        assertEquals(List.of(1L, 3L, 4L, 5L, 100L, 101L, 102L, 103L), c.stream().map(Pair.Wc::wrId).toList());
        assertEquals(WcStatus.SUCCESS, c.get(0).status());
        for (int i = 1; i < c.size(); i++) assertEquals(WcStatus.WR_FLUSH_ERR, c.get(i).status(), c.get(i).toString());
        // Nothing left: the queues are empty and the SQ budget is back.
        assertEquals(0, p.client.softQp().postedRecvs());
        assertEquals(0, p.client.softQp().outstandingSends());
        p.fabric.deliverAll();
        assertEquals(List.of(200L, 201L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        p.close();
    }

    @Test
    void flushesQueueBehindDelayedCompletions() {
        Pair p = Pair.connected();
        p.fabric.faults().delaySendCompletions(p.client.qp, 5_000);
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 16));
        assertEquals(0, p.client.send(2, SendFlags.SIGNALED, 0, 16));
        p.fabric.deliverAll();   // both executed, completions in flight for 5 us
        assertEquals(0, p.client.send(3, SendFlags.SIGNALED, 0, 16));
        p.client.qp.moveToError();
        assertEquals(List.of(100L, 101L, 102L, 103L), p.client.poll().stream().map(Pair.Wc::wrId).toList(),
                "receive flushes are not held back by the send queue's delay");
        p.fabric.advanceTime(5_000);
        List<Pair.Wc> c = p.client.poll();
        assertEquals(List.of(1L, 2L, 3L), c.stream().map(Pair.Wc::wrId).toList());
        assertEquals(List.of(WcStatus.SUCCESS, WcStatus.SUCCESS, WcStatus.WR_FLUSH_ERR),
                c.stream().map(Pair.Wc::status).toList());
        p.close();
    }

    @Test
    void disconnectFlushesBothSidesAndDeliversTimewaitExit() {
        Pair p = Pair.connected();
        p.client.id.disconnect();
        assertEquals(QpState.ERR, p.client.qp.state());
        p.fabric.deliverAll();
        assertEquals(List.of(CmEventType.DISCONNECTED), Pair.drain(p.serverEvents));
        assertEquals(List.of(CmEventType.DISCONNECTED), Pair.drain(p.clientEvents));
        // The passive side moves its QP to error when it handles DISCONNECTED (as the kernel target does).
        assertEquals(QpState.RTS, p.server.qp.state());
        p.server.id.disconnect();
        assertEquals(List.of(200L, 201L, 202L, 203L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        assertEquals(4, p.client.poll().size());
        p.fabric.advanceTime(p.fabric.timewaitNanos);
        assertEquals(List.of(CmEventType.TIMEWAIT_EXIT), Pair.drain(p.serverEvents));
        assertEquals(List.of(CmEventType.TIMEWAIT_EXIT), Pair.drain(p.clientEvents));
        p.close();
        assertEquals(0, p.fabric.resources().undrainedQpDestroys());
    }
}
