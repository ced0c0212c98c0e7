package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.RequestState;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaTransportSoftTest {
    static void fill(MemorySegment s, long len, int seed) {
        for (long i = 0; i < len; i++) s.set(JAVA_BYTE, i, (byte) (i * 31 + seed));
    }

    static boolean same(MemorySegment a, long aOff, MemorySegment b, long bOff, long len) {
        return MemorySegment.mismatch(a, aOff, aOff + len, b, bOff, bOff + len) < 0;
    }

    /**
     * A port on the wildcard address: each queue reports the local address its host reached, which the core puts
     * in discovery log entries instead of 0.0.0.0 (kernel discovery.c, nvmet_set_disc_traddr).
     */
    @Test
    void aQueueOnAWildcardPortReportsTheAddressItsHostReached() throws Exception {
        try (SoftTarget t = new SoftTarget(c -> RdmaTransportConfig.of(
                List.of(RdmaPortConfig.of(1, "0.0.0.0", SoftTarget.PORT))), dev.nvmf.verbs.soft.SoftFabric.defaultAttributes())) {
            ScriptedInitiator h = t.connect(0, 8);
            assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
            assertEquals(InetAddress.getByName(SoftTarget.TARGET_IP), t.core.queue(0).transport.localAddress());
        }
    }

    @Test
    void connectWriteReadDisconnectReturnsEverything() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
            byte[] accept = h.acceptPrivateData();
            assertEquals(8, (accept[2] & 0xFF) | (accept[3] & 0xFF) << 8, "crqsize");
            assertEquals(1, t.transport.openQueues());
            FakeCore.Queue cq = t.core.queue(0);
            assertEquals(1, cq.qid);
            assertEquals(8, cq.sqSize);

            // In-capsule write of 4 KiB.
            MemorySegment c = Capsules.command(FakeCore.OP_WRITE, 1, 0);
            Capsules.inCapsule(c, 0, 4096);
            fill(c.asSlice(64), 4096, 1);
            assertEquals(0, Capsules.send(h, c, 4096));
            t.pump();
            assertEquals(0, Cqe.find(h, 1).status());
            assertFalse(Cqe.find(h, 1).withInvalidate());
            assertTrue(same(c, 64, t.core.disk, 0, 4096));

            // Keyed write of 16 KiB: the target READs it from host memory.
            ScriptedInitiator.HostBuffer w = h.exposeBuffer(16384);
            fill(w.memory(), 16384, 7);
            c = Capsules.command(FakeCore.OP_WRITE, 2, 8192);
            Capsules.keyed(c, w.address(), 16384, w.rkey(), true);
            Capsules.send(h, c, 0);
            t.pump();
            assertEquals(0, Cqe.find(h, 2).status());
            assertTrue(Cqe.find(h, 2).withInvalidate());
            assertEquals(w.rkey(), Cqe.find(h, 2).invalidatedRkey());
            assertTrue(same(w.memory(), 0, t.core.disk, 8192, 16384));

            // Keyed read with the invalidate subtype: WRITE + SEND_WITH_INV of that rkey.
            ScriptedInitiator.HostBuffer r = h.exposeBuffer(16384);
            c = Capsules.command(FakeCore.OP_READ, 3, 8192);
            Capsules.keyed(c, r.address(), 16384, r.rkey(), true);
            Capsules.send(h, c, 0);
            t.pump();
            Cqe resp = Cqe.find(h, 3);
            assertEquals(0, resp.status());
            assertTrue(resp.withInvalidate());
            assertEquals(r.rkey(), resp.invalidatedRkey());
            assertTrue(same(r.memory(), 0, w.memory(), 0, 16384));
            assertTrue(SoftTarget.sendErrors(h).isEmpty(), "host saw no error: " + SoftTarget.sendErrors(h));
            assertEquals(3, t.transport.metrics().responsesSent.sum());
            assertEquals(2, t.transport.metrics().remoteInvalidations.sum());
            assertEquals(1, t.transport.metrics().inCapsuleCommands.sum());
            assertEquals(1, t.transport.metrics().rdmaReads.sum());
            assertEquals(1, t.transport.metrics().rdmaWrites.sum());

            RdmaQueue q = t.transport.cm().queues().get(0);
            assertEquals(8, q.postedReceives());
            assertTrue(q.budget().idle());
            assertEquals(q.contextCount() - 8, q.count(RequestState.FREE), "every other context is free again");

            // The host disconnects: the queue drains, the core queue is closed, memory comes back.
            h.disconnect();
            t.pump();
            assertEquals(0, t.transport.openQueues());
            assertTrue(cq.closed);
            assertEquals(1, t.transport.metrics().queuesClosed.sum());
            assertEquals(0, t.fabric.resources().count(dev.nvmf.verbs.soft.SoftResources.Kind.QP) - 1,
                    "only the host's QP is left: " + t.fabric.resources());
            assertEquals(0, t.fabric.resources().undrainedQpDestroys());
            assertNotNull(q.closeReason());
        }
    }
}
