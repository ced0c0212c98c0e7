package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The daemon ({@code bin/nvmf-target serve --config FILE}) serving two Linux hosts at once in the lab guest
 * (tests/lab/scenarios/daemon-multihost.sh): one subsystem with a RAM and a file namespace and an allowed_hosts
 * list; a host not on the list is refused (the host driver reports "not allowed", the daemon counts it); the two
 * allowed hosts get two controllers and verify data concurrently on distinct ranges of the same namespaces with
 * mixed block sizes; {@code nvme reset} of one controller during I/O brings it back live with its data intact while
 * the other host's verify passes; {@code nvme disconnect} of one host during its I/O leaves the other host's verify
 * passing; SIGTERM exits 0; no host driver complaint; no QP or cm_id of the daemon left.
 */
@Tag("lab")
class DaemonMultiHostLabTest {

    @Test
    void twoHostsResetAndDisconnectUnderIo() {
        LabRun r = LabVm.run("daemon-multihost.sh", Map.of("NVMF_BUILD_DIR", DaemonServeLabTest.buildDir()),
                Duration.ofMinutes(16));
        Map<String, String> res = r.results();
        for (String key : new String[] {"daemon_ready", "discover_ok",
                // host C, not in allowed_hosts
                "denied_connect_failed", "denied_host_dmesg", "denied_no_ctrl", "denied_metric",
                // hosts A and B at once
                "connect_a_ok", "connect_b_ok", "two_controllers", "concurrent_verify_ok",
                // nvme reset of A under I/O
                "reset_during_io", "reset_live", "after_reset_verify_ok", "reset_other_host_ok",
                // nvme disconnect of B under I/O
                "disconnect_during_io", "daemon_alive_after_disconnect", "disconnect_other_host_ok",
                // the end
                "daemon_log_drained", "dmesg_clean"}) {
            assertEquals("1", res.get(key), () -> key + "\n" + r.describe());
        }
        assertEquals("N", res.get("multipath"), () -> "each host must see its own controller\n" + r.describe());
        assertEquals("2", res.get("controllers_metric"), r::describe);
        assertEquals("2", res.get("connected_hosts_metric"), r::describe);
        assertEquals("0", res.get("reset_rc"), () -> "nvme reset exit status\n" + r.describe());
        // The verify-only pass runs when A's writes all completed across the reset; when it ran it must have passed.
        assertTrue(Set.of("1", "skipped").contains(String.valueOf(res.get("reset_verify_only_ok"))), r::describe);
        assertEquals("0", res.get("sigterm_exit"), () -> "exit status after SIGTERM\n" + r.describe());
        // Idle (no host connected) the daemon holds no QP and only its listener's cm_id; after exit nothing.
        assertEquals("0", res.get("idle_qp"), () -> "idle_qp\n" + r.describe());
        assertEquals("1", res.get("idle_cm_id"), () -> "idle_cm_id\n" + r.describe());
        for (String key : new String[] {"leftover_qp", "leftover_cm_id"}) {
            assertEquals("0", res.get(key), () -> key + "\n" + r.describe());
        }
        String daemonLog = r.log("daemon").orElse("");
        assertTrue(daemonLog.contains("Connect refused: host_not_allowed"), r::describe);
        System.out.printf("lab: daemon-multihost via %s: reset back live in %s s (A's fio errors in the reset window:"
                        + " %s, verify-only after reset: %s); B's fio errors after its disconnect: %s; keep-alive"
                        + " expiries %s, host error recoveries %s; scenario %s s, VM wall %s s%n",
                res.get("launcher"), res.get("reset_live_s"), res.get("reset_fio_error"),
                res.get("reset_verify_only_ok"), res.get("disconnect_fio_error"), res.get("keepalive_expiries"),
                res.get("host_error_recoveries"), res.get("multihost_wall_s"), res.get("host_vm_wall_s"));
    }
}
