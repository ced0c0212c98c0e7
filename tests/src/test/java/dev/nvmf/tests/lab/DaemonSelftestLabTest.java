package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code nvmf-target selftest --device rxe0} in the lab guest (tests/lab/scenarios/daemon-selftest.sh): the verbs
 * scenario over rxe0's loopback and the NVMe connect and I/O through the daemon's transport pass, the report names
 * the device's limits, the NVMe read's response invalidates the host's window key, an unknown device is a usage
 * error that lists the devices, and nothing is left in {@code rdma resource show}.
 */
@Tag("lab")
class DaemonSelftestLabTest {
    @Test
    void selftestPassesOnSoftRoce() {
        LabRun r = LabVm.run("daemon-selftest.sh", Map.of("NVMF_BUILD_DIR", DaemonServeLabTest.buildDir()),
                Duration.ofMinutes(16));
        Map<String, String> res = r.results();
        assertEquals("0", res.get("selftest_exit"), r::describe);
        for (String key : new String[] {"selftest_pass", "verbs_pass", "nvme_pass", "limits_reported",
                "remote_invalidation", "unknown_device_listed"}) {
            assertEquals("1", res.get(key), () -> key + "\n" + r.describe());
        }
        assertEquals("0", res.get("lacks_lines"), () -> "rxe lacks nothing optional\n" + r.describe());
        assertEquals("2", res.get("unknown_device_exit"), r::describe);
        for (String key : new String[] {"leftover_qp", "leftover_cm_id"}) {
            assertEquals("0", res.get(key), () -> key + "\n" + r.describe());
        }
        String report = r.log("selftest").orElse("");
        assertTrue(report.contains("STEP send-with-inv: ok"), r::describe);
        assertTrue(report.contains("STEP nvme-disconnect: ok (both queues drained and released by the target"),
                r::describe);
        System.out.printf("lab: selftest passed on rxe0 (%s); selftest %s s, VM wall %s s%n", res.get("launcher"),
                res.get("selftest_java_s"), res.get("host_vm_wall_s"));
    }
}
