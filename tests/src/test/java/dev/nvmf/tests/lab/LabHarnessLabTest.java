package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The harness itself, in a real guest: the scenario's exit status, stdout, stderr, results and logs come back;
 * wait_for gives up at its bound; a hung step is cut by its own timeout; background programs start and stop;
 * the JDK runs in the guest; a failing scenario fails {@link LabVm#run}.
 */
@Tag("lab")
class LabHarnessLabTest {

    @Test
    void scenarioStatusOutputResultsAndLogsComeBack() {
        LabRun r = LabVm.runAllowingFailure("harness-selftest.sh",
                Map.of("SELFTEST_EXIT", "3", "SELFTEST_MARKER", "it's a $marker with spaces"), Duration.ofMinutes(5));
        assertEquals(3, r.exitStatus(), r::describe);
        assertTrue(r.guestReported(), r::describe);
        assertTrue(r.stdout().contains("selftest stdout marker: it's a $marker with spaces"), r::describe);
        assertTrue(r.stderr().contains("selftest stderr marker"), r::describe);
        Map<String, String> res = r.results();
        assertEquals("rxe0 rxe1", res.get("rxe_devices"), r::describe);
        assertEquals("1", res.get("bg_ok"), r::describe);
        assertEquals("124", res.get("hang_rc"), r::describe);
        double waited = Double.parseDouble(res.get("wait_for_false_s"));
        assertTrue(waited >= 2.0, "wait_for gave up before its 2 s bound: " + waited);
        assertTrue(r.log("probe").orElse("").contains("LAB-PROBE: java " + Runtime.version().feature()
                + " sees dev.nvmf.verbs.WcStatus arg=hello"), r::describe);
        assertEquals("5", res.get("probe_rc"), r::describe);
        // The host's count of the emulator's CPU reaches the guest and grows with the guest's work (a JVM ran).
        long cpuBefore = Long.parseLong(res.getOrDefault("host_cpu_us_before", "-1"));
        long cpuAfter = Long.parseLong(res.getOrDefault("host_cpu_us_after", "-1"));
        assertTrue(cpuBefore > 0 && cpuAfter > cpuBefore,
                () -> "emulator CPU " + cpuBefore + " then " + cpuAfter + " us\n" + r.describe());
        // The emulator's translation counters come back on request, each answer the current one: the JVM that
        // ran between the two requests was code the emulator had not translated yet.
        assertEquals("2", res.get("tcg_requests"), r::describe);
        long tbBefore = Long.parseLong(res.getOrDefault("tcg_tb_count_before", "-1"));
        long tbAfter = Long.parseLong(res.getOrDefault("tcg_tb_count_after", "-1"));
        long codeBefore = Long.parseLong(res.getOrDefault("tcg_code_bytes_before", "-1"));
        long codeAfter = Long.parseLong(res.getOrDefault("tcg_code_bytes_after", "-1"));
        assertTrue(tbBefore > 0 && codeBefore > 0, () -> "no translation counters\n" + r.describe());
        // (A whole-buffer flush would restart both from 0: the 1 GiB buffer does not fill in this short boot.)
        assertEquals("0", res.get("tcg_tb_flush_after"), r::describe);
        assertTrue(tbAfter > tbBefore && codeAfter > codeBefore, () -> "translation blocks " + tbBefore + " then "
                + tbAfter + ", code " + codeBefore + " then " + codeAfter + " bytes\n" + r.describe());
        assertTrue(r.log("ticker").orElse("").contains("ready"), r::describe);
        assertTrue(r.log("dmesg.txt").orElse("").contains("rxe"), r::describe);
        assertTrue(r.console().contains("scenario exit status 3"), r::describe);
        System.out.printf("lab timings: initramfs %s s, guest boot %s s, common setup %s s, scenario %s s, VM wall %s s%n",
                res.get("host_initramfs_s"), res.get("guest_boot_s"), res.get("setup_s"), res.get("scenario_s"),
                res.get("host_vm_wall_s"));

        // Through run() the same outcome is a test failure that carries the diagnosis.
        AssertionError e = r.failure();
        assertTrue(e.getMessage().contains("FAILED with exit status 3"), e.getMessage());
        assertTrue(e.getMessage().contains("console.log"), e.getMessage());
        assertTrue(e.getMessage().contains("selftest stderr marker"), e.getMessage());
    }
}
