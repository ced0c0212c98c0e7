package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Reference baseline in the lab: the kernel NVMe-oF target (nvmet-rdma, null_blk) and the Linux host
 * (nvme-rdma) over Soft-RoCE. Proves the harness and the initiator path our transport will serve: discovery,
 * connect, data integrity with fio verify, and a 4 KiB random-read IOPS figure to compare with (printed,
 * never asserted: emulation speed varies).
 */
@Tag("lab")
class KernelTargetFioLabTest {

    @Test
    void linuxHostConnectsToKernelTargetAndVerifiesData() {
        LabRun r = LabVm.run("kernel-target-fio.sh", Map.of("FIO_RUNTIME", "10"), Duration.ofMinutes(6));
        Map<String, String> res = r.results();
        assertEquals("1", res.get("discover_ok"), r::describe);
        assertEquals("1", res.get("connect_ok"), r::describe);
        // The host side ran on rxe1 and the target on rxe0: the I/O crossed the veth pair, not rxe loopback.
        assertTrue(res.getOrDefault("ctrl_address", "").contains("host_traddr=10.77.0.2"), r::describe);
        assertEquals("1", res.get("verify_ok"), r::describe);
        assertEquals("1", res.get("disconnect_ok"), r::describe);
        assertTrue(r.log("nvme-discover").orElse("").contains("nqn.2024-01.dev.nvmf:lab-ref"), r::describe);
        long iops = Long.parseLong(res.getOrDefault("iops_randread_4k_qd32", "0"));
        assertTrue(iops > 0, () -> "fio randread did no I/O\n" + r.describe());
        System.out.printf("lab reference: kernel nvmet-rdma, 4k randread QD32 = %d IOPS (emulated; compare within one"
                + " machine only); boot %s s, scenario %s s, VM wall %s s%n", iops, res.get("guest_boot_s"),
                res.get("scenario_s"), res.get("host_vm_wall_s"));
    }
}
