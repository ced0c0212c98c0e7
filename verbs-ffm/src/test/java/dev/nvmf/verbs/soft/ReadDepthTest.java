package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RDMA READ depth: a requester may have as many READs outstanding as its negotiated initiator depth (within the
 * peer's responder resources). The target issues READs to fetch write data, so its limit must hold.
 */
class ReadDepthTest {

    /** The server (target role) READs {@code n} times 64 bytes from the client's slab. */
    private static void postReads(Pair p, int first, int n) {
        for (int i = first; i < first + n; i++) {
            assertEquals(0, p.server.read(i, SendFlags.SIGNALED, 4096 + 64L * i, 64, p.client.addr(64L * i),
                    p.client.mr.rkey()));
        }
    }

    @Test
    void readsWithinTheDepthSucceedAndOneBeyondIsNakedWithInvalidRequestWhenEnforced() {
        Pair p = Pair.connected();   // server depth: min(accept initiator depth 4, host responder resources 4)
        p.fabric.enforceReadDepth(true);
        postReads(p, 0, 4);
        assertEquals(4, p.server.softQp().readsOutstanding());
        postReads(p, 4, 1);
        assertEquals(1, p.server.softQp().readDepthViolations());
        p.fabric.deliverAll();
        List<Pair.Wc> c = p.server.poll();
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L, 200L, 201L, 202L, 203L), c.stream().map(Pair.Wc::wrId).toList(),
                "the READs, then the receives flushed");
        for (int i = 0; i < 4; i++) assertEquals(WcStatus.SUCCESS, c.get(i).status());
        assertEquals(WcStatus.REM_INV_REQ_ERR, c.get(4).status(), "the responder had no resource for the fifth");
        assertEquals(QpState.ERR, p.server.qp.state(), "the requester goes to error");
        assertEquals(QpState.ERR, p.client.qp.state(), "and so does the responder (class C)");
        assertEquals(1, p.fabric.readDepthViolations());
        p.close();
    }

    @Test
    void withoutEnforcementViolationsAreOnlyCounted() {
        Pair p = Pair.connected();
        postReads(p, 0, 6);
        p.fabric.deliverAll();
        assertTrue(p.server.poll().stream().allMatch(w -> w.status() == WcStatus.SUCCESS));
        assertEquals(2, p.server.softQp().readDepthViolations());
        p.close();
    }

    @Test
    void aReadStaysOutstandingUntilItsCompletionReachesTheCq() {
        Pair p = Pair.connected();
        p.fabric.enforceReadDepth(true);
        p.fabric.faults().delaySendCompletions(p.server.qp, 1_000_000);
        postReads(p, 0, 4);
        p.fabric.deliverAll();
        assertEquals(4, p.server.softQp().readsOutstanding(), "executed, but the answers are still on the way");
        postReads(p, 4, 1);
        assertEquals(1, p.server.softQp().readDepthViolations(), "a consumer counting executions, not completions, is caught");
        p.fabric.advanceTime(1_000_000);
        assertEquals(0, p.server.softQp().readsOutstanding());
        p.close();
    }

    @Test
    void aConsumerThatWaitsForCompletionsNeverViolates() {
        Pair p = Pair.connected();
        p.fabric.enforceReadDepth(true);
        for (int round = 0; round < 5; round++) {
            postReads(p, round * 4, 4);
            p.fabric.deliverAll();
            List<Pair.Wc> c = p.server.poll();
            assertEquals(4, c.size());
            assertTrue(c.stream().allMatch(w -> w.status() == WcStatus.SUCCESS));
        }
        assertEquals(0, p.server.softQp().readDepthViolations());
        assertEquals(0, p.fabric.readDepthViolations());
        p.close();
    }

    @Test
    void theDepthIsTheSmallerOfOwnInitiatorDepthAndThePeersResponderResources() {
        Pair.Setup s = new Pair.Setup();
        s.clientResponderResources = 2;   // the host accepts 2 READs at a time
        s.serverInitiatorDepth = 8;        // the target asks for more than it was offered
        Pair p = Pair.connected(SoftFabric.manual(), s);
        p.fabric.enforceReadDepth(true);
        postReads(p, 0, 3);
        p.fabric.deliverAll();
        List<Pair.Wc> c = p.server.poll();
        assertEquals(WcStatus.SUCCESS, c.get(1).status());
        assertEquals(WcStatus.REM_INV_REQ_ERR, c.get(2).status());
        p.close();
    }

    @Test
    void unsignaledReadsAreAnsweredWhenTheyExecute() {
        Pair p = Pair.connected();
        p.fabric.enforceReadDepth(true);
        for (int i = 0; i < 4; i++) {
            assertEquals(0, p.server.read(i, 0, 4096, 64, p.client.addr(0), p.client.mr.rkey()));
        }
        p.fabric.deliverAll();
        assertEquals(0, p.server.softQp().readsOutstanding());
        postReads(p, 4, 4);
        p.fabric.deliverAll();
        assertEquals(0, p.server.softQp().readDepthViolations());
        p.close();
    }
}
