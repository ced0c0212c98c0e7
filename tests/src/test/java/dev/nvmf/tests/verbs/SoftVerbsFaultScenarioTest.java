package dev.nvmf.tests.verbs;

import dev.nvmf.verbs.soft.SoftFabric;
import dev.nvmf.verbs.soft.SoftResources;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The provider-neutral fault scenario on the soft provider, with the device removed and returned through the
 * fabric and a link flap as the port event. The lab runs the same scenario on rxe (VerbsFaultScenarioLabTest).
 */
class SoftVerbsFaultScenarioTest {

    /** Removal, return and port events through the fabric. */
    private static VerbsFaultScenario.DeviceControl control(SoftFabric f) {
        return new VerbsFaultScenario.DeviceControl() {
            @Override
            public void startRemoval(String device) { f.removeDevice(device); }

            @Override
            public boolean removalFinished(long timeoutMillis) { return true; }

            @Override
            public void restore(String device) { f.returnDevice(device); }

            @Override
            public void causePortEvent(String device) { f.faults().linkDown(device); }

            @Override
            public void undoPortEvent(String device) { f.faults().linkUp(device); }
        };
    }

    private static VerbsFaultScenario.Result run(SoftFabric fabric) {
        fabric.addDevice("soft0", "10.77.0.1");
        fabric.addDevice("soft1", "10.77.0.2");
        return VerbsFaultScenario.run(fabric, new VerbsFaultScenario.Config(
                new InetSocketAddress("10.77.0.1", 4792), new InetSocketAddress("10.77.0.2", 0), 10_000, 300,
                System.out, control(fabric)));
    }

    @Test
    void theFaultScenarioPassesAndReleasesEverything() {
        try (SoftFabric fabric = SoftFabric.automatic()) {
            VerbsFaultScenario.Result r = run(fabric);
            assertTrue(r.passed(), r.summary() + "\n" + String.join("\n", r.lines()));
            assertEquals("flushed", r.facts().get("send_after_error"), "the soft default flushes posts in error");
            assertEquals("[DEVICE_FATAL]", r.facts().get("removal_async"));
            assertEquals("PORT_ERR port 1", r.facts().get("port_event"));
            SoftResources left = fabric.resources();
            assertTrue(left.nothingLeaked(), "leaked: " + left);
        }
    }

    @Test
    void configuredAsRxeWasSeenInTheLabItReportsWhatRxeReported() {
        // VerbsFaultScenarioLabTest on Linux 6.1 rxe: after the error transition (an error completion or
        // ibv_modify_qp), a SEND posted later was flushed and a RECV posted later never completed.
        try (SoftFabric fabric = SoftFabric.automatic()) {
            fabric.faults().receivesPostedInErrorVanish(true);
            VerbsFaultScenario.Result r = run(fabric);
            assertTrue(r.passed(), r.summary() + "\n" + String.join("\n", r.lines()));
            assertEquals("flushed", r.facts().get("send_after_error"));
            assertEquals("never completed", r.facts().get("recv_after_error"));
            assertEquals("flushed", r.facts().get("send_after_move_to_error"));
            assertEquals("never completed", r.facts().get("recv_after_move_to_error"));
        }
    }

    @Test
    void withTheRxeQuirkASendPostedInErrorNeverCompletes() {
        try (SoftFabric fabric = SoftFabric.automatic()) {
            fabric.faults().sendsPostedInErrorVanish(true);
            VerbsFaultScenario.Result r = run(fabric);
            assertTrue(r.passed(), r.summary() + "\n" + String.join("\n", r.lines()));
            assertEquals("never completed", r.facts().get("send_after_error"));
            assertEquals("flushed", r.facts().get("recv_after_error"));
        }
    }
}
