package dev.nvmf.target.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** systemd/nvmf-target.service passes systemd-analyze verify and keeps what the daemon relies on. */
class SystemdUnitTest {
    @TempDir
    Path dir;

    static Path repositoryRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("systemd/nvmf-target.service"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("repository root not found above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    @Test
    void unitDeclaresNotifyMemlockOrderingAndNoDeviceLockdown() throws Exception {
        String unit = Files.readString(repositoryRoot().resolve("systemd/nvmf-target.service"));
        for (String line : new String[] {"Type=notify", "LimitMEMLOCK=infinity", "WatchdogSec=",
                "ExecReload=/bin/kill -HUP $MAINPID", "RestartPreventExitStatus=2 4"}) {
            assertTrue(unit.lines().anyMatch(l -> l.startsWith(line)), "missing " + line);
        }
        assertTrue(unit.lines().anyMatch(l -> l.startsWith("After=") && l.contains("network-online.target")
                && l.contains("rdma-hw.target")));
        // /dev/infiniband and block devices must stay reachable; the JIT needs W+X memory.
        for (String forbidden : new String[] {"PrivateDevices=", "MemoryDenyWriteExecute=", "DevicePolicy="}) {
            assertTrue(unit.lines().noneMatch(l -> l.startsWith(forbidden)), forbidden + " must not be set");
        }
    }

    @Test
    void systemdAnalyzeVerifyPasses() throws Exception {
        boolean ci = System.getenv("CI") != null;
        assumeTrue(onPath("systemd-analyze") || ci, "systemd-analyze not installed (apt-get install systemd)");
        Path root = repositoryRoot();
        // verify checks that ExecStart's binary exists: point it at this checkout's launcher.
        String unit = Files.readString(root.resolve("systemd/nvmf-target.service"))
                .replace("/opt/nvmf-target/bin/nvmf-target", root.resolve("bin/nvmf-target").toString());
        Path copy = dir.resolve("nvmf-target.service");
        Files.writeString(copy, unit);
        Process p = new ProcessBuilder("systemd-analyze", "verify", copy.toString()).redirectErrorStream(true)
                .start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.lines().noneMatch(l -> l.contains("nvmf-target.service")), out);
    }
}
