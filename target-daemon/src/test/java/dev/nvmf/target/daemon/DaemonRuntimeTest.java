package dev.nvmf.target.daemon;

import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The daemon runtime started from a YAML file on an automatic soft fabric, with its own threads (CM, pollers,
 * timers), driven by NVMe-level hosts: Connect, I/O, live reloads (namespace added with the AEN, a reload that
 * cannot be applied is refused whole), and a stop that drains every queue and returns every verbs resource.
 */
class DaemonRuntimeTest {
    static final String TARGET_IP = "10.0.0.1";
    static final String HOST_IP = "10.0.0.2";
    static final String SUB = "nqn.2024-01.dev.nvmf:daemon-test";
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

    @TempDir
    Path dir;

    SoftFabric fabric;
    TargetMetrics metrics;
    DaemonRuntime runtime;
    final List<NvmeHost> hosts = new ArrayList<>();

    @BeforeEach
    void fabric() {
        fabric = SoftFabric.automatic();
        fabric.addDevice("t0", TARGET_IP);
        fabric.addDevice("h0", HOST_IP);
        metrics = new TargetMetrics();
        runtime = new DaemonRuntime(DaemonRuntime.Options.of(fabric), metrics);
    }

    @AfterEach
    void cleanUp() {
        runtime.stop(Duration.ofSeconds(5));
        hosts.forEach(NvmeHost::close);
    }

    static String yaml(String namespaces, String extraPorts) {
        return """
                hosts:
                  - nqn: %s
                subsystems:
                  - nqn: %s
                    allowed_hosts: [%s]
                    namespaces:
                %s
                ports:
                  - id: 1
                    traddr: %s
                    trsvcid: 4420
                    subsystems: [%s]
                %s
                metrics:
                  enabled: false
                """.formatted(HOST, SUB, HOST, namespaces, TARGET_IP, SUB, extraPorts);
    }

    static final String NS1 = "      - nsid: 1\n        ram_size: 4MiB\n";
    static final String NS2 = "      - nsid: 2\n        ram_size: 2MiB\n";

    TargetConfig load(String text) throws Exception {
        Path f = dir.resolve("nvmf-target.yaml");
        Files.writeString(f, text);
        return ConfigLoader.load(f).config();
    }

    NvmeHost queue(int qid, int depth) {
        NvmeHost h = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0), new InetSocketAddress(TARGET_IP, 4420),
                HOST, qid, depth);
        hosts.add(h);
        return h;
    }

    int cntlidOf(String hostNqn) {
        return runtime.target().subsystem(SUB).controllers().stream().filter(c -> c.hostNqn().equals(hostNqn))
                .findFirst().orElseThrow().cntlid();
    }

    /** Admin queue connected and enabled, one I/O queue connected: what nvme connect does. */
    NvmeHost[] connectController(int katoMillis) {
        NvmeHost admin = queue(0, 32);
        admin.connectAdminAndEnable(SUB, katoMillis);
        NvmeHost io = queue(1, 16);
        assertEquals(0, io.connect(SUB, cntlidOf(HOST), 15, 0), "I/O queue Connect");
        return new NvmeHost[] {admin, io};
    }

    static byte[] pattern(int len, int seed) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    static void assertWriteRead(NvmeHost io, int nsid, long slba, int seed) {
        byte[] data = pattern(4096, seed);
        assertEquals(0, io.write(nsid, slba, data, 512), "write nsid " + nsid);
        Object[] r = io.read(nsid, slba, 4096, 512);
        assertEquals(0, (int) r[0], "read nsid " + nsid);
        assertArrayEquals(data, ((MemorySegment) r[1]).toArray(JAVA_BYTE), "data read back from nsid " + nsid);
    }

    @Test
    void startedFromYamlServesConnectAndIoAndStopReturnsEverything() throws Exception {
        runtime.start(load(yaml(NS1, "")));
        assertTrue(runtime.healthy());
        assertTrue(runtime.status().startsWith("1 subsystems, 1 namespaces, 1 ports, 0 controllers"),
                runtime.status());
        NvmeHost[] c = connectController(0);
        assertEquals("1 subsystems, 1 namespaces, 1 ports, 1 controllers, 2 queues", runtime.status());
        assertArrayEquals(new int[] {1}, c[0].activeNamespaces());
        assertWriteRead(c[1], 1, 8, 3);

        runtime.stop(Duration.ofSeconds(10));
        assertFalse(runtime.healthy());
        for (NvmeHost h : c) {
            NvmeHost.await(() -> h.rdma.sawEvent(CmEventType.DISCONNECTED), h.rdma, "host sees DISCONNECTED");
        }
        hosts.forEach(NvmeHost::close);
        hosts.clear();
        NvmeHost.await(() -> fabric.resources().nothingLeaked(), null, "every verbs object released: "
                + fabric.resources());
    }

    private static void assertFalse(boolean b) {
        org.junit.jupiter.api.Assertions.assertFalse(b);
    }

    @Test
    void hostNotAllowedIsRefusedAndCounted() throws Exception {
        runtime.start(load(yaml(NS1, "")));
        NvmeHost stranger = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0),
                new InetSocketAddress(TARGET_IP, 4420), "nqn.2014-08.org.nvmexpress:uuid:stranger", 0, 32);
        hosts.add(stranger);
        int status = stranger.connect(SUB, 0xFFFF, 31, 0);
        assertEquals(Status.describe(Status.CONNECT_INVALID_HOST), Status.describe(status));
        assertEquals(1.0, metrics.registry().get("nvmf.connect.failures").tag("reason", "host_not_allowed")
                .counter().count());
    }

    @Test
    void reloadAddingANamespaceRaisesTheAenAndKeepsTheQueueWorking() throws Exception {
        TargetConfig before = load(yaml(NS1, ""));
        runtime.start(before);
        NvmeHost[] c = connectController(0);
        NvmeHost admin = c[0];
        NvmeHost io = c[1];
        assertEquals(0, admin.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION, AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE));
        int aer = admin.sendAsyncEventRequest();
        assertWriteRead(io, 1, 0, 1);

        TargetConfig after = load(yaml(NS1 + NS2, ""));
        runtime.apply(ConfigDiff.between(before, after), after);

        Cqe event = admin.awaitResponse(aer);
        assertEquals(0, event.status(), "the AER completes with the namespace notice");
        MemorySegment changed = admin.logPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 4096);
        assertEquals(2, Le.u32(changed, 0), "changed namespace list names NSID 2");
        assertEquals(0, Le.u32(changed, 4));
        assertArrayEquals(new int[] {1, 2}, admin.activeNamespaces());
        // The I/O queue connected before the reload keeps working, on the old and the new namespace.
        assertWriteRead(io, 1, 16, 2);
        assertWriteRead(io, 2, 0, 7);
        assertEquals(1, runtime.target().subsystem(SUB).controllers().size(), "no controller was dropped");
    }

    @Test
    void reloadRemovingANamespaceFailsItsCommandsAndKeepsTheOthers() throws Exception {
        TargetConfig before = load(yaml(NS1 + NS2, ""));
        runtime.start(before);
        NvmeHost[] c = connectController(0);
        assertWriteRead(c[1], 2, 0, 5);
        TargetConfig after = load(yaml(NS1, ""));
        runtime.apply(ConfigDiff.between(before, after), after);
        assertArrayEquals(new int[] {1}, c[0].activeNamespaces());
        // With the More bit: the failure is in the controller's error log.
        assertEquals(Status.describe(Status.INVALID_NAMESPACE | Status.MORE),
                Status.describe(c[1].write(2, 0, pattern(512, 1), 512)));
        assertWriteRead(c[1], 1, 0, 6);
        assertTrue(metrics.scrape().contains("nsid=\"1\""));
        assertTrue(!metrics.scrape().contains("nsid=\"2\""), "series of the removed namespace are gone");
    }

    @Test
    void reloadThatCannotBeAppliedIsRefusedWholeAndTheOldConfigurationKeepsServing() throws Exception {
        TargetConfig before = load(yaml(NS1, ""));
        runtime.start(before);
        NvmeHost[] c = connectController(0);
        int listenersBefore = runtime.transport().cm().listeners().size();
        // A new namespace and a port on an address no device has: the listener cannot bind.
        TargetConfig bad = load(yaml(NS1 + NS2, """
                  - id: 2
                    traddr: 10.9.9.9
                    trsvcid: 4420
                    subsystems: [%s]
                """.formatted(SUB)));
        Exception e = assertThrows(Exception.class, () -> runtime.apply(ConfigDiff.between(before, bad), bad));
        assertNotNull(e.getMessage());
        assertArrayEquals(new int[] {1}, c[0].activeNamespaces(), "the new namespace is not there");
        assertNull(runtime.target().port(2));
        assertEquals(listenersBefore, runtime.transport().cm().listeners().size());
        assertWriteRead(c[1], 1, 0, 9);

        // The same change without the bad port applies.
        TargetConfig good = load(yaml(NS1 + NS2, ""));
        runtime.apply(ConfigDiff.between(before, good), good);
        assertArrayEquals(new int[] {1, 2}, c[0].activeNamespaces());
    }

    @Test
    void reloadFailingMidwayRollsBackToTheOldConfiguration() throws Exception {
        TargetConfig before = load(yaml(NS1, ""));
        runtime.start(before);
        NvmeHost[] c = connectController(0);
        assertWriteRead(c[1], 1, 0, 1);
        // Port 1 moves to an address no device has: its listener is re-created in the commit (after the old one is
        // closed), which fails after namespace 2 was already added. Everything must be undone.
        TargetConfig bad = load(yaml(NS1 + NS2, "").replace("traddr: " + TARGET_IP, "traddr: 10.9.9.9"));
        ConfigDiff diff = ConfigDiff.between(before, bad);
        assertTrue(diff.portsChanged().get(0).listenerChanged());
        assertThrows(Exception.class, () -> runtime.apply(diff, bad));

        assertNotNull(runtime.target().port(1), "port 1 is back in the core");
        assertEquals(1, runtime.transport().cm().listeners().size(), "its listener is back");
        assertEquals(TARGET_IP, runtime.transport().cm().listeners().get(0).localAddress().getAddress()
                .getHostAddress());
        assertNull(runtime.target().subsystem(SUB).namespace(2), "namespace 2 was taken back");
        assertTrue(runtime.target().subsystem(SUB).isExposedOn(1));
        // The port was re-created, so its old connections went; a host connects again and does I/O.
        for (NvmeHost h : c) {
            NvmeHost.await(() -> h.rdma.sawEvent(CmEventType.DISCONNECTED), h.rdma, "old connection closed");
        }
        NvmeHost.await(() -> runtime.target().subsystem(SUB).controllers().isEmpty(), null, "old controller ended");
        NvmeHost[] again = connectController(0);
        assertArrayEquals(new int[] {1}, again[0].activeNamespaces());
        assertWriteRead(again[1], 1, 0, 2);
        assertEquals("1 subsystems, 1 namespaces, 1 ports, 1 controllers, 2 queues", runtime.status());
    }

    @Test
    void reloadAddsAndRemovesAListenerWithoutTouchingOtherConnections() throws Exception {
        fabric.addDevice("t1", "10.0.1.1");
        TargetConfig before = load(yaml(NS1, ""));
        runtime.start(before);
        NvmeHost[] c = connectController(0);
        TargetConfig withPort2 = load(yaml(NS1, """
                  - id: 2
                    traddr: 10.0.1.1
                    trsvcid: 4421
                    subsystems: [%s]
                """.formatted(SUB)));
        runtime.apply(ConfigDiff.between(before, withPort2), withPort2);
        // A second path of the same host through the new port (multipath): a second controller.
        NvmeHost other = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0),
                new InetSocketAddress("10.0.1.1", 4421), HOST, 0, 32);
        hosts.add(other);
        other.connectAdminAndEnable(SUB, 0);
        assertEquals(2, runtime.target().subsystem(SUB).controllers().size());
        assertEquals(2, runtime.target().subsystem(SUB).controllers().stream().map(x -> x.port().id()).distinct()
                .count());

        runtime.apply(ConfigDiff.between(withPort2, before), before);
        assertNull(runtime.target().port(2));
        NvmeHost.await(() -> other.rdma.sawEvent(CmEventType.DISCONNECTED), other.rdma,
                "the queue on the removed port is disconnected");
        assertWriteRead(c[1], 1, 0, 4);
        // The host sees DISCONNECTED when the target disconnects; the controller ends once its queue has drained,
        // a moment later on the target's threads.
        NvmeHost.await(() -> runtime.target().subsystem(SUB).controllers().size() == 1, null,
                "the controller of the removed port ended");
        assertEquals(1, runtime.target().subsystem(SUB).controllers().size());
    }

    @Test
    void keepAliveExpiryTearsTheControllerDownAndIsCounted() throws Exception {
        runtime.start(load(yaml(NS1, "")));
        NvmeHost[] c = connectController(2000);
        NvmeHost.await(() -> c[0].rdma.sawEvent(CmEventType.DISCONNECTED), c[0].rdma, "keep-alive teardown");
        NvmeHost.await(() -> runtime.target().subsystem(SUB).controllers().isEmpty(), null, "controller ended");
        // The timer thread counts the expiry after checkTimers returns, which may be after the controller is gone.
        NvmeHost.await(() -> metrics.registry().get("nvmf.keep.alive.expiries").tag("subsystem", SUB).counter()
                .count() >= 1, null, "the expiry is counted");
        assertEquals(1.0, metrics.registry().get("nvmf.keep.alive.expiries").tag("subsystem", SUB).counter().count());
        assertNotEquals(0, Arrays.stream(c).filter(h -> h.rdma.sawEvent(CmEventType.DISCONNECTED)).count());
    }

    /**
     * Issue 13 item 9: an idle daemon's timer thread makes no wake-ups. With no controller it parks with no timeout
     * (WAITING; before, it slept 100 ms at a time: TIMED_WAITING forever); a controller with a keep-alive makes it
     * sleep until that controller's window ends, and expiry still comes on time.
     */
    @Test
    void theTimerThreadParksWithNoTimeoutWhileNoControllerHasAKeepAlive() throws Exception {
        runtime.start(load(yaml(NS1, "")));
        Thread timer = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals("nvmf-timers"))
                .findFirst().orElseThrow();
        NvmeHost.await(() -> timer.getState() == Thread.State.WAITING, null, "the timer thread parks with no timeout");
        NvmeHost[] c = connectController(2000);
        NvmeHost.await(() -> timer.getState() == Thread.State.TIMED_WAITING, null,
                "with a keep-alive running, the timer sleeps until the window ends");
        NvmeHost.await(() -> c[0].rdma.sawEvent(CmEventType.DISCONNECTED), c[0].rdma, "keep-alive teardown");
        NvmeHost.await(() -> runtime.target().subsystem(SUB).controllers().isEmpty(), null, "controller ended");
        NvmeHost.await(() -> timer.getState() == Thread.State.WAITING, null, "no controller left: parked again");
    }

    /**
     * nvmetcli's example (subsystem {@code testnqn}, host {@code hostnqn}) imported, checked as check-config checks
     * it, started, and used by a host connecting with those exact names: the names survive the import, the loader,
     * the daemon's mapping and Fabrics Connect. The namespace is a file, opened O_DIRECT.
     */
    @Test
    void anImportedNvmetcliTestnqnConfigurationServesItsHostByName() throws Exception {
        Path img = dir.resolve("testnqn.img");
        Files.write(img, new byte[4 << 20]);
        String json = new String(DaemonRuntimeTest.class.getResourceAsStream("/nvmetcli/testnqn.json").readAllBytes(),
                java.nio.charset.StandardCharsets.UTF_8)
                .replace("192.168.6.68", TARGET_IP).replace("/dev/ram1", img.toString());
        var imported = dev.nvmf.target.config.NvmetcliImporter.importString(json, "testnqn.json");
        TargetConfig cfg = load(imported.yaml()); // with device checks, as check-config and serve do
        assertEquals("testnqn", cfg.subsystems().get(0).nqn());
        runtime.start(cfg);
        assertTrue(((dev.nvmf.target.backend.FileBackend) runtime.target().subsystem("testnqn").namespace(1)
                .backend()).directIo(), "the file namespace is O_DIRECT");

        NvmeHost admin = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0), new InetSocketAddress(TARGET_IP, 4420),
                "hostnqn", 0, 32);
        hosts.add(admin);
        admin.connectAdminAndEnable("testnqn", 0);
        int cntlid = runtime.target().subsystem("testnqn").controllers().get(0).cntlid();
        NvmeHost io = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0), new InetSocketAddress(TARGET_IP, 4420),
                "hostnqn", 1, 16);
        hosts.add(io);
        assertEquals(0, io.connect("testnqn", cntlid, 15, 0), "I/O queue Connect with the names as written");
        assertWriteRead(io, 1, 8, 11);
        byte[] onFile = Files.readAllBytes(img);
        assertArrayEquals(pattern(4096, 11), Arrays.copyOfRange(onFile, 8 * 512, 8 * 512 + 4096),
                "the data reached the file");

        NvmeHost other = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0),
                new InetSocketAddress(TARGET_IP, 4420), "nqn.2014-08.org.nvmexpress:uuid:host1", 0, 32);
        hosts.add(other);
        assertEquals(Status.describe(Status.CONNECT_INVALID_HOST),
                Status.describe(other.connect("testnqn", 0xFFFF, 31, 0)), "only the allowed host name");
    }

    /** The new subsystem attributes, referrals and the discovery scope reach the core's records. */
    @Test
    void subsystemIdentityReferralsAndDiscoveryScopeReachTheCore() throws Exception {
        String attrs = "    firmware: fw-9\n    version: 1.4\n    ieee_oui: 0x001b21\n    cntlid_min: 100\n"
                + "    cntlid_max: 101\n    max_qid: 1\n";
        String referral = "    referrals:\n      - {traddr: 10.0.0.9, portid: 3}\n";
        TargetConfig before = load(yaml(NS1, "").replace("    allowed_hosts:", attrs + "    allowed_hosts:")
                .replace("    subsystems: [" + SUB + "]\n", "    subsystems: [" + SUB + "]\n" + referral));
        runtime.start(before);
        var config = runtime.target().subsystem(SUB).config();
        assertEquals("fw-9", config.firmware());
        assertEquals(0x010400, config.version());
        assertEquals(0x001b21, config.ieeeOui());
        assertEquals(100, config.minCntlid());
        assertEquals(101, config.maxCntlid());
        assertEquals(1, config.maxIoQueues());
        var referralInCore = new dev.nvmf.target.core.subsystem.Referral(3,
                dev.nvmf.target.nvme.DiscoveryLog.TRTYPE_RDMA, dev.nvmf.target.nvme.DiscoveryLog.ADRFAM_IPV4,
                "10.0.0.9", "4420");
        assertEquals(List.of(referralInCore), runtime.target().port(1).referrals());
        assertEquals(List.of(referralInCore), runtime.target().referrals());
        assertEquals(false, runtime.target().port(1).discoveryAllPorts());

        NvmeHost[] c = connectController(0);
        assertTrue(cntlidOf(HOST) == 100 || cntlidOf(HOST) == 101, "cntlid " + cntlidOf(HOST) + " in 100..101");
        NvmeHost second = queue(2, 16);
        assertNotEquals(0, second.connect(SUB, cntlidOf(HOST), 15, 0), "qid 2 is above max_qid 1");
        assertWriteRead(c[1], 1, 0, 3);

        // Live: a referral removed, another added, discovery widened; the controller stays.
        TargetConfig after = load(yaml(NS1, "").replace("    allowed_hosts:", attrs + "    allowed_hosts:")
                .replace("    subsystems: [" + SUB + "]\n", "    subsystems: [" + SUB + "]\n"
                        + "    referrals:\n      - {trtype: tcp, traddr: 10.0.0.10, trsvcid: 8009}\n")
                + "discovery:\n  all_ports: true\n");
        runtime.apply(ConfigDiff.between(before, after), after);
        var tcp = new dev.nvmf.target.core.subsystem.Referral(0, dev.nvmf.target.nvme.DiscoveryLog.TRTYPE_TCP,
                dev.nvmf.target.nvme.DiscoveryLog.ADRFAM_IPV4, "10.0.0.10", "8009");
        assertEquals(List.of(tcp), runtime.target().referrals());
        assertEquals(List.of(tcp), runtime.target().port(1).referrals());
        assertEquals(true, runtime.target().port(1).discoveryAllPorts());
        assertEquals(1, runtime.target().subsystem(SUB).controllers().size(), "no controller was dropped");
        assertWriteRead(c[1], 1, 8, 4);
    }
}
