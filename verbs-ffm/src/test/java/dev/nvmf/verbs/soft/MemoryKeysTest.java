package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.WrOpcode;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryKeysTest {

    private static Pair.Wc only(List<Pair.Wc> c) {
        assertTrue(!c.isEmpty(), "no completion");
        return c.getFirst();
    }

    @Test
    void writeAndReadMoveBytesWithinRegisteredMemory() {
        Pair p = Pair.connected();
        p.client.fill(0, 2048, 3);
        assertEquals(0, p.client.write(1, SendFlags.SIGNALED, 0, 2048, p.server.addr(8192), p.server.mr.rkey()));
        p.server.fill(40000, 512, 9);
        assertEquals(0, p.client.read(2, SendFlags.SIGNALED, 4096, 512, p.server.addr(40000), p.server.mr.rkey()));
        p.fabric.deliverAll();
        List<Pair.Wc> c = p.client.poll();
        assertEquals(WcOpcode.RDMA_WRITE, c.get(0).opcode());
        assertEquals(WcOpcode.RDMA_READ, c.get(1).opcode());
        assertEquals(512, c.get(1).byteLen());
        assertEquals(-1L, p.server.at(8192, 2048).mismatch(p.client.at(0, 2048)));
        assertEquals(-1L, p.client.at(4096, 512).mismatch(p.server.at(40000, 512)));
        assertNotEquals(p.server.mr.lkey(), p.server.mr.rkey(), "distinct keys catch lkey/rkey mix-ups");
        p.close();
    }

    @Test
    void writeWithWrongKeyOutOfBoundsOrWithoutAccessFailsRemoteAccess() {
        // wrong key: an lkey where an rkey belongs
        Pair p = Pair.connected();
        assertEquals(0, p.client.write(1, SendFlags.SIGNALED, 0, 64, p.server.addr(0), p.server.mr.lkey()));
        p.fabric.deliverAll();
        assertEquals(WcStatus.REM_ACCESS_ERR, only(p.client.poll()).status());
        assertEquals(QpState.ERR, p.client.qp.state());
        assertEquals(QpState.ERR, p.server.qp.state(), "the responder goes to error too");
        p.close();

        // out of bounds: last byte beyond the region
        p = Pair.connected();
        assertEquals(0, p.client.write(1, SendFlags.SIGNALED, 0, 64, p.server.addr(64 * 1024 - 63), p.server.mr.rkey()));
        p.fabric.deliverAll();
        assertEquals(WcStatus.REM_ACCESS_ERR, only(p.client.poll()).status());
        p.close();

        // region registered without REMOTE_WRITE / REMOTE_READ
        p = Pair.connected();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment ro = a.allocate(4096, 4096);
            MemoryRegion readOnly = p.server.pd.register(ro, Access.LOCAL_WRITE | Access.REMOTE_READ);
            assertEquals(0, p.client.read(1, SendFlags.SIGNALED, 0, 64, readOnly.address(), readOnly.rkey()));
            p.fabric.deliverAll();
            assertEquals(WcStatus.SUCCESS, only(p.client.poll()).status(), "reading is allowed");
            assertEquals(0, p.client.write(2, SendFlags.SIGNALED, 0, 64, readOnly.address(), readOnly.rkey()));
            p.fabric.deliverAll();
            assertEquals(WcStatus.REM_ACCESS_ERR, only(p.client.poll()).status(), "writing is not");
            readOnly.close();
        }
        p.close();
    }

    @Test
    void badLocalKeyFailsWithLocalProtectionError() {
        Pair p = Pair.connected();
        p.client.wr(0, 1, WrOpcode.SEND, SendFlags.SIGNALED, 0, 64);
        p.client.sge[0].set(p.client.addr(0), 64, p.client.mr.rkey());   // rkey used as lkey
        assertEquals(0, p.client.qp.postSend(p.client.sends[0]));
        p.fabric.deliverAll();
        assertEquals(WcStatus.LOC_PROT_ERR, only(p.client.poll()).status());
        p.close();
    }

    @Test
    void receiveTooSmallFailsBothEnds() {
        Pair p = Pair.connected();
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 2000));   // server receives are 1024 bytes
        p.fabric.deliverAll();
        assertEquals(WcStatus.REM_INV_REQ_ERR, only(p.client.poll()).status());
        Pair.Wc r = only(p.server.poll());
        assertEquals(200L, r.wrId());
        assertEquals(WcStatus.LOC_LEN_ERR, r.status());
        p.close();
    }

    @Test
    void aRegionsRkeyCannotBeInvalidatedRemotelyLikeOnRxe() {
        // rxe (and hardware): only type-2 windows (and kernel fast-registration regions) can be invalidated. The
        // receiver's responder fails "Class J": the payload lands, the receive completes with REM_INV_REQ_ERR and
        // the receiver's QP goes to error; the request was ACKed, so the sender's WR succeeds.
        Pair p = Pair.connected();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment host = a.allocate(4096, 4096);
            MemoryRegion exposed = p.client.pd.register(host, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            p.server.fill(1024, 16, 4);
            p.server.wr(0, 2, WrOpcode.SEND_WITH_INV, SendFlags.SIGNALED, 1024, 16).invalidateRkey(exposed.rkey());
            assertEquals(0, p.server.qp.postSend(p.server.sends[0]));
            p.fabric.deliverAll();
            List<Pair.Wc> c = p.client.poll();
            assertEquals(WcStatus.REM_INV_REQ_ERR, c.getFirst().status(), "the receive fails: " + c);
            assertEquals(100L, c.getFirst().wrId());
            assertEquals(0, c.getFirst().flags() & WorkCompletion.WC_WITH_INV, "nothing was invalidated");
            assertEquals(QpState.ERR, p.client.qp.state(), "the receiver's QP goes to error");
            for (int i = 1; i < c.size(); i++) assertEquals(WcStatus.WR_FLUSH_ERR, c.get(i).status(), "the rest is flushed");
            Pair.Wc s = only(p.server.poll());
            assertEquals(WcStatus.SUCCESS, s.status(), "the sender's SEND_WITH_INV was ACKed before the failure");
            assertEquals(WcOpcode.SEND, s.opcode());
            assertEquals(QpState.RTS, p.server.qp.state());
            // The sender finds out with its next request: no answer, retries exhausted.
            assertEquals(0, p.server.send(3, SendFlags.SIGNALED, 0, 16));
            p.fabric.advanceTime(java.time.Duration.ofSeconds(5));
            assertEquals(WcStatus.RETRY_EXC_ERR, only(p.server.poll()).status());
            c.clear();
            exposed.close();
        }
        p.close();
    }

    @Test
    void invalidatingAnUnknownKeyFailsTheSameWay() {
        Pair p = Pair.connected();
        p.server.wr(0, 1, WrOpcode.SEND_WITH_INV, SendFlags.SIGNALED, 0, 16).invalidateRkey(0x123456);
        assertEquals(0, p.server.qp.postSend(p.server.sends[0]));
        p.fabric.deliverAll();
        assertEquals(WcStatus.SUCCESS, only(p.server.poll()).status());
        assertEquals(WcStatus.REM_INV_REQ_ERR, only(p.client.poll()).status());
        assertEquals(QpState.ERR, p.client.qp.state());
        p.close();
    }

    @Test
    void localInvalidateOfARegionFailsWithLocalQpOperationError() {
        Pair p = Pair.connected();
        p.client.sends[0].wrId(7).next(null).sgList(null, 0).opcode(WrOpcode.LOCAL_INV).sendFlags(SendFlags.SIGNALED)
                .invalidateRkey(p.client.mr.rkey());
        assertEquals(0, p.client.qp.postSend(p.client.sends[0]));
        p.fabric.deliverAll();
        Pair.Wc w = only(p.client.poll());
        assertEquals(WcStatus.LOC_QP_OP_ERR, w.status());
        assertEquals(QpState.ERR, p.client.qp.state());
        p.close();
    }

    @Test
    void deviceWithoutMemoryManagementExtensionsRefusesSendWithInvalidate() {
        SoftFabric f = SoftFabric.manual();
        f.addDevice("soft0", "10.0.0.1", SoftFabric.attributesWithoutMemoryManagementExtensions());
        Pair p = Pair.connected(f, new Pair.Setup());
        assertTrue(!p.server.device.attributes().memoryManagementExtensions());
        p.server.wr(0, 1, WrOpcode.SEND_WITH_INV, SendFlags.SIGNALED, 0, 16).invalidateRkey(1);
        assertEquals(Errno.EINVAL, p.server.qp.postSend(p.server.sends[0]));
        assertEquals(0, p.server.send(2, SendFlags.SIGNALED, 0, 16), "plain SEND is the fallback");
        p.close();
    }

    @Test
    void registrationRulesAndDeregisteredKeys() {
        Pair p = Pair.connected();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment m = a.allocate(4096, 4096);
            assertThrows(VerbsException.class, () -> p.server.pd.register(m, Access.REMOTE_WRITE),
                    "remote write needs local write");
            assertThrows(VerbsException.class, () -> p.server.pd.register(MemorySegment.ofArray(new byte[64]), 0));
            MemoryRegion mr = p.server.pd.register(m, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            int rkey = mr.rkey();
            mr.close();
            assertEquals(0, p.client.write(1, SendFlags.SIGNALED, 0, 16, m.address(), rkey));
            p.fabric.deliverAll();
            assertEquals(WcStatus.REM_ACCESS_ERR, only(p.client.poll()).status(), "a deregistered key is dead");
        }
        p.close();
    }
}
