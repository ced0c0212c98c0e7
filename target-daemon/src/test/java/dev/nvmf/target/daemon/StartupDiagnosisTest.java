package dev.nvmf.target.daemon;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.service.EnvironmentException;
import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.target.service.JournalFormatter;
import dev.nvmf.target.service.SdNotify;
import dev.nvmf.target.service.TargetService;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.ffm.FfmProvider;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

/**
 * A start that fails because of the machine says what to load or check, in one line without a source location
 * ("rdma_create_event_channel failed: errno 19 (No such device) (at dev.nvmf.verbs.ffm.Rdma.failure(...))", the
 * line this replaced, told an operator nothing).
 */
class StartupDiagnosisTest {
    static final String NO_RDMA = "the RDMA stack is not available: rdma_create_event_channel failed: errno 19 (No "
            + "such device); check that 'nvmf-target devices' lists a device; that the kernel modules rdma_ucm and "
            + "ib_uverbs are loaded (modprobe rdma_ucm ib_uverbs; /dev/infiniband/rdma_cm must exist) with the NIC's "
            + "RDMA driver (mlx5_ib, irdma, bnxt_re, ..., or rdma_rxe for Soft-RoCE: rdma link add rxe0 type rxe "
            + "netdev IFACE); and that the device's user-space provider is installed (Debian: ibverbs-providers)";

    @TempDir
    Path dir;

    TargetConfig load(String yaml) throws Exception {
        Path f = dir.resolve("t.yaml");
        Files.writeString(f, yaml);
        return ConfigLoader.load(f).config();
    }

    /** Log records of one run, formatted as the journal shows them. */
    static final class Capture extends Handler {
        final List<String> lines = new ArrayList<>();
        final JournalFormatter formatter = new JournalFormatter(true);

        @Override
        public void publish(LogRecord r) {
            lines.add(formatter.format(r).trim());
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    /** On this machine (no RDMA in the kernel) the real provider fails as an operator's machine without RDMA does. */
    @Test
    void noRdmaStackSaysWhatToLoadAndHasNoSourceLocation() throws Exception {
        assumeFalse(Files.exists(Path.of("/dev/infiniband/rdma_cm")), "this machine has an RDMA stack");
        TargetConfig cfg = load(DaemonRuntimeTest.yaml(DaemonRuntimeTest.NS1, ""));
        TargetMetrics metrics = new TargetMetrics();
        DaemonRuntime runtime = new DaemonRuntime(DaemonRuntime.Options.of(new FfmProvider()), metrics);
        Logger root = Logger.getLogger("");
        Capture capture = new Capture();
        root.addHandler(capture);
        int exit;
        try {
            TargetService service = new TargetService(dir.resolve("t.yaml"), runtime, metrics,
                    SdNotify.fromEnvironment(Map.of(), ProcessHandle.current().pid()), Duration.ofSeconds(1));
            exit = service.run(cfg);
        } finally {
            root.removeHandler(capture);
        }
        assertEquals(ExitCodes.UNAVAILABLE, exit);
        List<String> errors = capture.lines.stream().filter(l -> l.startsWith("<3>")).toList();
        assertEquals(List.of("<3>startup failed: " + NO_RDMA), errors);
        assertTrue(capture.lines.stream().noneMatch(l -> l.contains("(at ")), capture.lines.toString());
    }

    @Test
    void aListenAddressNoDeviceHasNamesThePortAndWhereToLook() throws Exception {
        SoftFabric fabric = SoftFabric.automatic();
        fabric.addDevice("t0", DaemonRuntimeTest.TARGET_IP);
        DaemonRuntime runtime = new DaemonRuntime(DaemonRuntime.Options.of(fabric), new TargetMetrics());
        TargetConfig cfg = load(DaemonRuntimeTest.yaml(DaemonRuntimeTest.NS1, "")
                .replace("traddr: " + DaemonRuntimeTest.TARGET_IP, "traddr: 10.9.9.9"));
        EnvironmentException e = assertThrows(EnvironmentException.class, () -> runtime.start(cfg));
        assertEquals("no RDMA device has a listen address: rdma_bind_addr failed: errno 99 (Cannot assign requested "
                + "address: 10.9.9.9) (port 10.9.9.9:4420); ports[].traddr must be the IP address of a network "
                + "interface an RDMA device is on ('nvmf-target devices' lists each port's GIDs, which hold those "
                + "addresses; 'rdma link' shows each device's interface), or 0.0.0.0 for every device", e.getMessage());
        assertNull(runtime.target(), "nothing left running");
        runtime.stop(Duration.ofSeconds(1));
    }

    @Test
    void aNamespaceThatCannotOpenNamesItsFile() throws Exception {
        SoftFabric fabric = SoftFabric.automatic();
        fabric.addDevice("t0", DaemonRuntimeTest.TARGET_IP);
        DaemonRuntime runtime = new DaemonRuntime(DaemonRuntime.Options.of(fabric), new TargetMetrics());
        Path img = Files.write(dir.resolve("gone.img"), new byte[1 << 20]);
        TargetConfig cfg = load(DaemonRuntimeTest.yaml("      - nsid: 1\n        file: " + img + "\n", ""));
        Files.delete(img); // after check-config accepted it
        EnvironmentException e = assertThrows(EnvironmentException.class, () -> runtime.start(cfg));
        assertEquals("a namespace cannot be opened: " + img + ": open(O_RDWR|O_DIRECT): ENOENT (No such file or "
                + "directory)", e.getMessage());
    }

    @Test
    void eachMachineFailureHasItsRemedy() {
        List<dev.nvmf.target.config.PortSection> none = List.of();
        assertEquals("a listen address is already in use: rdma_bind_addr failed: errno 98 (Address already in use) "
                + "(no ports); another RDMA listener holds it, such as the kernel target (look under "
                + "/sys/kernel/config/nvmet/ports) or a second nvmf-target",
                StartupDiagnosis.explain(new VerbsException("rdma_bind_addr", 98, "Address already in use"), none)
                        .getMessage());
        assertEquals("no permission to use the RDMA devices: rdma_create_event_channel failed: errno 13 (Permission "
                + "denied); the daemon's user needs read and write access to /dev/infiniband/rdma_cm and "
                + "/dev/infiniband/uverbs* (root, or the group that owns them), and under systemd the unit must not "
                + "hide them (no PrivateDevices=, no DevicePolicy=closed without DeviceAllow=/dev/infiniband/*)",
                StartupDiagnosis.explain(new VerbsException("rdma_create_event_channel", 13, "Permission denied"),
                        none).getMessage());
        String memlock = StartupDiagnosis.explain(new VerbsException("ibv_reg_mr", 12, "Cannot allocate memory"),
                none).getMessage();
        assertTrue(memlock.startsWith("registering memory with the RDMA device failed: ibv_reg_mr failed: errno 12 "
                + "(Cannot allocate memory); RDMA pins registered memory and the locked-memory limit is "), memlock);
        assertTrue(memlock.endsWith(": run with LimitMEMLOCK=infinity (the systemd unit sets it) or ulimit -l "
                + "unlimited, or give the process CAP_IPC_LOCK"), memlock);
        assertEquals("the RDMA stack is not available: dlopen librdmacm.so.1 failed: cannot load librdmacm.so.1; "
                + "install rdma-core's libibverbs1, librdmacm1 and ibverbs-providers",
                StartupDiagnosis.explain(new VerbsException("dlopen librdmacm.so.1", "cannot load librdmacm.so.1"),
                        none).getMessage());
        // The wrapped cause is found; what is not the machine's doing stays a bug (null: logged with its stack).
        assertEquals(NO_RDMA, StartupDiagnosis.explain(new IllegalStateException(new VerbsException(
                "rdma_create_event_channel", 19, "No such device")), none).getMessage());
        assertNull(StartupDiagnosis.explain(new VerbsException("ibv_create_qp", 22, "Invalid argument"), none));
        assertNull(StartupDiagnosis.explain(new NullPointerException(), none));
    }
}
