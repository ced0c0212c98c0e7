package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Namespace resize on reload with the Linux host (tests/lab/scenarios/daemon-resize.sh): a file and a loop-device
 * namespace grow underneath the daemon, the YAML stays the same, SIGHUP; the host's block devices show the new
 * sizes by themselves (Namespace Attribute Changed, no ns-rescan), data written before is intact and I/O beyond the
 * old end verifies.
 */
@Tag("lab")
class DaemonResizeLabTest {
    @Test
    void aGrownFileAndDeviceReachTheHostOnReload() {
        LabRun r = LabVm.run("daemon-resize.sh", Map.of("NVMF_BUILD_DIR", DaemonServeLabTest.buildDir()),
                Duration.ofMinutes(14));
        Map<String, String> res = r.results();
        for (String key : new String[] {"connect_ok", "reload_ok", "daemon_saw_file", "daemon_saw_device",
                "file_resized_on_host", "device_resized_on_host", "data_intact", "io_beyond_old_end_ok"}) {
            assertEquals("1", res.get(key), () -> key + "\n" + r.describe());
        }
        assertEquals("0", res.get("sigterm_exit"), r::describe);
    }
}
