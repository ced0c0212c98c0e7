package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class QpStateMachineTest {

    @Test
    void cmMovesBothSidesThroughInitRtrRts() {
        Pair.Setup s = new Pair.Setup();
        Pair p = Pair.upToRequest(SoftFabric.manual(), s);
        // rdma_create_qp leaves the active QP in INIT; the passive one too once created.
        assertEquals(QpState.INIT, p.client.qp.state());
        p.accept(s);
        // accept moves the passive QP to RTR and RTS before the REP goes out.
        assertEquals(QpState.RTS, p.server.qp.state());
        assertEquals(QpState.INIT, p.client.qp.state(), "nothing moved before the REP is delivered");
        p.fabric.deliverAll();
        assertEquals(QpState.RTS, p.client.qp.state());
        p.close();
    }

    @Test
    void receivesAcceptedFromInitSendsRefusedBeforeRts() {
        Pair.Setup s = new Pair.Setup();
        s.clientRecvs = 0;
        Pair p = Pair.upToRequest(SoftFabric.manual(), s);
        assertEquals(QpState.INIT, p.client.qp.state());
        assertEquals(0, p.client.recv(1, 0, 64), "a receive is accepted in INIT");
        // A send before RTS fails synchronously, as rxe does (EINVAL), and posts nothing.
        assertEquals(Errno.EINVAL, p.client.send(2, SendFlags.SIGNALED, 0, 8));
        assertEquals(0, p.client.softQp().outstandingSends());
        p.accept(s);
        p.fabric.deliverAll();
        assertEquals(0, p.client.send(3, SendFlags.SIGNALED, 0, 8));
        p.close();
    }

    @Test
    void resetRefusesReceivesAndTransitionsFollowTheIbaTable() {
        Pair p = Pair.connected();
        SoftQueuePair qp = p.client.softQp();
        // RTS -> RTR and RTS -> INIT are not allowed.
        assertEquals(Errno.EINVAL, qp.modify(QpState.RTR));
        assertEquals(Errno.EINVAL, qp.modify(QpState.INIT));
        assertEquals(0, qp.modify(QpState.RTS));           // RTS -> RTS
        assertEquals(0, qp.modify(QpState.SQD));           // RTS -> SQD
        assertEquals(Errno.EINVAL, qp.modify(QpState.RTR));
        assertEquals(0, qp.modify(QpState.RTS));           // SQD -> RTS
        assertEquals(0, qp.modify(QpState.ERR));
        assertEquals(Errno.EINVAL, qp.modify(QpState.RTS), "ERR only leaves to RESET");
        assertEquals(0, qp.modify(QpState.RESET));
        assertEquals(QpState.RESET, qp.state());
        assertEquals(Errno.EINVAL, p.client.recv(1, 0, 64), "RESET refuses receives");
        assertEquals(Errno.EINVAL, qp.modify(QpState.RTR), "RESET -> RTR skips INIT");
        assertEquals(0, qp.modify(QpState.INIT));
        assertEquals(0, p.client.recv(1, 0, 64));
        assertEquals(0, qp.modify(QpState.RTR));
        assertEquals(0, qp.modify(QpState.RTS));
        p.close();
    }

    @Test
    void sendQueueDrainedHoldsNewSendsUntilRts() {
        Pair p = Pair.connected();
        SoftQueuePair qp = p.client.softQp();
        assertEquals(0, qp.modify(QpState.SQD));
        AsyncEvent drained = p.client.device.pollAsyncEvent(0);
        assertNotNull(drained);
        assertEquals(AsyncEvent.Type.SQ_DRAINED, drained.type());
        assertEquals(0, p.client.send(7, SendFlags.SIGNALED, 0, 16), "posting in SQD is accepted");
        p.fabric.deliverAll();
        assertTrue(p.server.poll().isEmpty(), "SQD does not start new sends");
        assertEquals(0, qp.modify(QpState.RTS));
        p.fabric.deliverAll();
        assertEquals(List.of(200L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        assertEquals(7L, p.client.poll().getFirst().wrId());
        p.close();
    }

    @Test
    void sendQueueErrorFlushesSendsButKeepsReceiving() {
        Pair p = Pair.connected();
        SoftQueuePair qp = p.client.softQp();
        p.fabric.faults().sendQueueError(qp);
        assertEquals(QpState.SQE, qp.state());
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 16));
        List<Pair.Wc> c = p.client.poll();
        assertEquals(1, c.size());
        assertEquals(WcStatus.WR_FLUSH_ERR, c.getFirst().status());
        // The receive queue still works: the server's SEND lands.
        assertEquals(0, p.server.send(2, SendFlags.SIGNALED, 0, 16));
        p.fabric.deliverAll();
        List<Pair.Wc> r = p.client.poll();
        assertEquals(WcStatus.SUCCESS, r.getFirst().status());
        assertEquals(WcOpcode.RECV, r.getFirst().opcode());
        assertEquals(0, qp.modify(QpState.RTS), "SQE -> RTS recovers");
        assertEquals(0, p.client.send(3, SendFlags.SIGNALED, 0, 16));
        p.fabric.deliverAll();
        assertEquals(WcStatus.SUCCESS, p.client.poll().getFirst().status());
        p.close();
    }

    @Test
    void postingToErrSucceedsAndCompletesFlushed() {
        Pair p = Pair.connected();
        p.client.qp.moveToError();
        p.client.poll();   // the posted receives' flushes
        assertEquals(QpState.ERR, p.client.qp.state());
        assertEquals(0, p.client.send(5, 0, 0, 16), "post to ERR is not a synchronous failure (IBA chapter 10, QP states; thread \"drain_sq and drain_rq\")");
        assertEquals(0, p.client.recv(6, 0, 16));
        List<Pair.Wc> c = p.client.poll();
        assertEquals(2, c.size());
        assertEquals(5L, c.get(0).wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, c.get(0).status(), "even an unsignaled WR reports its flush");
        assertEquals(6L, c.get(1).wrId());
        assertEquals(WcStatus.WR_FLUSH_ERR, c.get(1).status());
        p.close();
    }

    @Test
    void acceptLeavingRtrRefusesSendsUntilEstablished() {
        SoftFabric f = SoftFabric.manual().acceptLeavesRtr(true);
        Pair.Setup s = new Pair.Setup();
        Pair p = Pair.upToRequest(f, s);
        p.accept(s);
        assertEquals(QpState.RTR, p.server.qp.state());
        assertEquals(Errno.EINVAL, p.server.send(1, SendFlags.SIGNALED, 0, 8), "RTR refuses sends (IBA chapter 10, QP states; thread \"posting send requests in RTR\")");
        f.faults().delayNext(CmMessage.RTU, 1_000_000);
        f.deliverAll();
        // The host is connected and sends at once; the passive QP in RTR receives it.
        assertEquals(0, p.client.send(2, SendFlags.SIGNALED, 0, 8));
        f.deliverAll();
        assertEquals(200L, p.server.poll().getFirst().wrId());
        assertEquals(QpState.RTR, p.server.qp.state());
        AsyncEvent est = p.server.device.pollAsyncEvent(0);
        assertEquals(AsyncEvent.Type.COMM_EST, est.type());
        assertEquals(p.server.qp.qpNum(), est.qpNum());
        f.advanceTime(1_000_000);
        assertEquals(QpState.RTS, p.server.qp.state(), "the late RTU moves it to RTS");
        assertEquals(List.of(CmEventType.ESTABLISHED), Pair.drain(p.serverEvents));
        assertEquals(0, p.server.send(3, SendFlags.SIGNALED, 0, 8));
        p.close();
    }
}
