package dev.nvmf.target.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.function.Consumer;

import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

/**
 * {@code nvmf-target selftest} on the soft provider: its devices can lack what real ones lack (type-2 memory
 * windows, remote invalidation, RDMA READ as initiator), and the report must say exactly that, with the exit code
 * that tells an operator whether the target can run on the device.
 */
class SelftestCommandTest {
    record Run(int code, String out, String err) {
        List<String> lines(String prefix) {
            return out.lines().filter(l -> l.startsWith(prefix)).toList();
        }

        String describe() {
            return "exit " + code + "\n" + out + "\nstderr:\n" + err;
        }
    }

    static Run selftest(Consumer<SoftFabric> devices, String... args) {
        SoftFabric fabric = SoftFabric.automatic();
        devices.accept(fabric);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        String[] all = new String[args.length + 2];
        all[0] = "--step-timeout";
        all[1] = "20";
        System.arraycopy(args, 0, all, 2, args.length);
        int code = Main.execute(SelftestCommand.SPEC, new SelftestCommand(() -> fabric), all, new PrintWriter(out),
                new PrintWriter(err));
        System.out.print(out);
        return new Run(code, out.toString(), err.toString());
    }

    static final long NO_WINDOWS = DeviceAttributes.IBV_DEVICE_MEM_WINDOW
            | DeviceAttributes.IBV_DEVICE_MEM_WINDOW_TYPE_2A | DeviceAttributes.IBV_DEVICE_MEM_WINDOW_TYPE_2B;

    @Test
    void aCompleteDevicePassesEveryVerbsAndNvmeStep() {
        Run r = selftest(f -> {
            f.addDevice("soft0", "10.8.0.1");
            f.addDevice("soft1", "10.8.0.2");
        }, "--device", "soft1");
        assertEquals(ExitCodes.OK, r.code(), r::describe);
        assertEquals("SELFTEST: PASS", r.out().strip().lines().reduce((a, b) -> b).orElse(""), r::describe);
        assertTrue(r.out().contains("SELFTEST: device soft1, port 1 ACTIVE Ethernet, address 10.8.0.2"), r::describe);
        for (String step : List.of("connect", "send", "rdma-write", "rdma-read", "unsignaled", "send-with-inv",
                "invalidated-access", "disconnect", "nvme-target", "nvme-admin-connect", "nvme-enable",
                "nvme-identify", "nvme-io-connect", "nvme-write", "nvme-read", "nvme-in-capsule", "nvme-flush",
                "nvme-disconnect", "nvme-stop")) {
            assertEquals(1, r.lines("STEP " + step + ": ok").size(), () -> step + "\n" + r.describe());
        }
        assertTrue(r.out().contains("STEP nvme-read: ok (128 KiB read back identical, by RDMA WRITE; response by"
                + " SEND_WITH_INV of the host's window key)"), r::describe);
        assertTrue(r.lines("SELFTEST: limit ").contains("SELFTEST: limit RDMA READ depth: max_qp_rd_atom (IRD, as"
                + " responder) 128, max_qp_init_rd_atom (ORD, as initiator) 128"), r::describe);
        assertEquals(List.of(), r.lines("SELFTEST: lacks"), r::describe);
        assertEquals(List.of(), r.lines("SELFTEST: FAIL"), r::describe);
    }

    @Test
    void aDeviceWithoutMemoryWindowsPassesAndSaysItLacksThem() {
        Run r = selftest(f -> f.addDevice("mlx9", "10.8.0.1",
                SoftFabric.defaultAttributes().withoutCapabilities(NO_WINDOWS)), "--device", "mlx9");
        assertEquals(ExitCodes.OK, r.code(), r::describe);
        assertEquals(List.of("SELFTEST: lacks (optional) type-2 memory windows (ibv_alloc_mw failed: errno 95"
                + " (Operation not supported)): no key a peer may invalidate (not run: bind-window, send-with-inv,"
                + " invalidated-access)"), r.lines("SELFTEST: lacks"), r::describe);
        // The NVMe host then uses region keys, and the target must not invalidate them.
        assertTrue(r.out().contains("STEP nvme-read: ok (128 KiB read back identical, by RDMA WRITE; response by"
                + " plain SEND (region key, not invalidatable))"), r::describe);
        assertTrue(r.out().contains("SELFTEST: PASS"), r::describe);
    }

    @Test
    void aDeviceWithoutRemoteInvalidationPassesAndSaysSo() {
        Run r = selftest(f -> f.addDevice("soft0", "10.8.0.1",
                SoftFabric.attributesWithoutMemoryManagementExtensions()));
        assertEquals(ExitCodes.OK, r.code(), r::describe);
        List<String> lacks = r.lines("SELFTEST: lacks");
        assertEquals(1, lacks.size(), r::describe);
        assertTrue(lacks.getFirst().startsWith("SELFTEST: lacks (optional) remote invalidation"
                + " (IBV_DEVICE_MEM_MGT_EXTENSIONS)"), r::describe);
        assertTrue(r.out().contains("response by plain SEND (the device lacks remote invalidation)"), r::describe);
    }

    @Test
    void aDeviceThatCannotIssueRdmaReadsFailsWithOneLine() {
        Run r = selftest(f -> f.addDevice("soft0", "10.8.0.1",
                SoftFabric.defaultAttributes().withReadDepths(16, 0)));
        assertEquals(ExitCodes.SELFTEST_FAILED, r.code(), r::describe);
        assertEquals(List.of("SELFTEST: FAIL verbs client-resources: device allows no RDMA READ as initiator",
                "SELFTEST: FAIL (1)"), r.lines("SELFTEST: FAIL"), r::describe);
        assertTrue(r.out().contains("SELFTEST: not run: the NVMe check (the verbs scenario failed first)"),
                r::describe);
        assertFalse(r.out().contains("STEP nvme-"), r::describe);
    }

    @Test
    void anUnknownDeviceIsAUsageErrorThatListsTheDevices() {
        Run r = selftest(f -> f.addDevice("soft0", "10.8.0.1"), "--device", "mlx5_0");
        assertEquals(ExitCodes.USAGE, r.code(), r::describe);
        assertEquals(List.of("SELFTEST: FAIL devices: no device named mlx5_0; devices: [soft0]"),
                r.lines("SELFTEST: FAIL"), r::describe);
    }

    @Test
    void noDeviceAtAllSaysWhatToLoad() {
        Run r = selftest(f -> { });
        assertEquals(ExitCodes.UNAVAILABLE, r.code(), r::describe);
        assertTrue(r.out().startsWith("SELFTEST: FAIL devices: no RDMA device (load the NIC's RDMA driver"),
                r::describe);
    }

    @Test
    void anAddressThatIsNotAnAddressIsAUsageError() {
        Run r = selftest(f -> f.addDevice("soft0", "10.8.0.1"), "--address", "rxe0");
        assertEquals(ExitCodes.USAGE, r.code(), r::describe);
        assertTrue(r.err().contains("--address must be an IPv4 or IPv6 address, not 'rxe0'"), r::describe);
    }
}
