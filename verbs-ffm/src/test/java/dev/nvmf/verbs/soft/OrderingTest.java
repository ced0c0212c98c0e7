package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WrOpcode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OrderingTest {

    @Test
    void writeDataIsVisibleBeforeTheLaterSendsReceiveCompletion() {
        Pair p = Pair.connected();
        p.server.fill(0, 4096, 7);
        // The target's host-read pattern: WRITE (unsignaled) then the response SEND (signaled), one chain.
        p.server.wr(0, 1, WrOpcode.RDMA_WRITE, 0, 0, 4096).remote(p.client.addr(16384), p.client.mr.rkey())
                .next(p.server.wr(1, 2, WrOpcode.SEND, SendFlags.SIGNALED, 8192, 16));
        assertEquals(0, p.server.qp.postSend(p.server.sends[0]));
        boolean sawReceive = false;
        while (p.fabric.step()) {
            List<Pair.Wc> c = p.client.poll();
            if (!c.isEmpty()) {
                sawReceive = true;
                assertEquals(-1L, p.client.at(16384, 4096).mismatch(p.server.at(0, 4096)),
                        "the receive completion is visible only once the WRITE's data is");
            }
        }
        assertTrue(sawReceive);
        p.close();
    }

    @Test
    void sendsArriveInPostingOrderOneWrPerStep() {
        Pair p = Pair.connected();
        for (int i = 0; i < 3; i++) {
            p.client.at(i * 64L, 8).fill((byte) i);
            assertEquals(0, p.client.send(i, SendFlags.SIGNALED, i * 64L, 8));
        }
        assertTrue(p.server.poll().isEmpty(), "manual mode: nothing moves before a step");
        assertTrue(p.fabric.step());
        assertEquals(List.of(200L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        p.fabric.deliverAll();
        assertEquals(List.of(201L, 202L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        for (int i = 0; i < 3; i++) assertEquals((byte) i, p.server.at(1024L * i, 1).get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
        p.close();
    }
}
