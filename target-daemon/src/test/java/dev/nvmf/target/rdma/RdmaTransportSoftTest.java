package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.target.rdma.support.TestHost;
import dev.nvmf.verbs.CmEventType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

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

    @Test
    void connectWriteReadDisconnectReturnsEverything() {
        try (SoftTarget t = new SoftTarget()) {
            TestHost h = t.connect(1, 8);
            assertEquals(CmEventType.ESTABLISHED, h.connectResult.type());
            byte[] accept = h.connectResult.parameters().privateData();
            assertEquals(8, (accept[2] & 0xFF) | (accept[3] & 0xFF) << 8, "crqsize");
            assertEquals(1, t.transport.openQueues());
            FakeCore.Queue cq = t.core.queue(0);
            assertEquals(1, cq.qid);
            assertEquals(8, cq.sqSize);

            // In-capsule write of 4 KiB.
            MemorySegment c = h.capsule(FakeCore.OP_WRITE, 1, 0);
            TestHost.inCapsule(c, 0, 4096);
            fill(c.asSlice(64), 4096, 1);
            assertEquals(0, h.send(4096));
            t.pump();
            assertEquals(0, h.response(1).status());
            assertFalse(h.response(1).withInvalidate());
            assertTrue(same(c, 64, t.core.disk, 0, 4096));

            // Keyed write of 16 KiB: the target READs it from host memory.
            TestHost.HostBuffer w = h.dataWindow(16384);
            fill(w.segment(), 16384, 7);
            c = h.capsule(FakeCore.OP_WRITE, 2, 8192);
            TestHost.keyed(c, w.address(), 16384, w.rkey(), true);
            h.send(0);
            t.pump();
            assertEquals(0, h.response(2).status());
            assertTrue(h.response(2).withInvalidate());
            assertEquals(w.rkey(), h.response(2).invalidatedRkey());
            assertTrue(same(w.segment(), 0, t.core.disk, 8192, 16384));

            // Keyed read with the invalidate subtype: WRITE + SEND_WITH_INV of that rkey.
            TestHost.HostBuffer r = h.dataWindow(16384);
            c = h.capsule(FakeCore.OP_READ, 3, 8192);
            TestHost.keyed(c, r.address(), 16384, r.rkey(), true);
            h.send(0);
            t.pump();
            TestHost.Response resp = h.response(3);
            assertEquals(0, resp.status());
            assertTrue(resp.withInvalidate());
            assertEquals(r.rkey(), resp.invalidatedRkey());
            assertTrue(same(r.segment(), 0, w.segment(), 0, 16384));
            assertTrue(h.sendErrors.isEmpty(), "host saw no error: " + h.sendErrors);
            assertEquals(3, t.transport.metrics().responsesSent.sum());
            assertEquals(2, t.transport.metrics().remoteInvalidations.sum());
            assertEquals(1, t.transport.metrics().inCapsuleCommands.sum());
            assertEquals(1, t.transport.metrics().rdmaReads.sum());
            assertEquals(1, t.transport.metrics().rdmaWrites.sum());

            RdmaQueue q = t.transport.cm().queues().get(0);
            assertEquals(8, q.postedReceives());
            assertTrue(q.budget().idle());

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
