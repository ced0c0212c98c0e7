package dev.nvmf.target.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.PortAttributes;
import dev.nvmf.verbs.RdmaProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CliTest {
    @TempDir
    Path dir;

    record Run(int code, String out, String err) {}

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err));
        return new Run(code, out.toString(), err.toString());
    }

    static Path repositoryRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("config/minimal.yaml"))) {
            p = p.getParent();
        }
        return p;
    }

    @Test
    void checkConfigPrintsTheEffectiveConfiguration() throws Exception {
        Run r = run("check-config", repositoryRoot().resolve("config/minimal.yaml").toString());
        assertEquals(0, r.code(), r.err());
        assertEquals("", r.err());
        // Every default is spelled out, and the output is itself a valid configuration.
        for (String line : List.of("max_queue_depth: 128", "in_capsule_data_size: 8192", "max_io_size: 1048576",
                "max_aq_depth: 32", "trsvcid: 4420", "listen: 127.0.0.1:9464", "ram_size: 1GiB")) {
            assertTrue(r.out().contains(line), line + " in\n" + r.out());
        }
        ConfigLoader.parse(r.out(), "out", ConfigLoader.Options.DEFAULT);
    }

    @Test
    void theAnnotatedExampleIsValidApartFromThisMachinesDevices() throws Exception {
        Path example = repositoryRoot().resolve("config/nvmf-target.yaml");
        Run r = run("check-config", "--no-device-check", "--quiet", example.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals("", r.out());
        Run strict = run("check-config", "--quiet", example.toString());
        assertEquals(ExitCodes.CONFIG, strict.code());
        assertTrue(strict.err().contains(example + ":26:17: subsystems[0].namespaces[0].device: device "
                + "'/dev/nvme0n1' does not exist"), strict.err());
    }

    @Test
    void checkConfigReportsErrorsWithPositionsAndExitCode4() throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "transport:\n  max_queue_depht: 64\n");
        Run r = run("check-config", bad.toString());
        assertEquals(ExitCodes.CONFIG, r.code());
        assertEquals("", r.out());
        assertEquals(bad + ":2:3: transport.max_queue_depht: unknown key 'max_queue_depht' (did you mean "
                + "'max_queue_depth'?); allowed here: busy_poll, drain_timeout, in_capsule_data_size, max_aq_depth, "
                + "max_io_qpairs_per_ctrlr, max_io_size, max_queue_depth, poller_cpus, pollers, srq, srq_depth, "
                + "zero_copy\n" + bad + ": invalid (1 error)\n", r.err());
    }

    @Test
    void checkConfigShowsWhatAReloadWouldChange() throws Exception {
        Path old = dir.resolve("old.yaml");
        Path now = dir.resolve("new.yaml");
        String base = Files.readString(repositoryRoot().resolve("config/minimal.yaml"));
        Files.writeString(old, base);
        Files.writeString(now, base.replace("        ram_size: 1GiB", "        ram_size: 1GiB\n      - nsid: 2\n"
                + "        ram_size: 512MiB"));
        Run r = run("check-config", "--quiet", "--diff-against", old.toString(), now.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals("# reload would apply:\n#   + namespace nqn.2024-01.dev.nvmf:ram0 nsid 2 ram:512MiB\n", r.out());
    }

    @Test
    void importNvmetcliWritesOurYaml() throws Exception {
        Path json = Path.of(CliTest.class.getResource("/nvmetcli/rdma-two-ports.json").toURI());
        Run r = run("import-nvmetcli", json.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().startsWith("warning: " + json + ":62:19: ports[2].addr.trtype: port 3 uses trtype "
                + "'tcp'"), r.err());
        ConfigLoader.parse(r.out(), "out", ConfigLoader.Options.NO_DEVICE_CHECK);

        Path out = dir.resolve("converted.yaml");
        assertEquals(0, run("import-nvmetcli", json.toString(), "-o", out.toString()).code());
        assertEquals(r.out(), Files.readString(out));
        Run again = run("import-nvmetcli", json.toString(), "-o", out.toString());
        assertEquals(ExitCodes.USAGE, again.code());
        assertTrue(again.err().endsWith(out + ": exists; use --force to overwrite\n"), again.err());

        // nvmetcli's example names: imported unchanged, with a warning each, and check-config accepts the result.
        Path testnqn = Path.of(CliTest.class.getResource("/nvmetcli/testnqn.json").toURI());
        Path converted = dir.resolve("testnqn.yaml");
        Run imported = run("import-nvmetcli", testnqn.toString(), "-o", converted.toString());
        assertEquals(0, imported.code(), imported.err());
        assertTrue(imported.err().startsWith("warning: " + testnqn + ":4:14: hosts[0].nqn: 'hostnqn' does not follow "
                + "NVMe Base 2.0 section 4.5"), imported.err());
        assertTrue(imported.err().contains("warning: " + testnqn + ":41:14: subsystems[0].nqn: 'testnqn' does not "
                + "follow NVMe Base 2.0 section 4.5"), imported.err());
        Run checked = run("check-config", "--no-device-check", converted.toString());
        assertEquals(0, checked.code(), checked.err());
        assertTrue(checked.out().contains("- nqn: testnqn"), checked.out());
    }

    @Test
    void usageErrorsExit2AndHelpListsExitCodes() {
        assertEquals(ExitCodes.USAGE, run().code());
        Run unknown = run("serve", "--config", "x.yaml", "--bogus");
        assertEquals(ExitCodes.USAGE, unknown.code());
        assertTrue(unknown.err().contains("Unknown option: '--bogus'"), unknown.err());
        assertEquals(ExitCodes.USAGE, run("serve").code()); // --config is required

        Run help = run("--help");
        assertEquals(0, help.code());
        for (String s : List.of("serve", "check-config", "devices", "import-nvmetcli", "generate-completion",
                "Exit codes:", "4   invalid configuration")) {
            assertTrue(help.out().contains(s), s + " in\n" + help.out());
        }
    }

    @Test
    void versionNamesProductAndJava() {
        Run r = run("--version");
        assertEquals(0, r.code());
        assertTrue(r.out().startsWith("nvmf-target "), r.out());
        assertTrue(r.out().contains("Java " + Runtime.version()), r.out());
    }

    @Test
    void shellCompletionCoversTheCommands() {
        Run r = run("generate-completion");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("complete -F"), r.out().substring(0, Math.min(400, r.out().length())));
        for (String cmd : List.of("serve", "check-config", "devices", "import-nvmetcli")) {
            assertTrue(r.out().contains(cmd), cmd);
        }
    }

    @Test
    void serveRefusesAnInvalidFileBeforeStartingAnything() throws Exception {
        Path bad = dir.resolve("bad.yaml");
        Files.writeString(bad, "ports:\n  - traddr: 10.0.0.300\n");
        assertEquals(ExitCodes.CONFIG, run("serve", "--config", bad.toString()).code());
    }

    /** This machine has no RDMA stack (no devices, no RDMA in its kernel): the listener cannot come up. */
    @Test
    void serveExits5WhenTheTargetCannotStart() throws Exception {
        Path cfg = dir.resolve("ok.yaml");
        Files.writeString(cfg, Files.readString(repositoryRoot().resolve("config/minimal.yaml"))
                + "metrics:\n  enabled: false\n");
        assertEquals(ExitCodes.UNAVAILABLE, run("serve", "--config", cfg.toString()).code());
    }

    // --- devices -------------------------------------------------------------------------------------------

    static Run devices(RdmaProvider provider) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(DevicesCommand.SPEC, new DevicesCommand(() -> provider), new String[0],
                new PrintWriter(out), new PrintWriter(err));
        return new Run(code, out.toString(), err.toString());
    }

    static RdmaProvider provider(List<DeviceInfo> devices) {
        return new RdmaProvider() {
            public String name() { return "fake"; }
            public List<DeviceInfo> listDevices() { return devices; }
            public Device openDevice(String name) { throw new UnsupportedOperationException(); }
            public CmEventChannel createEventChannel() { throw new UnsupportedOperationException(); }
            public void close() {}
        };
    }

    @Test
    void devicesWithNoneSaysSoCleanly() {
        Run r = devices(provider(List.of()));
        assertEquals(0, r.code());
        assertEquals("No RDMA devices found.\n(Load a driver, or for Soft-RoCE: rdma link add rxe0 type rxe netdev "
                + "IFACE)\n", r.out());
    }

    @Test
    void devicesListsPortsLinkLayerStateGidsAndLimits() {
        DeviceAttributes attrs = new DeviceAttributes(262144, 16384, 32, 16384, 4194303, 262144, -1L, 128, 128,
                DeviceAttributes.IBV_DEVICE_MEM_MGT_EXTENSIONS, 1);
        PortAttributes port = new PortAttributes(1, 4, 5, 3, 2,
                List.of("fe80::5054:ff:fe12:3456", "::ffff:192.168.100.8"));
        Run r = devices(provider(List.of(new DeviceInfo("rxe0", 0x525400fffe123456L, attrs, List.of(port)))));
        assertEquals(0, r.code());
        assertEquals("""
                rxe0  node_guid 5254:00ff:fe12:3456  ports 1
                  limits: max_qp 262144, max_qp_wr 16384, max_sge 32, max_cq 16384, max_cqe 4194303, max_mr 262144, \
                max_mr_size -1, max_qp_rd_atom 128, max_qp_init_rd_atom 128
                  memory management extensions (send with invalidate): yes
                  port 1: ACTIVE  link_layer Ethernet  active_mtu 1024  max_mtu 4096
                    gid 0  fe80::5054:ff:fe12:3456
                    gid 1  ::ffff:192.168.100.8
                """, r.out());
    }

    @Test
    void devicesWithoutAnRdmaStackExits5() {
        Run r = devices(new RdmaProvider() {
            public String name() { return "broken"; }
            public List<DeviceInfo> listDevices() { throw new IllegalStateException("libibverbs.so.1 not found"); }
            public Device openDevice(String name) { throw new UnsupportedOperationException(); }
            public CmEventChannel createEventChannel() { throw new UnsupportedOperationException(); }
            public void close() {}
        });
        assertEquals(ExitCodes.UNAVAILABLE, r.code());
        assertEquals("nvmf-target: the RDMA stack is unavailable: libibverbs.so.1 not found (is rdma-core's "
                + "libibverbs installed?)\n", r.err());
    }

    @Test
    void devicesOnThisMachineEndsCleanly() {
        // This build machine has no RDMA devices: the real command either lists none or says the stack is missing,
        // and never dies with a stack trace.
        Run r = run("devices");
        assertTrue(r.code() == 0 && r.out().startsWith("No RDMA devices found.")
                || r.code() == 0 && r.out().contains("node_guid")
                || r.code() == ExitCodes.UNAVAILABLE && r.err().startsWith("nvmf-target: the RDMA stack is "
                + "unavailable"), r.code() + " " + r.out() + r.err());
        assertTrue(!r.err().contains("\tat "), r.err());
    }
}
