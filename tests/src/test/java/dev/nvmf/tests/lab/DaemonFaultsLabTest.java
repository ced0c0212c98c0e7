package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Network and device faults against the daemon while the Linux host verifies data (tests/lab/scenarios/
 * daemon-faults.sh, one boot): every packet lost for 10 s, {@link #RESETS} {@code nvme reset}s in a row under I/O,
 * keep-alive expiry of a host whose path goes silent, and rxe0 removed under I/O and added back. Each is its own test.
 */
@Tag("lab")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DaemonFaultsLabTest {
    /**
     * Resets in a row. Each costs about 20 s of the emulated guest; the first few already show a reset that leaks or
     * loses a completion (the resources are compared after all of them), and the soak (scripts/soak.sh) repeats
     * them for as long as it runs. {@code -Dnvmf.lab.faultResets=20} runs more.
     */
    static final int RESETS = Integer.getInteger("nvmf.lab.faultResets", 6);

    private LabParts parts;

    @BeforeAll
    void boot() {
        LabRun r = LabVm.runAllowingFailure("daemon-faults.sh",
                Map.of("NVMF_BUILD_DIR", DaemonServeLabTest.buildDir(), "FAULT_RESETS", String.valueOf(RESETS)),
                Duration.ofMinutes(25));
        parts = new LabParts(r);
        assertEquals("1", r.results().get("daemon_ready"), r::describe);
        System.out.printf("lab: daemon-faults via %s: scenario %s s, VM wall %s s; parts (wall s): linkloss %s,"
                        + " resets %s, keepalive %s, hotremove %s%n", parts.result("launcher"),
                parts.result("faults_wall_s"), parts.result("host_vm_wall_s"), parts.result("linkloss_wall_s"),
                parts.result("resets_wall_s"), parts.result("keepalive_wall_s"), parts.result("hotremove_wall_s"));
    }

    /** netem loss 100% on both veth ends for 10 s during fio verify: reconnect, verify, nothing old left. */
    @Test
    void linkLossDuringVerify() {
        System.out.printf("lab: linkloss: host recovered %s s after the link came back (host error recoveries %s);"
                        + " verify %s; daemon counts before [%s] after [%s], settled in %s s%n",
                parts.result("linkloss_recovered_s"), parts.result("linkloss_host_reconnects"),
                parts.result("linkloss_rounds"), parts.result("linkloss_counts_before"),
                parts.result("linkloss_counts_after"), parts.result("linkloss_settle_s"));
        parts.assertPart("linkloss");
    }

    /** {@link #RESETS} nvme resets in a row while verify rounds run. */
    @Test
    void resetsUnderIo() {
        System.out.printf("lab: resets: %s done, mean %s s, max %s s back to live; verify %s%n",
                parts.result("resets_done"), parts.result("resets_mean_s"), parts.result("resets_max_s"),
                parts.result("resets_rounds"));
        parts.assertPart("resets");
        assertEquals(String.valueOf(RESETS), parts.result("resets_done"));
    }

    /** A host that stops talking is expired after KATO..2xKATO, counted, and reconnects when its path returns. */
    @Test
    void keepAliveExpiryOfASilentHost() {
        System.out.printf("lab: keepalive: expiry counted %s s after B went silent (KATO %s), teardown %s s; B back"
                        + " %s s after its path returned; A's verify %s%n", parts.result("keepalive_expiry_s"),
                parts.result("keepalive_b_kato"), parts.result("keepalive_teardown_s"),
                parts.result("keepalive_b_reconnect_s"), parts.result("keepalive_rounds_a"));
        parts.assertPart("keepalive");
        assertEquals("1", parts.result("keepalive_expiries"), "one expiry of B's controller");
        assertEquals("0", parts.result("keepalive_other_expiries"), "host A's controller did not expire");
        // KATO..2xKATO of silence after the host's last command (lib: KeepAliveTimer), measured from the moment its
        // packets started to drop (at most KATO after that last command), plus 10 s for the emulated guest's timers.
        double kato = 5;
        double expiry = Double.parseDouble(parts.result("keepalive_expiry_s"));
        assertTrue(expiry <= 2 * kato + 10, () -> "expiry after " + expiry + " s of silence, KATO " + kato + " s");
    }

    /** rdma link delete rxe0 under I/O and rdma link add: the daemon survives, tears down, listens again. */
    @Test
    void deviceHotRemoveAndReturn() {
        System.out.printf("lab: hotremove: rdma link delete took %s s, queues torn down after %s s (%s still open),"
                        + " daemon alive %s, hosts back %s s after rdma link add; verify %s%n",
                parts.result("hotremove_link_delete_s"), parts.result("hotremove_teardown_s"),
                parts.result("hotremove_queues_open"), parts.result("hotremove_daemon_alive"),
                parts.result("hotremove_reconnect_s"), parts.result("hotremove_rounds"));
        parts.assertPart("hotremove");
    }
}
