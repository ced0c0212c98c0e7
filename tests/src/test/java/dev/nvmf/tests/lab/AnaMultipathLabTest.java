package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ANA multipath across two daemons with the Linux host's native multipath, in one boot
 * (tests/lab/scenarios/daemon-ana-multipath.sh): two daemons export the same subsystem over one file, one port
 * optimized and one non-optimized; the host shows one namespace with two paths and sends I/O down the optimized
 * one; fio crc32c verify passes across a SIGKILL of the optimized daemon (I/O moves to the other path) and the
 * killed daemon's restart (its path comes back optimized and takes the I/O again); a reload flips the states and
 * I/O follows; {@code nvmf-target ana set} makes a path inaccessible and I/O falls back to the other.
 */
@Tag("lab")
class AnaMultipathLabTest {

    @Test
    void twoDaemonsOneNamespaceFailoverReloadAndPlannedFailover() {
        LabRun r = LabVm.run("daemon-ana-multipath.sh", Map.of(), Duration.ofMinutes(25));
        Map<String, String> res = r.results();
        for (String key : new String[] {"multipath", "direct_io", "daemons_ready", "connected",
                // one disk, two paths, the optimized one used
                "one_subsystem", "two_paths", "one_namespace", "ana_a_optimized", "ana_b_non_optimized",
                "io_on_optimized",
                // SIGKILL of the optimized daemon under fio verify, and its return
                "failover_moved_to_b", "failover_fio_ok", "a_restarted", "stale_socket_replaced", "a_path_back",
                "io_back_on_a",
                // a reload flips the states; nvmf-target ana set
                "reload_flipped", "reload_io_follows", "ana_set_ok", "ana_set_flipped", "ana_set_io_follows",
                "dmesg_clean"}) {
            assertEquals("1", res.get(key), () -> key + "\n" + r.describe());
        }
        assertEquals("0", res.get("failover_fio_error"), () -> "fio saw errors across the failover\n" + r.describe());
        assertEquals("0", res.get("sigterm_a"), r::describe);
        assertEquals("0", res.get("sigterm_b"), r::describe);
        System.out.printf("lab: daemon-ana-multipath: I/O on B %s s after A's SIGKILL; A's path back %s s after its "
                        + "restart began; scenario %s s, VM wall %s s%n", res.get("failover_s"),
                res.get("a_path_back_s"), res.get("ana_wall_s"), res.get("host_vm_wall_s"));
    }
}
