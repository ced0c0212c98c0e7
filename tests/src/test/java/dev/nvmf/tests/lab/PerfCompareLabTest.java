package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The kernel target (nvmet-rdma on null_blk) and our daemon (RAM namespace) side by side in one lab boot, the same
 * fio jobs over the same Soft-RoCE link (tests/lab/scenarios/perf-compare.sh). Speed is measured and printed,
 * never asserted (TCG emulation: only the ratio within one boot means anything). What is asserted: every job ran
 * on both targets, did I/O, and finished with fio error 0; both hosts' controllers crossed the veth pair; the
 * emulator's CPU (the host's count) and rxe's packet counters were read around every job; the daemon's verbs
 * downcalls were counted in every job; at QD1 the total latency's percentiles are at least the completion latency's,
 * and the guest's context switches were counted (at least one per I/O).
 */
@Tag("perf")
class PerfCompareLabTest {
    static final String[] JOBS = {"randread4k_qd32", "randwrite4k_qd32", "randread4k_qd1", "seqread128k_qd8"};

    @Test
    void kernelTargetAndDaemonSideBySide() throws IOException {
        LabRun r = LabVm.run("perf-compare.sh",
                Map.of("NVMF_BUILD_DIR", DaemonServeLabTest.buildDir(), "PERF_RUNTIME", "8", "PERF_WARMUP", "6"),
                Duration.ofMinutes(12));
        Map<String, String> res = r.results();
        assertEquals("1", res.get("jobs_ok"), r::describe);
        for (String target : new String[] {"kernel", "daemon"}) {
            assertTrue(res.getOrDefault(target + "_ctrl_address", "").contains("host_traddr=10.77.0.2"),
                    () -> target + " controller not on rxe1\n" + r.describe());
            for (String job : JOBS) {
                String key = target + "_" + job;
                assertEquals("0", res.get(key + "_err"), () -> key + " fio error\n" + r.describe());
                long ios = Long.parseLong(res.getOrDefault(key + "_ios", "0"));
                assertTrue(ios > 0, () -> key + " did no I/O\n" + r.describe());
                // The host's count of the emulator's CPU was read around the job.
                double emulatorUs = Double.parseDouble(res.getOrDefault(key + "_emulator_cpu_us_per_io", "0"));
                assertTrue(emulatorUs > 0, () -> key + ": no emulator CPU per I/O\n" + r.describe());
                // rxe's counters were read around the job: every I/O is at least a command and a response.
                long packets = Long.parseLong(res.getOrDefault(key + "_link_sent_pkts", "0"));
                assertTrue(packets >= 2 * ios, () -> key + ": " + packets + " link packets for " + ios + " I/Os\n"
                        + r.describe());
                // The emulator's translation counters were read around the job (lab_tcg_stats); flushes and
                // invalidations are counts, they never go back.
                long flushes = Long.parseLong(res.getOrDefault(key + "_tcg_tb_flush", "-1"));
                long invalidated = Long.parseLong(res.getOrDefault(key + "_tcg_tb_invalidate", "-1"));
                assertTrue(flushes >= 0 && invalidated >= 0 && res.containsKey(key + "_tcg_tlb_full_per_io"),
                        () -> key + ": no translation counters\n" + r.describe());
            }
            // The guest's context switches were counted over the job: at QD1 fio sleeps for every completion and
            // is woken by it, at least one switch per I/O on its vCPU.
            String qd1Switches = res.getOrDefault(target + "_randread4k_qd1_ctxt_per_io", "-1");
            assertTrue(Double.parseDouble(qd1Switches) >= 1.0,
                    () -> target + " QD1: " + qd1Switches + " context switches per I/O\n" + r.describe());
            // Each I/O's total latency is its submission plus its completion latency, so every percentile of the
            // total is at least the completion's: a mix-up of fio's two blocks shows here.
            String qd1 = target + "_randread4k_qd1";
            for (String p : new String[] {"p50", "p99"}) {
                long clat = Long.parseLong(res.getOrDefault(qd1 + "_clat_" + p + "_us", "-1"));
                long lat = Long.parseLong(res.getOrDefault(qd1 + "_lat_" + p + "_us", "-1"));
                assertTrue(clat > 0 && lat >= clat, () -> qd1 + " " + p + ": clat " + clat + " µs, lat " + lat
                        + " µs\n" + r.describe());
            }
        }
        // The downcall counts come from the daemon's metrics: every job polled its CQ and posted its responses.
        for (String job : JOBS) {
            for (String call : new String[] {"poll_cq", "post_send", "post_recv"}) {
                String key = "daemon_" + job + "_calls_" + call;
                long n = Long.parseLong(res.getOrDefault(key, "0"));
                assertTrue(n > 0, () -> key + " = " + n + ": the verbs calls were not scraped\n" + r.describe());
            }
        }
        assertEquals("0", res.get("daemon_exit"), () -> "daemon exit status after SIGTERM\n" + r.describe());
        Path table = r.outDir().resolve("perf-table.md");
        System.out.println(Files.exists(table) ? Files.readString(table) : "(no perf-table.md)\n" + res);
        System.out.printf("perf-compare: boot %s s, scenario %s s (jobs %s s), VM wall %s s; results in %s%n",
                res.get("guest_boot_s"), res.get("scenario_s"), res.get("jobs_s"), res.get("host_vm_wall_s"),
                r.outDir());
    }
}
