package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/** The host-side reading of a lab run's results folder, and the CI policy, without a VM (not tagged lab). */
class LabRunTest {

    @TempDir
    Path dir;

    @Test
    void resultsKeepTheLastValueAndIgnoreComments() {
        Map<String, String> m = LabRun.parseResults("# c\na=1\nb= x y \na=2\nnoequals\n");
        assertEquals(Map.of("a", "2", "b", "x y"), m);
    }

    @Test
    void deadGuestIsReportedAsSuchWithTheConsole() throws IOException {
        Files.writeString(dir.resolve("console.log"), "Kernel panic - not syncing: Attempted to kill init\n");
        LabRun r = new LabRun("x", LabRun.STATUS_NO_STATUS, dir, dir.resolve("lab-host.log"));
        assertFalse(r.guestReported());
        assertFalse(r.succeeded());
        assertTrue(r.verdict().contains("DIED"), r.verdict());
        assertTrue(r.describe().contains("Kernel panic"), r.describe());
        assertThrows(AssertionError.class, r::assertSucceeded);
    }

    @Test
    void aCrashedGuestJvmIsRecognisedAndAnOrdinaryFailureIsNot() throws IOException {
        Files.writeString(dir.resolve("status"), "1\n");
        Files.createDirectories(dir.resolve("logs"));
        Files.writeString(dir.resolve("logs/daemon.log"), "listening\nFAIL: no READY=1\n");
        LabRun r = new LabRun("x", 1, dir, dir.resolve("lab-host.log"));
        assertFalse(r.jvmCrashed(), "a scenario failure is not a JVM crash");
        Files.writeString(dir.resolve("logs/daemon.log"), "#\n# A fatal error has been detected by the Java "
                + "Runtime Environment:\n#\n#  SIGSEGV (0xb) at pc=0x00007f16145214a0\n");
        assertTrue(r.jvmCrashed(), "HotSpot's banner in a log");
        Files.writeString(dir.resolve("logs/daemon.log"), "listening\n");
        Files.writeString(dir.resolve("logs/hs_err_pid219.log"), "# SIGSEGV\n");
        assertTrue(r.jvmCrashed(), "an hs_err report among the logs");
    }

    @Test
    void aGuestJvmCrashFailsTheRunEvenWhenTheScenarioPassed() throws IOException {
        // Single-threaded TCG: a guest JVM crash is our bug until shown otherwise. No second run hides it: the run
        // fails, and the hs_err report is kept with the results and shown from its start (signal, frame).
        Files.writeString(dir.resolve("status"), "0\n");
        Files.createDirectories(dir.resolve("logs"));
        StringBuilder report = new StringBuilder("#\n# A fatal error has been detected by the Java Runtime Environment:\n"
                + "#\n#  SIGSEGV (0xb) at pc=0x00007f16145214a0, pid=219, tid=231\n#\n# Problematic frame:\n"
                + "# J 1234 c1 java.lang.String.hashCode()I (60 bytes)\n");
        for (int i = 0; i < 500; i++) {
            report.append("line ").append(i).append(" of the rest of the report\n");
        }
        Files.writeString(dir.resolve("logs/hs_err_pid219.log"), report);
        LabRun r = new LabRun("x", 0, dir, dir.resolve("lab-host.log"));
        assertTrue(r.succeeded(), "the scenario itself exited 0");
        assertEquals(java.util.List.of("hs_err_pid219.log"), r.hsErrReports());
        AssertionError e = assertThrows(AssertionError.class, r::assertSucceeded);
        assertTrue(r.verdict().contains("JVM CRASHED"), r.verdict());
        assertTrue(e.getMessage().contains("hs_err_pid219.log"), e.getMessage());
        assertTrue(e.getMessage().contains("SIGSEGV (0xb) at pc=0x00007f16145214a0"), "the report's head is shown");
        assertTrue(e.getMessage().contains("java.lang.String.hashCode()"), "the problematic frame is shown");
        assertThrows(AssertionError.class, () -> LabVm.failOnJvmCrash(r));
    }

    @Test
    void aRunWithoutACrashIsNotFailedForOne() throws IOException {
        Files.writeString(dir.resolve("status"), "0\n");
        LabRun r = new LabRun("x", 0, dir, dir.resolve("lab-host.log"));
        assertEquals(r, r.assertSucceeded());
        LabVm.failOnJvmCrash(r);
        assertTrue(r.verdict().contains("passed"), r.verdict());
    }

    @Test
    void hungVmIsReportedAsSuch() {
        LabRun r = new LabRun("x", LabRun.STATUS_VM_TIMEOUT, dir, dir.resolve("lab-host.log"));
        assertTrue(r.verdict().contains("HUNG"), r.verdict());
    }

    @Test
    void scenarioFailureShowsItsLogs() throws IOException {
        Files.writeString(dir.resolve("status"), "1\n");
        Files.writeString(dir.resolve("scenario.err"), "FAIL: nvme connect\n");
        Files.createDirectories(dir.resolve("logs"));
        Files.writeString(dir.resolve("logs/daemon.log"), "listening on 10.77.0.1:4420\n");
        Files.write(dir.resolve("logs/dmesg.txt"), new byte[] {'o', 'k', (byte) 0xff, '\n'});
        LabRun r = new LabRun("x", 1, dir, dir.resolve("lab-host.log"));
        assertTrue(r.guestReported());
        String d = r.describe();
        assertTrue(d.contains("FAILED with exit status 1"), d);
        assertTrue(d.contains("FAIL: nvme connect"), d);
        assertTrue(d.contains("logs/daemon.log") && d.contains("listening on 10.77.0.1:4420"), d);
        assertEquals("listening on 10.77.0.1:4420\n", r.log("daemon").orElseThrow());
        assertTrue(r.log("dmesg.txt").orElseThrow().startsWith("ok"));
    }

    @Test
    void unavailableLabFailsInCiAndSkipsElsewhere() {
        assertThrows(AssertionFailedError.class, () -> LabVm.unavailable("no qemu", Map.of("CI", "true")));
        assertThrows(TestAbortedException.class, () -> LabVm.unavailable("no qemu", Map.of()));
        assertThrows(TestAbortedException.class, () -> LabVm.unavailable("no qemu", Map.of("CI", "false")));
        assertTrue(LabVm.isCi(Map.of("CI", "1")));
    }
}
