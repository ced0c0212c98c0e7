package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RnrTest {

    @Test
    void sendWithoutReceiveIsRetriedRnrCountTimesThenFails() {
        Pair.Setup s = new Pair.Setup();
        s.clientRecvs = 0;
        s.clientRnrRetry = 3;     // the client's connect asks the server to retry 3 times
        Pair p = Pair.connected(SoftFabric.manual(), s);
        long timer = p.fabric.rnrTimerNanos;
        assertEquals(0, p.server.send(1, SendFlags.SIGNALED, 0, 16));
        p.fabric.deliverAll();
        for (int retry = 1; retry <= 3; retry++) {
            assertTrue(p.server.poll().isEmpty(), "still retrying before retry " + retry);
            p.fabric.advanceTime(timer);
        }
        List<Pair.Wc> c = p.server.poll();
        assertEquals(1L, c.getFirst().wrId());
        assertEquals(WcStatus.RNR_RETRY_EXC_ERR, c.getFirst().status());
        assertEquals(List.of(200L, 201L, 202L, 203L), c.subList(1, c.size()).stream().map(Pair.Wc::wrId).toList(),
                "then the error state flushes the server's receives");
        assertEquals(QpState.ERR, p.server.qp.state());
        p.close();
    }

    @Test
    void receivePostedDuringRetriesLetsTheSendThrough() {
        Pair.Setup s = new Pair.Setup();
        s.clientRecvs = 0;
        s.clientRnrRetry = 3;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        assertEquals(0, p.server.send(1, SendFlags.SIGNALED, 0, 16));
        p.fabric.deliverAll();
        p.fabric.advanceTime(p.fabric.rnrTimerNanos);
        assertEquals(0, p.client.recv(50, 0, 64));
        p.fabric.advanceTime(p.fabric.rnrTimerNanos);
        assertEquals(WcStatus.SUCCESS, p.server.poll().getFirst().status());
        assertEquals(50L, p.client.poll().getFirst().wrId());
        p.close();
    }

    @Test
    void rnrSevenWaitsUntilAReceiveIsPosted() {
        Pair.Setup s = new Pair.Setup();
        s.clientRecvs = 0;
        s.clientRnrRetry = 7;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        assertEquals(0, p.server.send(1, SendFlags.SIGNALED, 0, 16));
        assertEquals(0, p.server.send(2, SendFlags.SIGNALED, 0, 16));
        p.fabric.deliverAll();
        p.fabric.advanceTime(60_000_000_000L);   // a minute: still waiting, no error
        assertTrue(p.server.poll().isEmpty());
        assertEquals(QpState.RTS, p.server.qp.state());
        assertEquals(0, p.client.recv(50, 0, 64));
        p.fabric.deliverAll();
        assertEquals(List.of(1L), p.server.poll().stream().map(Pair.Wc::wrId).toList(),
                "the second SEND waits behind the first (RC order)");
        assertEquals(0, p.client.recv(51, 64, 64));
        p.fabric.deliverAll();
        assertEquals(List.of(2L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        assertEquals(List.of(50L, 51L), p.client.poll().stream().map(Pair.Wc::wrId).toList());
        p.close();
    }
}
