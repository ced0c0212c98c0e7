package dev.nvmf.target.core;

import dev.nvmf.target.core.subsystem.AnaPortStates;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.nvme.AnaState;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Asymmetric Namespace Access, bytes in and bytes out (NVMe Base 2.0, 8.1 and 5.16.1.13; kernel admin-cmd.c and
 * core.c as the reference): the Identify fields, the ANA log page at its exact offsets (with RGO, windows and the
 * change count), the ANA statuses an I/O command gets for each state on its port, and the ANA change notice with
 * its AEC bit and its mask. Offsets are written as the specification's byte numbers, not through the layout
 * constants, so that a wrong constant fails here.
 */
class AnaTest extends CoreFixture {
    /** What the Linux host reads: header + 128 group descriptors + MNAN (1024) NSIDs (host multipath.c). */
    static final int LINUX_ANA_LOG_BYTES = 16 + 128 * 32 + 1024 * 4;
    static final int ANA_CHANGE_NOTICE = 0x000C0302; // notice (2), ANA change (03h), log page 0Ch

    private CapsuleHost h;
    private CapsuleHost.Queue io;

    @BeforeEach
    void connect() {
        h = host(HOST1).connectAndEnable(SUBNQN);
        io = h.connectIo(1, 32);
    }

    private MemorySegment identify(CapsuleHost host, int cns, int nsid) {
        Completion c = host.admin.submit(Cmd.identify(cns, nsid));
        assertEquals(0, c.status(), c::toString);
        return c.dataSegment();
    }

    private MemorySegment anaLog(CapsuleHost host, int lsp, boolean rae) {
        Completion c = host.admin.submit(Cmd.getLogPageLsp(0x0C, lsp, 0xFFFF_FFFF, LINUX_ANA_LOG_BYTES, rae));
        assertEquals(0, c.status(), c::toString);
        assertEquals(LINUX_ANA_LOG_BYTES, c.data().length);
        return c.dataSegment();
    }

    /** A second port (id 2) exposing the subsystem, and a host connected through it. */
    private CapsuleHost secondPath() {
        target.addPort(Port.rdma(2, 1, "192.168.10.2", "4420"));
        target.exposeSubsystem(2, SUBNQN);
        CapsuleHost other = host(HOST2);
        other.portId = 2;
        return other.connectAndEnable(SUBNQN);
    }

    private void enableAnaNotices(CapsuleHost host) {
        assertEquals(0, host.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                AsyncEvents.CONFIG_ANA_CHANGE)).status());
    }

    @Test
    void identifyControllerReportsAnaAsTheKernelTargetDoes() {
        MemorySegment id = identify(h, 1, 0);
        assertEquals(0b1011, Le.u8(id, 76), "CMIC: multiple ports, multiple controllers, ANA reporting (bit 3)");
        assertEquals(10, Le.u8(id, 342), "ANATT 10 s");
        assertEquals(0x1F, Le.u8(id, 343), "ANACAP: optimized, non-optimized, inaccessible, persistent loss, change");
        assertEquals(128, Le.u32(id, 344), "ANAGRPMAX");
        assertEquals(128, Le.u32(id, 348), "NANAGRPID");
        assertEquals(1 << 11, Le.u32(id, 92) & (1 << 11), "OAES bit 11: ANA change notices");
        assertEquals(1024, Le.u32(id, 540), "MNAN, which the Linux host sizes its ANA log buffer with");
        assertEquals(0, Le.u32(id, 352), "nothing after NANAGRPID");
    }

    @Test
    void identifyNamespaceReportsItsGroupAndNoUseWhereTheGroupIsUnreachable() {
        MemorySegment ns1 = identify(h, 0, 1);
        assertEquals(1, Le.u32(ns1, 92), "ANAGRPID: the default group");
        assertEquals(Le.u64(ns1, 0), Le.u64(ns1, 16), "NUSE = NSZE");
        assertTrue(target.moveNamespaceAnaGroup(SUBNQN, 2, 3));
        MemorySegment ns2 = identify(h, 0, 2);
        assertEquals(3, Le.u32(ns2, 92));
        assertEquals(1024, Le.u64(ns2, 0), "NSZE unchanged");
        assertEquals(0, Le.u64(ns2, 16), "NUSE 0: group 3 is inaccessible on this port (not configured)");
        assertEquals(3, Le.u32(identify(h, 8, 2), 4), "CNS 08h ANAGRPID at byte 4");
        for (AnaState s : List.of(AnaState.NON_OPTIMIZED, AnaState.CHANGE, AnaState.PERSISTENT_LOSS)) {
            target.setAnaState(1, 3, s);
            long nuse = Le.u64(identify(h, 0, 2), 16);
            assertEquals(s == AnaState.PERSISTENT_LOSS ? 0 : 1024, nuse, "NUSE in state " + s);
        }
    }

    @Test
    void anaLogPageHasEveryGroupInUseWithItsStateOnThisPortAndItsNamespaces() {
        assertEquals(AnaState.INACCESSIBLE, target.setAnaState(1, 2, AnaState.NON_OPTIMIZED));
        assertTrue(target.moveNamespaceAnaGroup(SUBNQN, 2, 2));
        MemorySegment p = anaLog(h, 0, false);
        assertEquals(2, Le.u64(p, 0), "CHGCNT: a state change and a move");
        assertEquals(2, Le.u16(p, 8), "NGRPS: groups 1 and 2");
        for (int i = 10; i < 16; i++) {
            assertEquals(0, Le.u8(p, i), "header byte " + i + " reserved");
        }
        // Group 1: optimized, NSID 1.
        assertEquals(1, Le.u32(p, 16), "ANAGRPID");
        assertEquals(1, Le.u32(p, 20), "NNSIDS");
        assertEquals(2, Le.u64(p, 24), "descriptor CHGCNT");
        assertEquals(0x01, Le.u8(p, 32), "ANA state optimized");
        for (int i = 33; i < 48; i++) {
            assertEquals(0, Le.u8(p, i), "descriptor byte " + (i - 16) + " reserved");
        }
        assertEquals(1, Le.u32(p, 48));
        // Group 2: non-optimized, NSID 2, right after group 1's NSID.
        assertEquals(2, Le.u32(p, 52));
        assertEquals(1, Le.u32(p, 56));
        assertEquals(2, Le.u64(p, 60));
        assertEquals(0x02, Le.u8(p, 68), "ANA state non-optimized");
        assertEquals(2, Le.u32(p, 84));
        for (int i = 88; i < LINUX_ANA_LOG_BYTES; i++) {
            assertEquals(0, Le.u8(p, i), "nothing after the last descriptor: byte " + i);
        }
        // RGO (LSP bit 0): the same descriptors without their NSIDs.
        MemorySegment g = anaLog(h, 1, false);
        assertEquals(2, Le.u16(g, 8));
        assertEquals(1, Le.u32(g, 16));
        assertEquals(0, Le.u32(g, 20), "no NSIDs with RGO");
        assertEquals(2, Le.u32(g, 48), "group 2 follows at once");
        assertEquals(0, Le.u32(g, 52));
        assertEquals(0x02, Le.u8(g, 64));
        assertEquals(0, Le.u32(g, 80));
        // A window (LPO 16, 32 bytes) is group 1's descriptor.
        Completion w = h.admin.submit(Cmd.getLogPage(0x0C, 0xFFFF_FFFF, 32, 16, true));
        assertEquals(0, w.status(), w::toString);
        assertEquals(1, Le.u32(w.dataSegment(), 0));
        assertEquals(0x01, Le.u8(w.dataSegment(), 16));
    }

    @Test
    void eachPortReportsItsOwnStatesAndEveryStateHasItsCode() {
        CapsuleHost other = secondPath();
        target.setAnaState(2, 1, AnaState.INACCESSIBLE);
        assertEquals(0x01, Le.u8(anaLog(h, 0, true), 32), "port 1: optimized");
        assertEquals(0x03, Le.u8(anaLog(other, 0, true), 32), "port 2: inaccessible");
        int[][] codes = {{0x01}, {0x02}, {0x03}, {0x04}, {0x0F}};
        AnaState[] states = {AnaState.OPTIMIZED, AnaState.NON_OPTIMIZED, AnaState.INACCESSIBLE,
                AnaState.PERSISTENT_LOSS, AnaState.CHANGE};
        for (int i = 0; i < states.length; i++) {
            target.setAnaState(2, 1, states[i]);
            assertEquals(codes[i][0], Le.u8(anaLog(other, 0, true), 32), states[i].configName());
            assertEquals(0x01, Le.u8(anaLog(h, 0, true), 32), "port 1 unchanged");
        }
        // A group only port 2 configures is listed to port 1's host too, in its default state there.
        target.setAnaState(2, 5, AnaState.OPTIMIZED);
        MemorySegment p = anaLog(h, 0, true);
        assertEquals(2, Le.u16(p, 8));
        assertEquals(5, Le.u32(p, 56), "group 5 after group 1 (NSIDs 1 and 2)");
        assertEquals(0, Le.u32(p, 60), "no namespace in it");
        assertEquals(0x03, Le.u8(p, 72), "inaccessible on port 1");
    }

    @Test
    void ioToAGroupThatIsNotAccessibleOnThisPortGetsThePathStatusWithoutDnr() {
        CapsuleHost other = secondPath();
        CapsuleHost.Queue otherIo = other.connectIo(1, 32);
        byte[] block = new byte[512];
        int[] expected = {0, 0, 0x302, 0x301, 0x303};
        AnaState[] states = {AnaState.OPTIMIZED, AnaState.NON_OPTIMIZED, AnaState.INACCESSIBLE,
                AnaState.PERSISTENT_LOSS, AnaState.CHANGE};
        for (int i = 0; i < states.length; i++) {
            target.setAnaState(1, 1, states[i]);
            String what = "in state " + states[i];
            Completion r = io.submit(Cmd.read(1, 0, 1, 512));
            assertEquals(Status.describe(io.logged(expected[i])), Status.describe(r.status()), "read " + what);
            assertEquals(expected[i] == 0 ? 0 : 3, r.sct(), "SCT 3 (path related) " + what);
            assertFalse(Status.dnr(r.status()), "no DNR: the host fails over " + what);
            assertEquals(Status.describe(io.logged(expected[i])),
                    Status.describe(io.submit(Cmd.write(1, 0, 1, block)).status()), "write " + what);
            assertEquals(Status.describe(io.logged(expected[i])),
                    Status.describe(io.submit(Cmd.admin(Opcodes.IO_FLUSH).nsid(1)).status()), "flush " + what);
            // The same group through port 2 (optimized there) and another group on port 1 keep working.
            assertEquals(0, otherIo.submit(Cmd.read(1, 0, 1, 512)).status(), "port 2 " + what);
        }
        assertEquals(Status.ANA_INACCESSIBLE, Status.sct(3, 2));
        assertEquals(Status.ANA_PERSISTENT_LOSS, Status.sct(3, 1));
        assertEquals(Status.ANA_TRANSITION, Status.sct(3, 3));
        // The refusal is in the error log, pointing at the NSID (SQE byte 4), as the kernel target records it.
        target.setAnaState(1, 1, AnaState.INACCESSIBLE);
        io.submit(Cmd.read(1, 0, 1, 512));
        MemorySegment log = h.admin.submit(Cmd.getLogPage(LogPages.LID_ERROR_INFORMATION, 0, 64, 0, false))
                .dataSegment();
        assertEquals(0x302 << 1, Le.u16(log, 12), "logged status");
        assertEquals(4, Le.u16(log, 14), "parameter error location: the NSID");
        assertEquals(1, Le.u32(log, 24), "NSID");
        // Namespace 2, moved to group 2 made optimized on port 1, is served meanwhile.
        target.setAnaState(1, 2, AnaState.OPTIMIZED);
        target.moveNamespaceAnaGroup(SUBNQN, 2, 2);
        assertEquals(0, io.submit(Cmd.read(2, 0, 1, 4096)).status());
    }

    @Test
    void aStateChangeSendsTheAnaNoticeOnceUntilTheLogIsReadWithoutRae() {
        CapsuleHost other = secondPath();
        enableAnaNotices(h);
        enableAnaNotices(other);
        assertEquals(AsyncEvents.CONFIG_ANA_CHANGE,
                h.admin.submit(Cmd.getFeature(Features.FID_ASYNC_EVENT_CONFIGURATION)).dw0(), "AEC bit 11 kept");
        NvmeRequest aer = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        NvmeRequest otherAer = other.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        long count = target.anaChangeCount();

        target.setAnaState(1, 1, AnaState.NON_OPTIMIZED);
        Completion ev = h.admin.completionOf(aer);
        assertEquals(0, ev.status());
        assertEquals(ANA_CHANGE_NOTICE, ev.dw0());
        assertEquals(count + 1, target.anaChangeCount());
        assertFalse(other.admin.isCompleted(otherAer), "a host on another port is not told of port 1's change");

        // Masked until the log is read without RAE.
        NvmeRequest aer2 = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        target.setAnaState(1, 1, AnaState.OPTIMIZED);
        assertFalse(h.admin.isCompleted(aer2));
        anaLog(h, 0, true);
        target.setAnaState(1, 1, AnaState.NON_OPTIMIZED);
        assertFalse(h.admin.isCompleted(aer2), "RAE keeps the notice masked");
        assertEquals(0x02, Le.u8(anaLog(h, 0, false), 32), "the log has the state as it is now");
        assertEquals(count + 3, Le.u64(anaLog(h, 0, true), 0));
        target.setAnaState(1, 1, AnaState.NON_OPTIMIZED);
        assertFalse(h.admin.isCompleted(aer2), "the same state again is no change");
        assertEquals(count + 3, target.anaChangeCount());
        target.setAnaState(1, 1, AnaState.CHANGE);
        assertEquals(ANA_CHANGE_NOTICE, h.admin.completionOf(aer2).dw0(), "unmasked by the read without RAE");

        // Moving a namespace to another group concerns every controller of the subsystem, on every port.
        target.moveNamespaceAnaGroup(SUBNQN, 2, 4);
        assertEquals(ANA_CHANGE_NOTICE, other.admin.completionOf(otherAer).dw0());
    }

    @Test
    void noAnaNoticeWithoutAecBit11() {
        NvmeRequest aer = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        target.setAnaState(1, 1, AnaState.INACCESSIBLE);
        assertFalse(h.admin.isCompleted(aer));
        assertEquals(0x03, Le.u8(anaLog(h, 0, false), 32), "the log still tells");
    }

    @Test
    void resetDefaultsAndWhatTheModelRefuses() {
        AnaPortStates states = target.anaStates(1);
        assertEquals(AnaState.OPTIMIZED, states.state(1), "default group 1");
        assertEquals(AnaState.INACCESSIBLE, states.state(2), "every other group");
        assertEquals(List.of(), states.configuredGroups());
        target.setAnaState(1, 1, AnaState.NON_OPTIMIZED);
        target.setAnaState(1, 7, AnaState.OPTIMIZED);
        assertEquals(List.of(1, 7), states.configuredGroups());
        assertArrayEquals(new int[] {1, 7}, target.anaGroupIds());
        assertEquals(AnaState.NON_OPTIMIZED, target.resetAnaState(1, 1));
        assertEquals(AnaState.OPTIMIZED, states.state(1));
        assertEquals(AnaState.OPTIMIZED, target.resetAnaState(1, 7));
        assertEquals(AnaState.INACCESSIBLE, states.state(7));
        assertArrayEquals(new int[] {1}, target.anaGroupIds());
        assertThrows(IllegalArgumentException.class, () -> target.setAnaState(9, 1, AnaState.OPTIMIZED));
        assertThrows(IllegalArgumentException.class, () -> target.setAnaState(1, 0, AnaState.OPTIMIZED));
        assertThrows(IllegalArgumentException.class, () -> target.setAnaState(1, 129, AnaState.OPTIMIZED));
        assertFalse(target.moveNamespaceAnaGroup(SUBNQN, 99, 2), "no such namespace");
        assertFalse(target.moveNamespaceAnaGroup(SUBNQN, 1, 1), "already there");
        // A port's record replaced (its referrals changed) keeps its states; a port removed and added has defaults.
        target.setAnaState(1, 1, AnaState.INACCESSIBLE);
        target.addPort(new Port(1, 1, 1, "192.168.10.1", "4420", 8192, 1024));
        assertEquals(AnaState.INACCESSIBLE, target.anaStates(1).state(1));
        target.removePort(1);
        target.addPort(new Port(1, 1, 1, "192.168.10.1", "4420", 8192, 1024));
        assertEquals(AnaState.OPTIMIZED, target.anaStates(1).state(1));
    }

    @Test
    void stateNamesAreTheKernelTargetsConfigfsNames() {
        assertEquals("optimized, non-optimized, inaccessible, persistent-loss, change", AnaState.names());
        assertEquals(AnaState.PERSISTENT_LOSS, AnaState.ofName("Persistent-Loss"));
        assertEquals(null, AnaState.ofName("standby"));
        assertEquals(AnaState.CHANGE, AnaState.ofCode(0x0F));
        assertEquals(null, AnaState.ofCode(0x05));
    }
}
