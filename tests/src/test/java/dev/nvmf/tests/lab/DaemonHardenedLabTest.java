package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The daemon with exactly the privileges of systemd/nvmf-target.service, applied with setpriv and prlimit in the lab
 * guest (tests/lab/scenarios/daemon-hardened.sh): a non-root uid with the disk group, no capability in any set,
 * no_new_privs, an unlimited locked-memory limit; the Linux host does a crc32c verify on a RAM, a file and a block
 * namespace through it, and /proc shows the identity it ran with.
 */
@Tag("lab")
class DaemonHardenedLabTest {
    static final String SERVICE_UID = "61234";
    static final String NO_CAPABILITIES = "0000000000000000";

    @Test
    void theDaemonServesAsItsOwnUserWithNoCapabilities() {
        LabRun r = LabVm.run("daemon-hardened.sh", Map.of("NVMF_BUILD_DIR", DaemonServeLabTest.buildDir()),
                Duration.ofMinutes(12));
        Map<String, String> res = r.results();
        for (String key : new String[] {"daemon_ready", "connect_ok", "verify_ram_ok", "verify_file_ok",
                "verify_block_ok", "proc_groups_disk", "disk_group_needed"}) {
            assertEquals("1", res.get(key), () -> key + "\n" + r.describe());
        }
        String ids = String.join(",", SERVICE_UID, SERVICE_UID, SERVICE_UID, SERVICE_UID);
        assertEquals(ids, res.get("proc_uid"), () -> "real, effective, saved, fs uid\n" + r.describe());
        assertEquals(ids, res.get("proc_gid"), r::describe);
        for (String cap : new String[] {"cap_inh", "cap_prm", "cap_eff", "cap_bnd", "cap_amb"}) {
            assertEquals(NO_CAPABILITIES, res.get(cap), () -> cap + "\n" + r.describe());
        }
        assertEquals("1", res.get("no_new_privs"), r::describe);
        assertEquals("unlimited:unlimited", res.get("memlock_limit"), r::describe);
        // The daemon pinned more than the default limit allows: the unit's LimitMEMLOCK= is what makes it work.
        long pinned = Long.parseLong(res.get("pinned_kib"));
        long defaultLimit = Long.parseLong(res.get("default_memlock_kib"));
        assertTrue(pinned > defaultLimit, () -> "pinned " + pinned + " KiB, default limit " + defaultLimit + " KiB\n"
                + r.describe());
        // The kernel makes the RDMA device files usable by any user: no group or capability is needed for them.
        assertEquals("666", res.get("uverbs_mode"), r::describe);
        assertEquals("666", res.get("rdma_cm_mode"), r::describe);
        // Debian 12's tmpfs (Linux 6.1) refuses O_DIRECT: the file namespace there is served buffered, with a
        // warning (tmpfs takes O_DIRECT from Linux 6.6 on).
        String[] kernel = res.getOrDefault("guest_kernel", "0.0").split("[.-]");
        boolean tmpfsRefusesDirect = Integer.parseInt(kernel[0]) < 6
                || (Integer.parseInt(kernel[0]) == 6 && Integer.parseInt(kernel[1]) < 6);
        if (tmpfsRefusesDirect) {
            assertEquals("1", res.get("direct_io_refused_logged"), r::describe);
        }
        assertEquals("0", res.get("sigterm_exit"), r::describe);
        assertEquals("0", res.get("leftover_qp"), r::describe);
        assertEquals("0", res.get("leftover_cm_id"), r::describe);
    }
}
