package dev.nvmf.target.daemon;

import dev.nvmf.target.cli.Main;
import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.AnaState;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.target.service.SdNotify;
import dev.nvmf.target.service.TargetService;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ANA on the running daemon (soft fabric, NVMe-level host): a reload changes a port's group states and moves a
 * namespace to another group live, telling the connected host (ANA change notice, change count, the log page,
 * the statuses I/O gets), and {@code nvmf-target ana set|show} reach the daemon through its control socket, the
 * command run in-process against a daemon served by {@link TargetService}.
 */
class AnaDaemonTest {
    static final String SUB = DaemonRuntimeTest.SUB;
    static final String HOST = DaemonRuntimeTest.HOST;
    static final int ANA_LOG_BYTES = 16 + 128 * 32 + 1024 * 4;

    @TempDir
    Path dir;

    SoftFabric fabric;
    TargetMetrics metrics;
    DaemonRuntime runtime;
    final List<NvmeHost> hosts = new ArrayList<>();

    @BeforeEach
    void fabric() {
        fabric = SoftFabric.automatic();
        fabric.addDevice("t0", DaemonRuntimeTest.TARGET_IP);
        fabric.addDevice("h0", DaemonRuntimeTest.HOST_IP);
        metrics = new TargetMetrics();
        runtime = new DaemonRuntime(DaemonRuntime.Options.of(fabric), metrics);
    }

    @AfterEach
    void cleanUp() {
        runtime.stop(Duration.ofSeconds(5));
        hosts.forEach(NvmeHost::close);
    }

    /** Namespace 1 in group 1, namespace 2 in group {@code ns2Group}; port 1 sets {@code anaGroups}. */
    static String yaml(int ns2Group, String anaGroups) {
        String namespaces = DaemonRuntimeTest.NS1 + "      - nsid: 2\n        ram_size: 2MiB\n        ana_group: "
                + ns2Group + "\n";
        return DaemonRuntimeTest.yaml(namespaces, "").replace("    subsystems: [" + SUB + "]\n",
                "    subsystems: [" + SUB + "]\n    ana_groups:\n" + anaGroups);
    }

    static final String GROUPS = "      - {grpid: 1, state: optimized}\n      - {grpid: 2, state: non-optimized}\n";

    TargetConfig load(String text) throws Exception {
        Path f = dir.resolve("nvmf-target.yaml");
        Files.writeString(f, text);
        return ConfigLoader.load(f).config();
    }

    NvmeHost queue(int qid) {
        NvmeHost h = new NvmeHost(fabric, new InetSocketAddress(DaemonRuntimeTest.HOST_IP, 0),
                new InetSocketAddress(DaemonRuntimeTest.TARGET_IP, 4420), HOST, qid, qid == 0 ? 32 : 16);
        hosts.add(h);
        return h;
    }

    /** Admin queue with ANA change notices enabled, and an I/O queue. */
    NvmeHost[] connect() {
        NvmeHost admin = queue(0);
        admin.connectAdminAndEnable(SUB, 0);
        assertEquals(0, admin.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION, AsyncEvents.CONFIG_ANA_CHANGE));
        int cntlid = runtime.target().subsystem(SUB).controllers().get(0).cntlid();
        NvmeHost io = queue(1);
        assertEquals(0, io.connect(SUB, cntlid, 15, 0));
        return new NvmeHost[] {admin, io};
    }

    /** The state byte of the n-th descriptor (0-based) of an ANA log with one NSID per group. */
    static int stateOf(MemorySegment log, int descriptor) {
        return Le.u8(log, 16 + descriptor * 36L + 16);
    }

    static int write(NvmeHost io, int nsid) {
        return io.write(nsid, 0, DaemonRuntimeTest.pattern(512, nsid), 512);
    }

    @Test
    void aReloadChangesAPortsStatesAndMovesANamespaceLiveAndTellsTheHost() throws Exception {
        TargetConfig before = load(yaml(2, GROUPS));
        runtime.start(before);
        NvmeHost[] c = connect();
        MemorySegment log = c[0].logPage(0x0C, ANA_LOG_BYTES);
        assertEquals(2, Le.u16(log, 8), "groups 1 and 2");
        assertEquals(0x01, stateOf(log, 0));
        assertEquals(0x02, stateOf(log, 1), "group 2 non-optimized, as the file says");
        long count = Le.u64(log, 0);
        int aer = c[0].sendAsyncEventRequest();

        TargetConfig inaccessible = load(yaml(2, GROUPS.replace("{grpid: 1, state: optimized}",
                "{grpid: 1, state: inaccessible}")));
        ConfigDiff d = ConfigDiff.between(before, inaccessible);
        assertEquals(List.of("~ port 1 ana group 1: optimized -> inaccessible"), d.describe());
        runtime.apply(d, inaccessible);
        // Only ANA change notices are enabled (AEC bit 11): a completed request is one (its DW0, 000C0302h, is
        // checked capsule by capsule in AnaTest).
        Cqe ev = c[0].awaitResponse(aer);
        assertEquals(0, ev.status(), "the ANA change notice");
        log = c[0].logPage(0x0C, ANA_LOG_BYTES);
        assertEquals(count + 1, Le.u64(log, 0), "the change count moved");
        assertEquals(0x03, stateOf(log, 0));
        assertEquals(Status.describe(Status.ANA_INACCESSIBLE | Status.MORE), Status.describe(write(c[1], 1)));
        assertEquals(0, write(c[1], 2), "group 2 is still served");
        assertEquals(1, runtime.target().subsystem(SUB).controllers().size(), "no controller was dropped");

        // Namespace 2 moves to group 1 (inaccessible here): it stays active, its I/O is refused from now on.
        int aer2 = c[0].sendAsyncEventRequest();
        TargetConfig moved = load(yaml(1, GROUPS.replace("{grpid: 1, state: optimized}",
                "{grpid: 1, state: inaccessible}")));
        ConfigDiff move = ConfigDiff.between(inaccessible, moved);
        assertEquals(List.of("~ namespace " + SUB + " nsid 2 ana_group 2 -> 1"), move.describe());
        runtime.apply(move, moved);
        assertEquals(0, c[0].awaitResponse(aer2).status(), "the ANA change notice");
        assertArrayEquals(new int[] {1, 2}, c[0].activeNamespaces(), "not removed and added");
        assertEquals(1, Le.u32(c[0].identify(0, 2), 92), "ANAGRPID 1");
        assertEquals(Status.describe(Status.ANA_INACCESSIBLE | Status.MORE), Status.describe(write(c[1], 2)));
        log = c[0].logPage(0x0C, ANA_LOG_BYTES);
        assertEquals(2, Le.u16(log, 8), "group 2 is still listed: port 1 sets it");
        assertEquals(2, Le.u32(log, 20), "both namespaces in group 1");
        assertEquals(1, Le.u32(log, 48), "NSIDs 1 and 2");
        assertEquals(2, Le.u32(log, 52));
        assertEquals(2, Le.u32(log, 56), "group 2 next");
        assertEquals(0, Le.u32(log, 60), "none left in group 2");

        // Back to the first file: group 1 optimized, namespace 2 in group 2.
        runtime.apply(ConfigDiff.between(moved, before), before);
        assertEquals(0, write(c[1], 1));
        assertEquals(0, write(c[1], 2));
    }

    @Test
    void aReloadThatFailsMidwayRestoresThePortsAnaStates() throws Exception {
        String inaccessible = GROUPS.replace("{grpid: 1, state: optimized}", "{grpid: 1, state: inaccessible}");
        TargetConfig before = load(yaml(2, inaccessible));
        runtime.start(before);
        // Port 1 moves to an address no device has: re-created in the commit, which fails; everything is undone.
        TargetConfig bad = load(yaml(2, GROUPS).replace("traddr: " + DaemonRuntimeTest.TARGET_IP,
                "traddr: 10.9.9.9"));
        assertThrows(Exception.class, () -> runtime.apply(ConfigDiff.between(before, bad), bad));
        assertEquals(AnaState.INACCESSIBLE, runtime.target().anaStates(1).state(1), "the old file's state");
        assertEquals(AnaState.NON_OPTIMIZED, runtime.target().anaStates(1).state(2));
    }

    /** Runs the command line in-process: [exit code, stdout, stderr]. */
    static Object[] cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err));
        return new Object[] {code, out.toString(), err.toString()};
    }

    @Test
    void anaSetAndShowReachTheRunningDaemonThroughItsControlSocket() throws Exception {
        Path file = dir.resolve("nvmf-target.yaml");
        Files.writeString(file, yaml(2, GROUPS));
        Path socket = dir.resolve("run").resolve("control.sock");
        TargetService service = new TargetService(file, runtime, metrics,
                SdNotify.fromEnvironment(Map.of(), ProcessHandle.current().pid()), Duration.ofSeconds(10));
        service.controlSocket(socket, true);
        AtomicInteger exit = new AtomicInteger(-1);
        TargetConfig initial = ConfigLoader.load(file).config();
        Thread control = new Thread(() -> exit.set(service.run(initial)), "control");
        control.start();
        try {
            NvmeHost.await(() -> Files.exists(socket), null, "control socket bound");
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket.getParent())),
                    "the directory the daemon made is the owner's only");
            NvmeHost[] c = connect();
            int aer = c[0].sendAsyncEventRequest();
            String s = socket.toString();

            Object[] r = cli("ana", "set", "--socket", s, "1", "1", "non-optimized");
            assertEquals(0, r[0], () -> String.valueOf(r[2]));
            assertEquals("port 1 ANA group 1: optimized -> non-optimized (1 controllers on the port told)\n", r[1]);
            assertEquals(0, c[0].awaitResponse(aer).status(), "the host is told at once");
            assertEquals(0x02, stateOf(c[0].logPage(0x0C, ANA_LOG_BYTES), 0));
            assertEquals(0, write(c[1], 1), "non-optimized still serves I/O");

            Object[] show = cli("ana", "show", "--socket", s);
            assertEquals(0, show[0]);
            assertEquals("port 1 group 1 non-optimized\nport 1 group 2 non-optimized\n", show[1]);

            Object[] noPort = cli("ana", "set", "--socket", s, "7", "1", "optimized");
            assertEquals(ExitCodes.USAGE, noPort[0]);
            assertEquals("nvmf-target ana: no port 7 (configured: [1])\n", noPort[2]);
            Object[] badState = cli("ana", "set", "--socket", s, "1", "1", "standby");
            assertEquals(ExitCodes.USAGE, badState[0]);
            assertTrue(((String) badState[2]).contains("'standby' is not an ANA state"), (String) badState[2]);
            assertEquals(ExitCodes.USAGE, cli("ana", "set", "--socket", s, "1", "129", "optimized")[0]);
            Object[] nobody = cli("ana", "show", "--socket", dir.resolve("nobody.sock").toString());
            assertEquals(ExitCodes.UNAVAILABLE, nobody[0]);
            assertTrue(((String) nobody[2]).startsWith("nvmf-target ana: cannot reach the daemon on "),
                    (String) nobody[2]);

            // A reload that does not touch port 1's group 1 keeps the state set by hand; one that does applies it.
            Files.writeString(file, yaml(2, GROUPS.replace("non-optimized}", "change}")));
            service.requestReload();
            NvmeHost.await(() -> runtime.target().anaStates(1).state(2) == AnaState.CHANGE, null, "reload applied");
            assertEquals(AnaState.NON_OPTIMIZED, runtime.target().anaStates(1).state(1), "the hand-set state stays");
            Files.writeString(file, yaml(2, GROUPS.replace("{grpid: 1, state: optimized}",
                    "{grpid: 1, state: inaccessible}").replace("non-optimized}", "change}")));
            service.requestReload();
            NvmeHost.await(() -> runtime.target().anaStates(1).state(1) == AnaState.INACCESSIBLE, null,
                    "the file's change of group 1 wins");

            service.requestStop();
            control.join(20_000);
            assertEquals(ExitCodes.OK, exit.get());
            assertFalse(Files.exists(socket), "the socket is removed on stop");
        } finally {
            service.requestStop();
            control.join(20_000);
        }
    }
}
