package dev.nvmf.verbs.selftest;

import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.soft.SoftFabric;
import dev.nvmf.verbs.soft.SoftResources;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The selftest's run of the verbs scenario: both CM ids on one soft device and address (its loopback), with the
 * features the target can do without reported as lacking, precisely, and those it needs failing the run.
 */
class LoopbackScenarioTest {
    static final InetSocketAddress ADDRESS = new InetSocketAddress("10.9.0.1", 4791);

    record Run(VerbsScenario.Result result, String out, SoftResources left) {}

    static Run loopback(DeviceAttributes attributes, boolean optional) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        try (SoftFabric fabric = SoftFabric.automatic()) {
            fabric.addDevice("soft0", "10.9.0.1", attributes);
            VerbsScenario.Config lab = VerbsScenario.Config.loopback(ADDRESS, 10_000, out);
            VerbsScenario.Config config = optional ? lab : new VerbsScenario.Config(lab.serverBind(),
                    lab.clientSource(), lab.serverDestination(), lab.stepTimeoutMillis(), out, lab.skip(), false);
            VerbsScenario.Result r = VerbsScenario.run(fabric, config);
            return new Run(r, bytes.toString(StandardCharsets.UTF_8), fabric.resources());
        }
    }

    static String describe(Run r) {
        return r.result().summary() + "\n" + r.out();
    }

    @Test
    void everyStepRunsOverOneDevicesLoopbackAndTheLimitsAreReported() {
        Run r = loopback(SoftFabric.defaultAttributes(), true);
        assertTrue(r.result().complete(), () -> describe(r));
        assertEquals("VERBS-SCENARIO: PASS", r.result().summary());
        assertEquals(List.of(), r.result().lacking());
        for (String step : List.of("connect", "accept", "bind-window", "send", "send-back", "rdma-write", "rdma-read",
                "unsignaled", "send-with-inv", "invalidated-access", "disconnect", "teardown")) {
            assertTrue(r.out().lines().anyMatch(l -> l.startsWith("STEP " + step + ": ok")), () -> step + "\n" + r.out());
        }
        assertTrue(r.out().contains("server on soft0"), r.out());
        assertEquals(List.of(
                "soft0: max_qp 131072, max_qp_wr 16384, max_sge 32, max_cq 16777216, max_cqe 4194303, max_mr 16777216,"
                        + " max_mr_size 18446744073709551615",
                "RDMA READ depth: max_qp_rd_atom (IRD, as responder) 128, max_qp_init_rd_atom (ORD, as initiator) 128",
                "max inline data: 64 bytes granted (asked 64)",
                "type-2 memory windows: reported in device_cap_flags; ibv_alloc_mw works",
                "remote invalidation (IBV_DEVICE_MEM_MGT_EXTENSIONS, SEND_WITH_INV): yes"), r.result().capabilities());
        assertTrue(r.left().nothingLeaked(), () -> "leaked: " + r.left());
    }

    @Test
    void aDeviceWithoutMemoryWindowsPassesAndSaysExactlyWhatItLacks() {
        Run r = loopback(SoftFabric.defaultAttributes().withoutCapabilities(DeviceAttributes.IBV_DEVICE_MEM_WINDOW
                | DeviceAttributes.IBV_DEVICE_MEM_WINDOW_TYPE_2A | DeviceAttributes.IBV_DEVICE_MEM_WINDOW_TYPE_2B), true);
        assertTrue(r.result().passed(), () -> describe(r));
        assertEquals("VERBS-SCENARIO: PASS (1 optional feature lacking)", r.result().summary());
        assertEquals(List.of("type-2 memory windows (ibv_alloc_mw failed: errno 95 (Operation not supported)): no key a"
                + " peer may invalidate (not run: bind-window, send-with-inv, invalidated-access)"), r.result().lacking());
        assertTrue(r.out().contains("STEP send-with-inv: SKIPPED (device lacks type-2 memory windows"), r.out());
        assertFalse(r.out().contains("STEP send-with-inv: ok"), r.out());
        assertTrue(r.result().capabilities().contains("type-2 memory windows: not reported in device_cap_flags;"
                + " ibv_alloc_mw failed: errno 95 (Operation not supported)"), () -> describe(r));
        // The rest still ran, including the flush of every receive on disconnect.
        assertTrue(r.out().contains("STEP rdma-read: ok"), r.out());
        assertTrue(r.out().contains("STEP disconnect: ok (DISCONNECTED both sides, 7 + 7 receives flushed in order)"),
                r.out());
        assertTrue(r.left().nothingLeaked(), () -> "leaked: " + r.left());
    }

    @Test
    void aDeviceWithoutRemoteInvalidationPassesAndSaysSo() {
        Run r = loopback(SoftFabric.attributesWithoutMemoryManagementExtensions(), true);
        assertTrue(r.result().passed(), () -> describe(r));
        assertEquals(1, r.result().lacking().size(), () -> describe(r));
        assertTrue(r.result().lacking().getFirst().startsWith("remote invalidation (IBV_DEVICE_MEM_MGT_EXTENSIONS)"),
                () -> describe(r));
        assertTrue(r.result().lacking().getFirst().endsWith("(not run: send-with-inv, invalidated-access)"),
                () -> describe(r));
        assertTrue(r.out().contains("STEP bind-window: ok"), r.out());
        assertTrue(r.result().capabilities().contains(
                "remote invalidation (IBV_DEVICE_MEM_MGT_EXTENSIONS, SEND_WITH_INV): no"), () -> describe(r));
    }

    @Test
    void aDeviceThatCannotIssueRdmaReadsFails() {
        Run r = loopback(SoftFabric.defaultAttributes().withReadDepths(128, 0), true);
        assertFalse(r.result().passed(), () -> describe(r));
        assertEquals("VERBS-SCENARIO: FAIL client-resources: device allows no RDMA READ as initiator",
                r.result().summary());
        assertTrue(r.left().nothingLeaked(), () -> "leaked: " + r.left());
    }

    @Test
    void withoutOptionalFeaturesTheLabRunFailsOnAMissingWindow() {
        Run r = loopback(SoftFabric.defaultAttributes().withoutCapabilities(
                DeviceAttributes.IBV_DEVICE_MEM_WINDOW_TYPE_2A | DeviceAttributes.IBV_DEVICE_MEM_WINDOW_TYPE_2B), false);
        assertFalse(r.result().passed(), () -> describe(r));
        assertEquals("client-resources", r.result().failedStep());
        assertTrue(r.result().reason().contains("ibv_alloc_mw failed: errno 95"), r.result().reason());
    }
}
