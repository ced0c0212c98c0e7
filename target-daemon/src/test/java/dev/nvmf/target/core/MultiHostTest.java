package dev.nvmf.target.core;

import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Referral;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.IdentifyController;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.Status;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Several hosts at once: a shared namespace, the allow list, keep-alive expiry, discovery filtering. */
class MultiHostTest extends CoreFixture {

    @Test
    void twoHostsShareOneNamespace() {
        CapsuleHost a = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost b = host(HOST2).connectAndEnable(SUBNQN);
        assertNotEquals(a.cntlid, b.cntlid, "one controller each");
        assertEquals(2, subsystem.controllers().size());
        CapsuleHost.Queue qa = a.connectIo(1, 128);
        CapsuleHost.Queue qb = b.connectIo(1, 128); // the same qid on another controller is fine
        byte[] fromA = new byte[4096];
        new Random(7).nextBytes(fromA);
        assertEquals(0, qa.submit(Cmd.write(1, 64, 8, fromA)).status());
        assertArrayEquals(fromA, qb.submit(Cmd.read(1, 64, 8, 4096)).data(), "B reads what A wrote");
        // B's controller cannot be joined by A.
        a.open(2, 128).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(2, 127, 0, a.hostId, b.cntlid, SUBNQN, HOST1));
        // A goes away; B keeps working.
        qa.queue.close();
        a.admin.queue.close();
        assertEquals(1, subsystem.controllers().size());
        assertEquals(0, qb.submit(Cmd.read(1, 64, 8, 4096)).status());
    }

    @Test
    void allowListAdmitsOnlyListedHostsAndChangesAtRuntime() {
        subsystem.allowAnyHost(false);
        subsystem.allowHost(HOST1);
        assertEquals(0, host(HOST1).connectAdmin(SUBNQN, 0).status());
        assertEquals(Status.CONNECT_INVALID_HOST, host(HOST2).connectAdmin(SUBNQN, 0).status());
        subsystem.allowHost(HOST2);
        assertEquals(0, host(HOST2).connectAdmin(SUBNQN, 0).status());
        subsystem.disallowHost(HOST1);
        assertEquals(Status.CONNECT_INVALID_HOST, host(HOST1).connectAdmin(SUBNQN, 0).status());
    }

    @Test
    void keepAliveExpiryIsTrafficBasedAndTearsTheControllerDown() {
        CapsuleHost a = host(HOST1);
        assertEquals(0, a.connectAdmin(SUBNQN, 2000).status());
        a.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE));
        CapsuleHost.Queue io = a.connectIo(1, 128);
        CapsuleHost b = host(HOST2).connectAndEnable(SUBNQN); // KATO 5000

        // I/O traffic alone keeps A alive (TBKAS), for much longer than KATO.
        for (int i = 0; i < 5; i++) {
            advanceMillis(1500);
            io.submit(Cmd.read(1, 0, 1, 512));
            b.admin.submit(Cmd.admin(Opcodes.ADMIN_KEEP_ALIVE));
            assertEquals(0, target.checkTimers(now[0]));
        }
        // Silence: A expires after between KATO and 2 x KATO (windows, as the kernel target), never before KATO;
        // B, which keeps sending Keep Alive, does not. The timer is checked every 100 ms, as the daemon does.
        long silenceMillis = 0;
        int expiredNow = 0;
        while (expiredNow == 0 && silenceMillis <= 4200) {
            advanceMillis(100);
            silenceMillis += 100;
            if (silenceMillis % 1000 == 0) b.admin.submit(Cmd.admin(Opcodes.ADMIN_KEEP_ALIVE));
            expiredNow = target.checkTimers(now[0]);
        }
        assertEquals(1, expiredNow, "A expired");
        assertTrue(silenceMillis >= 2000 && silenceMillis <= 4100, "expired after " + silenceMillis + " ms of silence");
        assertEquals(Properties.CSTS_CFS, a.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0()
                & Properties.CSTS_CFS);
        assertEquals(1, a.admin.transport.disconnectCount(), "admin queue torn down");
        assertEquals(1, io.transport.disconnectCount(), "I/O queue torn down");
        assertEquals(0, b.admin.transport.disconnectCount());
        assertEquals(0, target.checkTimers(now[0]), "expires once");
        // The transport drains and closes: the controller is gone.
        io.queue.close();
        a.admin.queue.close();
        assertEquals(1, subsystem.controllers().size());
    }

    /**
     * A host's reset or disconnect tears its I/O queues down first and the admin queue last, sending no Keep Alive
     * meanwhile (with TBKAS its I/O was its keep-alive), and each queue's drain takes time (seconds under load: the
     * soak of 2026-12-01 logged a "keep-alive timeout" for the controller of every such teardown that took longer).
     * The traffic of a closed queue still counts, and its close counts as traffic, as the kernel target's
     * nvmet_sq_destroy re-arms the traffic-based timer ("nvmet: fix false keep-alive timeout when a controller is
     * torn down", linux-nvme, June 2021).
     */
    @Test
    void queuesClosingDuringATeardownKeepTheControllerFromAFalseKeepAliveTimeout() {
        CapsuleHost a = host(HOST1);
        assertEquals(0, a.connectAdmin(SUBNQN, 2000).status());
        a.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE));
        CapsuleHost.Queue io1 = a.connectIo(1, 128);
        CapsuleHost.Queue io2 = a.connectIo(2, 128);
        for (int i = 0; i < 3; i++) { // I/O only: the admin queue is silent from here on
            advanceMillis(1500);
            io1.submit(Cmd.read(1, 0, 1, 512));
            assertEquals(0, target.checkTimers(now[0]));
        }
        // The host resets: the first I/O queue closes right after its last command, the second 1.9 s later.
        advanceMillis(100);
        io1.queue.close();
        for (int t = 0; t < 19; t++) {
            advanceMillis(100);
            assertEquals(0, target.checkTimers(now[0]), "no expiry while the queues are torn down, "
                    + (t + 1) * 100 + " ms after the first closed");
        }
        io2.queue.close();
        for (int t = 0; t < 19; t++) {
            advanceMillis(100);
            assertEquals(0, target.checkTimers(now[0]), (t + 1) * 100 + " ms after the second closed");
        }
        assertEquals(0, a.admin.transport.disconnectCount(), "the controller was not torn down by its timer");
        // Silence after the teardown still expires the controller (the admin queue never closed here).
        int expired = 0;
        for (int t = 0; t < 50 && expired == 0; t++) {
            advanceMillis(100);
            expired = target.checkTimers(now[0]);
        }
        assertEquals(1, expired, "a controller left silent still expires");
    }

    @Test
    void aTransportFailureOnOneQueueIsFatalForItsControllerOnly() {
        CapsuleHost a = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io1 = a.connectIo(1, 128);
        CapsuleHost.Queue io2 = a.connectIo(2, 128);
        CapsuleHost b = host(HOST2).connectAndEnable(SUBNQN);
        CapsuleHost.Queue bio = b.connectIo(1, 128);

        io1.queue.transportFailed("RDMA_WRITE completion REM_ACCESS_ERR");

        assertEquals(Properties.CSTS_CFS, a.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0()
                & Properties.CSTS_CFS, "controller fatal status");
        assertEquals(1, a.admin.transport.disconnectCount(), "admin queue torn down");
        assertEquals(1, io2.transport.disconnectCount(), "sibling I/O queue torn down");
        assertEquals(0, b.admin.transport.disconnectCount(), "another host's controller is untouched");
        assertEquals(0, bio.transport.disconnectCount());
        assertEquals(0, b.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0() & Properties.CSTS_CFS);
        assertEquals(0, bio.submit(Cmd.read(1, 0, 1, 512)).status(), "B's I/O still works");
    }

    @Test
    void keepAliveTimeoutZeroDisablesItForIoControllersButDiscoveryDefaultsTo120s() {
        CapsuleHost a = host(HOST1);
        a.connectAdmin(SUBNQN, 0);
        CapsuleHost d = host(HOST2);
        d.connectAdmin(DiscoveryLog.DISCOVERY_NQN, 0);
        d.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE));
        assertEquals(120_000, d.admin.submit(Cmd.getFeature(Features.FID_KEEP_ALIVE_TIMER)).dw0());
        advanceMillis(119_999);
        assertEquals(0, target.checkTimers(now[0]));
        advanceMillis(1);
        assertEquals(1, target.checkTimers(now[0]), "only the discovery controller");
        assertEquals(1, d.admin.transport.disconnectCount());
        assertEquals(0, a.admin.transport.disconnectCount());
    }

    // ------------------------------------------------------------------------------------------- discovery

    private static final String SUB_A = "nqn.2024-01.dev.nvmf:only-a";

    static MemorySegment discoveryLog(CapsuleHost d) {
        // The Linux host reads the header, then the whole page, then the header again.
        Completion hdr = d.admin.submit(Cmd.getLogPage(0x70, 0, 1024, 0, true));
        long numrec = Le.u64(hdr.dataSegment(), DiscoveryLog.NUMREC);
        int size = (int) (1024 + numrec * 1024);
        Completion all = d.admin.submit(Cmd.getLogPage(0x70, 0, size, 0, false));
        assertEquals(0, all.status());
        assertEquals(Le.u64(hdr.dataSegment(), 0), Le.u64(all.dataSegment(), 0), "GENCTR stable across reads");
        return all.dataSegment();
    }

    static List<String> entries(MemorySegment log) {
        List<String> list = new ArrayList<>();
        long n = Le.u64(log, DiscoveryLog.NUMREC);
        for (int i = 0; i < n; i++) {
            MemorySegment e = log.asSlice(1024 + i * 1024L, 1024);
            list.add(Le.u8(e, DiscoveryLog.SUBTYPE) + " " + Le.u16(e, DiscoveryLog.PORTID) + " "
                    + Le.utf8NulTerminated(e, DiscoveryLog.SUBNQN, 256) + " "
                    + Le.asciiTrimmed(e, DiscoveryLog.TRADDR, 256) + ":" + Le.asciiTrimmed(e, DiscoveryLog.TRSVCID, 32));
        }
        return list;
    }

    private CapsuleHost discoveryHost(String nqn) {
        CapsuleHost d = host(nqn);
        assertEquals(0, d.connectAdmin(DiscoveryLog.DISCOVERY_NQN, 0).status());
        d.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE));
        return d;
    }

    @Test
    void discoveryLogIsFilteredPerHostAndPortLocal() {
        target.addPort(Port.rdma(2, DiscoveryLog.ADRFAM_IPV4, "10.0.0.2", "4421"));
        target.exposeSubsystem(2, SUBNQN);
        Subsystem onlyA = target.addSubsystem(SubsystemConfig.of(SUB_A, "SNA"));
        onlyA.allowHost(HOST1);
        target.exposeSubsystem(1, SUB_A);
        // Port 1 again (same id: replaced), now with a referral of its own.
        target.addPort(new Port(1, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, "192.168.10.1", "4420", 8192,
                1024, List.of(new Referral(9, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, "10.9.9.9", "4420")),
                false));

        // Port 1's entries only (the kernel target's discovery.c lists req->port's): port 2's are not there.
        List<String> forA = entries(discoveryLog(discoveryHost(HOST1)));
        assertEquals(List.of(
                "3 1 " + DiscoveryLog.DISCOVERY_NQN + " 192.168.10.1:4420",
                "2 1 " + SUBNQN + " 192.168.10.1:4420",
                "2 1 " + SUB_A + " 192.168.10.1:4420",
                "1 9 " + DiscoveryLog.DISCOVERY_NQN + " 10.9.9.9:4420"), forA);
        List<String> forB = entries(discoveryLog(discoveryHost(HOST2)));
        assertEquals(List.of(
                "3 1 " + DiscoveryLog.DISCOVERY_NQN + " 192.168.10.1:4420",
                "2 1 " + SUBNQN + " 192.168.10.1:4420",
                "1 9 " + DiscoveryLog.DISCOVERY_NQN + " 10.9.9.9:4420"), forB);
        // Through port 2: its own entries, and no referral (port 1's).
        CapsuleHost viaPort2 = host(HOST2);
        viaPort2.portId = 2;
        assertEquals(0, viaPort2.connectAdmin(DiscoveryLog.DISCOVERY_NQN, 0).status());
        viaPort2.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE));
        assertEquals(List.of(
                "3 2 " + DiscoveryLog.DISCOVERY_NQN + " 10.0.0.2:4421",
                "2 2 " + SUBNQN + " 10.0.0.2:4421"), entries(discoveryLog(viaPort2)));
    }

    @Test
    void discoveryEntryBytes() {
        CapsuleHost d = discoveryHost(HOST1);
        MemorySegment log = discoveryLog(d);
        assertEquals(0, Le.u16(log, DiscoveryLog.RECFMT));
        MemorySegment e = log.asSlice(2048, 1024);
        assertEquals(DiscoveryLog.TRTYPE_RDMA, Le.u8(e, DiscoveryLog.TRTYPE));
        assertEquals(DiscoveryLog.ADRFAM_IPV4, Le.u8(e, DiscoveryLog.ADRFAM));
        assertEquals(DiscoveryLog.SUBTYPE_NVM, Le.u8(e, DiscoveryLog.SUBTYPE));
        assertEquals(0xFFFF, Le.u16(e, DiscoveryLog.CNTLID));
        assertEquals(32, Le.u16(e, DiscoveryLog.ASQSZ), "the admin queue depth");
        assertEquals('4', (char) Le.u8(e, DiscoveryLog.TRSVCID));
        assertEquals(' ', (char) Le.u8(e, DiscoveryLog.TRSVCID + 4), "space padded");
        assertEquals(1, Le.u8(e, DiscoveryLog.TSAS_RDMA_QPTYPE));
        assertEquals(1, Le.u8(e, DiscoveryLog.TSAS_RDMA_PRTYPE));
        assertEquals(1, Le.u8(e, DiscoveryLog.TSAS_RDMA_CMS));
        // Reading at an offset gives the same bytes as the whole page.
        Completion part = d.admin.submit(Cmd.getLogPage(0x70, 0, 1024, 2048, false));
        assertArrayEquals(e.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE), part.data());
        // The discovery controller's Identify and what it refuses
        MemorySegment id = d.admin.submit(Cmd.identify(1, 0)).dataSegment();
        assertEquals(IdentifyController.CNTRLTYPE_DISCOVERY, Le.u8(id, IdentifyController.CNTRLTYPE));
        assertEquals(DiscoveryLog.DISCOVERY_NQN, Le.utf8NulTerminated(id, IdentifyController.SUBNQN, 256));
        assertEquals(1 << 31, Le.u32(id, IdentifyController.OAES));
        d.admin.expect(Status.INVALID_FIELD, Cmd.identify(0, 1));
        d.admin.expect(Status.INVALID_LOG_PAGE, Cmd.getLogPage(0x02, 0, 512, 0, false));
        d.admin.expect(Status.INVALID_OPCODE, Cmd.admin(Opcodes.ADMIN_ABORT));
        d.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(Features.FID_NUMBER_OF_QUEUES, 0));
        // A discovery controller has no I/O queues.
        d.open(1, 32).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(1, 31, 0, d.hostId, d.cntlid, DiscoveryLog.DISCOVERY_NQN, HOST1));
    }

    @Test
    void generationCounterChangesOnEveryChangeAndNotifiesDiscoveryControllers() {
        CapsuleHost d = discoveryHost(HOST1);
        assertEquals(0, d.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                AsyncEvents.CONFIG_DISCOVERY_LOG_CHANGE)).status());
        long g0 = Le.u64(discoveryLog(d), 0);
        NvmeRequest aer = d.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        assertFalse(d.admin.isCompleted(aer));
        Subsystem s = target.addSubsystem(SubsystemConfig.of(SUB_A, "SNA").withAllowAnyHost(true));
        Completion ev = d.admin.completionOf(aer);
        assertEquals(0x0070F002, ev.dw0(), "notice, discovery log change, log page 70h");
        long g1 = Le.u64(discoveryLog(d), 0); // read without RAE: re-arms the notice
        assertTrue(g1 > g0);
        target.exposeSubsystem(1, SUB_A);
        long g2 = Le.u64(discoveryLog(d), 0);
        assertTrue(g2 > g1);
        assertTrue(entries(discoveryLog(d)).contains("2 1 " + SUB_A + " 192.168.10.1:4420"));
        s.allowAnyHost(false);
        MemorySegment log = discoveryLog(d);
        assertTrue(Le.u64(log, 0) > g2);
        assertFalse(entries(log).contains("2 1 " + SUB_A + " 192.168.10.1:4420"), "no longer allowed");
        target.removeSubsystem(SUB_A);
        target.removePort(1);
        assertEquals(1, d.admin.transport.disconnectCount(), "controllers on a removed port are torn down");
    }

    @Test
    void removedSubsystemDisconnectsItsControllersAndRefusesConnects() {
        CapsuleHost a = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io = a.connectIo(1, 128);
        target.removeSubsystem(SUBNQN);
        assertEquals(1, io.transport.disconnectCount());
        assertEquals(1, a.admin.transport.disconnectCount());
        assertEquals(Status.CONNECT_INVALID_PARAMETERS, host(HOST2).connectAdmin(SUBNQN, 0).status());
    }
}
