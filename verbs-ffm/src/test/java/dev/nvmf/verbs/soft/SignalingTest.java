package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WrOpcode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SignalingTest {

    @Test
    void unsignaledWorkProducesNoCompletionAndSignaledRetiresEarlierWork() {
        Pair p = Pair.connected();
        long remote = p.server.addr(32 * 1024);
        int rkey = p.server.mr.rkey();
        for (int i = 0; i < 4; i++) {
            p.client.wr(i, 10 + i, WrOpcode.RDMA_WRITE, i == 3 ? SendFlags.SIGNALED : 0, 1024L * i, 1024)
                    .remote(remote + 1024L * i, rkey).next(i < 3 ? p.client.sends[i + 1] : null);
        }
        p.client.fill(0, 4096, 5);
        assertEquals(0, p.client.qp.postSend(p.client.sends[0]));
        p.fabric.deliverAll();
        List<Pair.Wc> c = p.client.poll();
        assertEquals(1, c.size(), "only the signaled WR completes");
        assertEquals(13L, c.getFirst().wrId());
        assertEquals(WcOpcode.RDMA_WRITE, c.getFirst().opcode());
        assertEquals(-1L, p.server.at(32 * 1024, 4096).mismatch(p.client.at(0, 4096)));
        assertEquals(0, p.client.softQp().outstandingSends());
        p.close();
    }

    @Test
    void signalAllOverridesTheFlag() {
        Pair.Setup s = new Pair.Setup();
        s.signalAll = true;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        assertEquals(0, p.client.send(1, 0, 0, 8));
        p.fabric.deliverAll();
        List<Pair.Wc> c = p.client.poll();
        assertEquals(1, c.size());
        assertEquals(WcStatus.SUCCESS, c.getFirst().status());
        p.close();
    }

    @Test
    void unsignaledErrorIsStillReported() {
        Pair p = Pair.connected();
        assertEquals(0, p.client.write(1, 0, 0, 64, p.server.addr(0), 0xdead00));
        p.fabric.deliverAll();
        List<Pair.Wc> c = p.client.poll();
        assertTrue(c.size() >= 1);
        assertEquals(1L, c.getFirst().wrId());
        assertEquals(WcStatus.REM_ACCESS_ERR, c.getFirst().status());
        p.close();
    }
}
