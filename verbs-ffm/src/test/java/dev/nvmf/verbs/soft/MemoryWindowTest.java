package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.MemoryWindow;
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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Type-2 memory windows on the soft provider, modelled on rxe: bind, access, remote and local invalidation, errors. */
class MemoryWindowTest {
    private static final int EXPOSED = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE | Access.MW_BIND;

    private static Pair.Wc only(List<Pair.Wc> c) {
        assertEquals(1, c.size(), "exactly one completion: " + c);
        return c.getFirst();
    }

    /** The client's side of the test: a region it exposes through a window. */
    private static final class Exposed implements AutoCloseable {
        final Arena arena = Arena.ofConfined();
        final MemorySegment memory = arena.allocate(16384, 4096);
        final MemoryRegion mr;
        final MemoryWindow mw;

        Exposed(Pair p, int access) {
            mr = p.client.pd.register(memory, access);
            mw = p.client.pd.allocateMemoryWindow();
        }

        /** Binds [4096, 12288) for remote read and write, signaled, and delivers. */
        int bind(Pair p, long wrId) {
            int rc = mw.bind(p.client.qp, p.client.sends[0], wrId, SendFlags.SIGNALED, mr, mr.address() + 4096, 8192,
                    Access.REMOTE_READ | Access.REMOTE_WRITE);
            p.fabric.deliverAll();
            return rc;
        }

        @Override
        public void close() {
            mw.close();
            mr.close();
            arena.close();
        }
    }

    @Test
    void aBoundWindowGivesThePeerAccessWithinItsRangeOnly() {
        Pair p = Pair.connected();
        try (Exposed e = new Exposed(p, EXPOSED)) {
            int allocated = e.mw.rkey();
            int expected = e.mw.nextRkey();
            assertEquals((allocated & 0xffffff00) | ((allocated + 1) & 0xff), expected, "ibv_inc_rkey");
            assertEquals(0, e.bind(p, 1));
            Pair.Wc b = only(p.client.poll());
            assertEquals(WcStatus.SUCCESS, b.status());
            assertEquals(WcOpcode.BIND_MW, b.opcode());
            assertEquals(expected, e.mw.rkey(), "the window now has the bound key");
            assertNotEquals(e.mr.rkey(), e.mw.rkey(), "the window's key is not the region's");
            assertTrue(((SoftMemoryWindow) e.mw).isBound());

            p.server.fill(0, 512, 3);
            assertEquals(0, p.server.write(2, SendFlags.SIGNALED, 0, 512, e.mr.address() + 4096 + 100, e.mw.rkey()));
            p.server.fill(1024, 256, 0);
            e.memory.asSlice(8192, 256).fill((byte) 0x5a);
            assertEquals(0, p.server.read(3, SendFlags.SIGNALED, 1024, 256, e.mr.address() + 8192, e.mw.rkey()));
            p.fabric.deliverAll();
            List<Pair.Wc> c = p.server.poll();
            assertEquals(WcStatus.SUCCESS, c.get(0).status());
            assertEquals(WcStatus.SUCCESS, c.get(1).status());
            assertEquals(-1L, e.memory.asSlice(4096 + 100, 512).mismatch(p.server.at(0, 512)));
            assertEquals(-1L, p.server.at(1024, 256).mismatch(e.memory.asSlice(8192, 256)));

            // Inside the region but outside the window: remote access error, both QPs to error.
            assertEquals(0, p.server.write(4, SendFlags.SIGNALED, 0, 16, e.mr.address() + 12288, e.mw.rkey()));
            p.fabric.deliverAll();
            assertEquals(WcStatus.REM_ACCESS_ERR, p.server.poll().getFirst().status());
            assertEquals(QpState.ERR, p.client.qp.state());
        }
        p.close();
    }

    @Test
    void sendWithInvalidateFreesTheWindowAndItsKeyThenFails() {
        Pair p = Pair.connected();
        try (Exposed e = new Exposed(p, EXPOSED)) {
            assertEquals(0, e.bind(p, 1));
            assertEquals(WcStatus.SUCCESS, only(p.client.poll()).status());
            int key = e.mw.rkey();
            p.server.fill(2048, 32, 8);
            p.server.wr(0, 5, WrOpcode.SEND_WITH_INV, SendFlags.SIGNALED, 2048, 32).invalidateRkey(key);
            assertEquals(0, p.server.qp.postSend(p.server.sends[0]));
            p.fabric.deliverAll();
            Pair.Wc r = only(p.client.poll());
            assertEquals(WcStatus.SUCCESS, r.status());
            assertEquals(WcOpcode.RECV, r.opcode());
            assertTrue((r.flags() & WorkCompletion.WC_WITH_INV) != 0, "IBV_WC_WITH_INV");
            assertEquals(key, r.invalidatedRkey());
            assertEquals(32, r.byteLen());
            assertEquals(-1L, p.client.at(0, 32).mismatch(p.server.at(2048, 32)));
            assertEquals(WcStatus.SUCCESS, only(p.server.poll()).status());
            assertFalse(((SoftMemoryWindow) e.mw).isBound());

            // The invalidated key no longer reaches the memory.
            assertEquals(0, p.server.write(6, SendFlags.SIGNALED, 0, 16, e.mr.address() + 4096, key));
            p.fabric.deliverAll();
            assertEquals(WcStatus.REM_ACCESS_ERR, p.server.poll().getFirst().status());
        }
        p.close();
        assertTrue(p.fabric.resources().nothingLeaked(), p.fabric.resources().toString());
    }

    @Test
    void aFreedWindowRebindsWithANewKeyAndTheOldKeyStaysDead() {
        Pair p = Pair.connected();
        try (Exposed e = new Exposed(p, EXPOSED)) {
            assertEquals(0, e.bind(p, 1));
            int first = e.mw.rkey();
            // Rebinding a bound type-2 window is refused (it binds from the free state only) ...
            // ... so invalidate it locally first.
            p.client.sends[1].wrId(2).next(null).sgList(null, 0).opcode(WrOpcode.LOCAL_INV)
                    .sendFlags(SendFlags.SIGNALED).invalidateRkey(first);
            assertEquals(0, p.client.qp.postSend(p.client.sends[1]));
            p.fabric.deliverAll();
            assertEquals(0, e.bind(p, 3));
            List<Pair.Wc> c = p.client.poll();
            assertEquals(3, c.size(), c.toString());
            assertEquals(WcOpcode.LOCAL_INV, c.get(1).opcode());
            assertEquals(WcStatus.SUCCESS, c.get(1).status());
            assertEquals(WcStatus.SUCCESS, c.get(2).status());
            int second = e.mw.rkey();
            assertNotEquals(first, second);
            assertEquals(first >>> 8, second >>> 8, "same window, new key byte");

            assertEquals(0, p.server.write(4, SendFlags.SIGNALED, 0, 64, e.mr.address() + 4096, second));
            p.fabric.deliverAll();
            assertEquals(WcStatus.SUCCESS, only(p.server.poll()).status());
            assertEquals(0, p.server.write(5, SendFlags.SIGNALED, 0, 64, e.mr.address() + 4096, first));
            p.fabric.deliverAll();
            assertEquals(WcStatus.REM_ACCESS_ERR, p.server.poll().getFirst().status(), "the stale key is dead");
        }
        p.close();
    }

    @Test
    void bindErrorsCompleteWithMwBindErrAndMoveTheQpToError() {
        // The region lacks MW_BIND.
        Pair p = Pair.connected();
        try (Exposed e = new Exposed(p, Access.LOCAL_WRITE | Access.REMOTE_WRITE)) {
            assertEquals(0, e.bind(p, 1));
            Pair.Wc w = p.client.poll().getFirst();
            assertEquals(WcStatus.MW_BIND_ERR, w.status());
            assertEquals(QpState.ERR, p.client.qp.state());
        }
        p.close();

        // Binding a window that is already bound.
        p = Pair.connected();
        try (Exposed e = new Exposed(p, EXPOSED)) {
            assertEquals(0, e.bind(p, 1));
            assertEquals(0, e.bind(p, 2));
            List<Pair.Wc> c = p.client.poll();
            assertEquals(WcStatus.SUCCESS, c.get(0).status());
            assertEquals(WcStatus.MW_BIND_ERR, c.get(1).status());
        }
        p.close();

        // A bind posted without recording the window's new key (bindPosted) names a stale key next time.
        p = Pair.connected();
        try (Exposed e = new Exposed(p, EXPOSED)) {
            p.client.sends[0].wrId(1).next(null).sendFlags(SendFlags.SIGNALED)
                    .bindMemoryWindow(e.mw, e.mw.nextRkey(), e.mr, e.mr.address(), 4096, Access.REMOTE_READ);
            assertEquals(0, p.client.qp.postSend(p.client.sends[0]));
            p.fabric.deliverAll();
            assertEquals(WcStatus.SUCCESS, only(p.client.poll()).status());
            p.client.sends[1].wrId(2).next(null).sgList(null, 0).opcode(WrOpcode.LOCAL_INV)
                    .sendFlags(SendFlags.SIGNALED).invalidateRkey(e.mw.nextRkey());
            assertEquals(0, p.client.qp.postSend(p.client.sends[1]));
            p.fabric.deliverAll();
            assertEquals(WcStatus.SUCCESS, only(p.client.poll()).status());
            assertEquals(0, e.bind(p, 3));   // names the window by its allocation key: the device holds another
            assertEquals(WcStatus.MW_BIND_ERR, p.client.poll().getFirst().status());
        }
        p.close();

        // A range beyond the region.
        p = Pair.connected();
        try (Exposed e = new Exposed(p, EXPOSED)) {
            assertEquals(0, e.mw.bind(p.client.qp, p.client.sends[0], 1, SendFlags.SIGNALED, e.mr,
                    e.mr.address() + 8192, 16384, Access.REMOTE_READ));
            p.fabric.deliverAll();
            assertEquals(WcStatus.MW_BIND_ERR, p.client.poll().getFirst().status());
        }
        p.close();
    }

    @Test
    void postingABindWithScatterGatherEntriesOrWithoutARegionIsRefused() {
        Pair p = Pair.connected();
        try (Exposed e = new Exposed(p, EXPOSED)) {
            p.client.sends[0].wrId(1).next(null).sendFlags(0)
                    .bindMemoryWindow(e.mw, e.mw.nextRkey(), e.mr, e.mr.address(), 4096, Access.REMOTE_READ)
                    .sgList(p.client.sge[0], 1);
            assertEquals(dev.nvmf.verbs.Errno.EINVAL, p.client.qp.postSend(p.client.sends[0]));
            p.client.sends[0].bindMemoryWindow(e.mw.handle(), e.mw.nextRkey(), 0, e.mr.address(), 4096, Access.REMOTE_READ);
            assertEquals(dev.nvmf.verbs.Errno.EINVAL, p.client.qp.postSend(p.client.sends[0]));
            assertEquals(QpState.RTS, p.client.qp.state());
        }
        p.close();
    }

    @Test
    void aRegionUnderABoundWindowCannotBeDeregisteredUntilTheWindowIsGone() {
        Pair p = Pair.connected();
        Arena a = Arena.ofConfined();
        MemorySegment m = a.allocate(8192, 4096);
        MemoryRegion mr = p.client.pd.register(m, EXPOSED);
        MemoryWindow mw = p.client.pd.allocateMemoryWindow();
        assertEquals(1, p.fabric.resources().mws());
        assertEquals(0, mw.bind(p.client.qp, p.client.sends[0], 1, SendFlags.SIGNALED, mr, mr.address(), 8192,
                Access.REMOTE_READ));
        p.fabric.deliverAll();
        assertEquals(WcStatus.SUCCESS, only(p.client.poll()).status());
        VerbsException ex = assertThrows(VerbsException.class, mr::close);
        assertEquals(dev.nvmf.verbs.Errno.EINVAL, ex.errno());
        assertThrows(VerbsException.class, () -> p.client.pd.close(), "the PD still has the window and region");
        mw.close();
        mr.close();
        assertEquals(0, p.fabric.resources().mws());
        a.close();
        p.close();
        assertTrue(p.fabric.resources().nothingLeaked(), p.fabric.resources().toString());
    }
}
