package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * tests/lab/hw.sh, the runner for a machine with a real RDMA NIC, in the lab guest with rxe0 and rxe1 in the NIC's
 * place (tests/lab/scenarios/hw-runner.sh): its check picks the device with an address and says which; it refuses,
 * with the reason, where the kernel target or null_blk is in use; perf-compare runs through it over the devices it
 * resolved, every job on both targets doing I/O without an error, no emulator figures read (there is none on a real
 * machine); and afterwards the kernel target's configuration, null_blk, the controllers, the daemon and every
 * user-space QP and cm_id are gone.
 */
@Tag("lab")
class HwRunnerLabTest {

    @Test
    void runnerChecksRefusesRunsPerfCompareAndCleansUp() {
        LabRun r = LabVm.run("hw-runner.sh", Map.of("NVMF_BUILD_DIR", DaemonServeLabTest.buildDir()),
                Duration.ofMinutes(28));
        Map<String, String> res = r.results();
        assertEquals("0", res.get("check_rc"), r::describe);
        assertEquals("hw: ok: device rxe0 (va), targets on 10.77.0.1, host from 10.77.0.1 (rxe0): loopback through"
                + " the NIC", res.getOrDefault("check_line", "").replaceAll("; kernel .*", ""), r::describe);
        for (String[] refusal : new String[][] {{"subsys", "the kernel target already has subsystems"},
                {"port", "the kernel target already has ports"}, {"nullblk", "null_blk is loaded"}}) {
            assertEquals("77", res.get("refuse_" + refusal[0] + "_rc"), () -> refusal[0] + "\n" + r.describe());
            assertTrue(res.getOrDefault("refuse_" + refusal[0] + "_msg", "").contains(refusal[1]),
                    () -> refusal[0] + ": " + res.get("refuse_" + refusal[0] + "_msg") + "\n" + r.describe());
        }

        Path hw = r.outDir().resolve("hw");
        assertEquals("0", res.get("run_rc"), () -> "hw.sh perf-compare\n" + LabRun.read(hw.resolve("scenario.err"))
                + "\n" + r.describe());
        assertEquals("0", LabRun.read(hw.resolve("status")).strip(), r::describe);
        Map<String, String> run = LabRun.parseResults(LabRun.read(hw.resolve("results.properties")));
        assertEquals("1", run.get("hw"), run::toString);
        assertEquals("rxe0", run.get("hw_device"), run::toString);
        assertEquals("10.77.0.2", run.get("hw_host_addr"), run::toString);
        assertEquals("1", run.get("jobs_ok"), run::toString);
        for (String target : new String[] {"kernel", "daemon"}) {
            assertTrue(run.getOrDefault(target + "_ctrl_address", "").contains("host_traddr=10.77.0.2"),
                    () -> target + " controller not from the host address given\n" + run);
            for (String job : PerfCompareLabTest.JOBS) {
                String key = target + "_" + job;
                assertEquals("0", run.get(key + "_err"), () -> key + " fio error\n" + run);
                assertTrue(Long.parseLong(run.getOrDefault(key + "_ios", "0")) > 0, () -> key + " no I/O\n" + run);
                assertFalse(run.containsKey(key + "_emulator_cpu_us_per_io"), () -> key + ": an emulator read\n" + run);
            }
        }
        assertEquals("0", run.get("daemon_exit"), run::toString);
        // perftest ran between the devices the runner resolved (LAB_TARGET_IBDEV, LAB_HOST_IBDEV).
        assertTrue(Long.parseLong(run.getOrDefault("link_write4k_msgs", "0")) > 0, run::toString);
        assertTrue(LabRun.read(hw.resolve("perf-table.md")).contains("No emulation"), r::describe);
        assertTrue(LabRun.read(hw.resolve("environment.txt")).contains("device rxe0 (va), targets on 10.77.0.1,"
                + " host from 10.77.0.2 (rxe1)"), r::describe);

        for (String key : new String[] {"left_ports", "left_subsystems", "left_nullblk", "left_ctrls", "left_daemon",
                "left_qp", "left_cm_id"}) {
            assertEquals("0", res.get(key), () -> key + "\n" + r.describe());
        }
        System.out.printf("lab: hw.sh ran perf-compare in %s s (VM wall %s s)%n", run.get("scenario_s"),
                res.get("host_vm_wall_s"));
    }
}
