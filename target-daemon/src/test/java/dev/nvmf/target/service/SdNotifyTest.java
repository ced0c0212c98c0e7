package dev.nvmf.target.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** sd_notify against real AF_UNIX datagram sockets, bound by the test and read back. */
class SdNotifyTest {
    @TempDir
    Path dir;

    private static String next(UnixDatagramSocket socket) throws Exception {
        byte[] b = socket.receive(Duration.ofSeconds(5));
        assertTrue(b != null, "no datagram within 5 s");
        return new String(b, StandardCharsets.UTF_8);
    }

    @Test
    void pathSocketReceivesEveryNotification() throws Exception {
        String address = dir.resolve("notify.sock").toString();
        try (UnixDatagramSocket receiver = UnixDatagramSocket.bind(address);
             SdNotify notify = SdNotify.fromEnvironment(Map.of("NOTIFY_SOCKET", address), 42)) {
            assertTrue(notify.enabled());
            notify.ready("serving 2 subsystems on 1 port");
            assertEquals("READY=1\nSTATUS=serving 2 subsystems on 1 port", next(receiver));
            notify.status("line one\nline two");
            assertEquals("STATUS=line one line two", next(receiver));

            long before = UnixDatagramSocket.monotonicMicros();
            notify.reloading();
            String reloading = next(receiver);
            long after = UnixDatagramSocket.monotonicMicros();
            Matcher m = Pattern.compile("RELOADING=1\nMONOTONIC_USEC=(\\d+)\nSTATUS=reloading").matcher(reloading);
            assertTrue(m.matches(), reloading);
            long usec = Long.parseLong(m.group(1));
            assertTrue(usec >= before && usec <= after, usec + " not in [" + before + ", " + after + "]");

            notify.watchdog();
            assertEquals("WATCHDOG=1", next(receiver));
            notify.stopping("stopping");
            assertEquals("STOPPING=1\nSTATUS=stopping", next(receiver));
        }
    }

    @Test
    void abstractNamespaceSocket() throws Exception {
        String address = "@nvmf-target-test-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
        try (UnixDatagramSocket receiver = UnixDatagramSocket.bind(address);
             SdNotify notify = SdNotify.fromEnvironment(Map.of("NOTIFY_SOCKET", address), 42)) {
            notify.ready("up");
            assertEquals("READY=1\nSTATUS=up", next(receiver));
        }
    }

    @Test
    void monotonicClockMatchesTheKernelsUptimeClock() throws Exception {
        // CLOCK_MONOTONIC and /proc/uptime both count from boot (excluding suspend): they agree within a second.
        double uptime = Double.parseDouble(java.nio.file.Files.readString(Path.of("/proc/uptime")).split(" ")[0]);
        long mono = UnixDatagramSocket.monotonicMicros();
        assertTrue(Math.abs(mono / 1e6 - uptime) < 2.0, mono + " vs uptime " + uptime);
    }

    @Test
    void withoutNotifySocketNothingIsSent() {
        SdNotify notify = SdNotify.fromEnvironment(Map.of(), 42);
        assertFalse(notify.enabled());
        assertFalse(notify.send("READY=1"));
        assertNull(notify.watchdogInterval());
    }

    @Test
    void watchdogOnlyForOurPid() {
        assertEquals(Duration.ofSeconds(30),
                SdNotify.fromEnvironment(Map.of("WATCHDOG_USEC", "30000000", "WATCHDOG_PID", "42"), 42)
                        .watchdogInterval());
        assertEquals(Duration.ofMillis(500),
                SdNotify.fromEnvironment(Map.of("WATCHDOG_USEC", "500000"), 42).watchdogInterval());
        assertNull(SdNotify.fromEnvironment(Map.of("WATCHDOG_USEC", "30000000", "WATCHDOG_PID", "7"), 42)
                .watchdogInterval());
    }

    @Test
    void sendToAMissingSocketFailsWithoutThrowing() throws Exception {
        SdNotify notify = SdNotify.fromEnvironment(Map.of("NOTIFY_SOCKET", dir.resolve("none").toString()), 1);
        assertFalse(notify.send("READY=1"));
        try (UnixDatagramSocket s = UnixDatagramSocket.open()) {
            var e = org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class,
                    () -> s.send(dir.resolve("none").toString(), new byte[] {1}));
            assertTrue(e.getMessage().contains("No such file or directory (errno 2)"), e.getMessage());
        }
    }
}
