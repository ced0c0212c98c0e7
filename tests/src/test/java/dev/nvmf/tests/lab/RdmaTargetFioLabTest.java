package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Our target end to end in the lab: LabTargetMain (NvmeTarget, a RAM namespace, RdmaTransport over the FFM
 * provider) in the guest, the Linux host (nvme-rdma) over Soft-RoCE. Discovery, connect, identify, fio crc32c
 * verify (4 KiB random, 128 KiB sequential), disconnect leaving the daemon serving, a second connect, no
 * complaint from the host driver in dmesg, and no QP/MR/cm_id left once the daemon stopped.
 */
@Tag("lab")
class RdmaTargetFioLabTest {

    @Test
    void linuxHostAgainstOurTarget() {
        LabRun r = LabVm.run("rdma-target-fio.sh", Map.of("FIO_RUNTIME", "5"), Duration.ofMinutes(13));
        Map<String, String> res = r.results();
        for (String key : new String[] {"target_ready", "discover_ok", "connect_ok", "id_ctrl_ok", "id_ns_ok",
                "list_ok", "verify_4k_ok", "verify_128k_ok", "disconnect_ok", "reconnect_ok", "dmesg_clean",
                "target_stopped"}) {
            assertEquals("1", res.get(key), () -> key + "\n" + r.describe());
        }
        // While the daemon runs with every queue released: no QP, only the listener's cm_id.
        assertEquals("0", res.get("idle_qp"), () -> "idle_qp\n" + r.describe());
        assertEquals("1", res.get("idle_cm_id"), () -> "idle_cm_id\n" + r.describe());
        for (String key : new String[] {"leftover_qp", "leftover_mr", "leftover_cm_id"}) {
            assertEquals("0", res.get(key), () -> key + "\n" + r.describe());
        }
        assertTrue(r.log("nvme-discover").orElse("").contains("nqn.2024-01.dev.nvmf:lab-java"), r::describe);
        System.out.printf("lab: our target, 4k randread QD32 = %s IOPS (emulated; compare within one machine only)%n",
                res.get("iops_randread_4k"));
    }
}
