package dev.nvmf.target.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon as a child JVM ({@code nvmf-target serve --dry-run}), driven by real signals: SIGHUP applies a good
 * file and refuses a bad one (the running configuration stays), SIGTERM stops in order with exit code 0. The
 * test is systemd: it binds NOTIFY_SOCKET and reads READY/RELOADING/STOPPING.
 */
class SighupReloadTest {
    private static final String SUB = "nqn.2024-01.dev.nvmf:reload";

    @TempDir
    Path dir;

    private static String config(boolean secondNamespace) {
        return """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - nsid: 1
                        ram_size: 1MiB
                %s
                ports:
                  - traddr: 127.0.0.1
                    subsystems: [%s]
                metrics:
                  enabled: false
                logging:
                  format: journal
                """.formatted(SUB, secondNamespace ? "      - nsid: 2\n        ram_size: 2MiB" : "", SUB);
    }

    /** Receives datagrams until one matches; fails with everything seen (and the daemon's log) otherwise. */
    private static String await(UnixDatagramSocket socket, Predicate<String> wanted, Path log) throws Exception {
        List<String> seen = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            byte[] b = socket.receive(Duration.ofMillis(500));
            if (b != null) {
                String m = new String(b, StandardCharsets.UTF_8);
                seen.add(m);
                if (wanted.test(m)) {
                    return m;
                }
            }
        }
        fail("notification not received; seen " + seen + "; daemon log:\n" + Files.readString(log));
        return null;
    }

    private static void signal(Process p, String name) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(p.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + name);
    }

    private static String classPath() {
        String surefire = System.getProperty("surefire.test.class.path");
        return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
    }

    @Test
    void sighupReloadsGoodFilesRefusesBadOnesAndSigtermStopsCleanly() throws Exception {
        Path cfg = dir.resolve("nvmf-target.yaml");
        Files.writeString(cfg, config(false));
        Path log = dir.resolve("daemon.log");
        String notifyPath = dir.resolve("notify.sock").toString();
        try (UnixDatagramSocket notify = UnixDatagramSocket.bind(notifyPath)) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-cp", classPath(),
                    "dev.nvmf.target.cli.Main", "serve", "--config", cfg.toString(), "--dry-run");
            pb.environment().put("NOTIFY_SOCKET", notifyPath);
            pb.environment().remove("JOURNAL_STREAM");
            pb.redirectErrorStream(true).redirectOutput(log.toFile());
            Process daemon = pb.start();
            try {
                assertEquals("READY=1\nSTATUS=dry run: 1 subsystems, 1 ports, serving nothing",
                        await(notify, m -> m.startsWith("READY=1"), log));

                // A good file: a namespace is added.
                Files.writeString(cfg, config(true));
                signal(daemon, "HUP");
                assertTrue(await(notify, m -> m.startsWith("RELOADING=1"), log)
                        .matches("RELOADING=1\nMONOTONIC_USEC=\\d+\nSTATUS=reloading"));
                assertEquals("READY=1\nSTATUS=dry run: 1 subsystems, 1 ports, serving nothing",
                        await(notify, m -> m.startsWith("READY=1"), log));
                String text = Files.readString(log);
                assertTrue(text.contains("<6>reload: + namespace " + SUB + " nsid 2 ram:2MiB\n"), text);
                assertTrue(text.contains("<6>dry run: apply + namespace " + SUB + " nsid 2 ram:2MiB\n"), text);

                // A bad file: refused whole, with its position; the running configuration stays.
                Files.writeString(cfg, config(true).replace("ram_size: 2MiB", "ram_size: 2MiB\n        raw: 1"));
                signal(daemon, "HUP");
                await(notify, m -> m.startsWith("RELOADING=1"), log);
                String error = cfg + ":9:9: subsystems[0].namespaces[1].raw: unknown key 'raw'";
                String refused = await(notify, m -> m.startsWith("READY=1"), log);
                assertTrue(refused.startsWith("READY=1\nSTATUS=reload refused, running configuration unchanged: "
                        + error), refused);
                text = Files.readString(log);
                assertTrue(text.contains("<4>reload refused: " + error), text);

                // Back to the good file: nothing changed relative to what runs (the bad file never applied).
                Files.writeString(cfg, config(true));
                signal(daemon, "HUP");
                await(notify, m -> m.startsWith("RELOADING=1"), log);
                await(notify, m -> m.startsWith("READY=1"), log);
                assertTrue(Files.readString(log).contains("<6>reload: no changes\n"));

                signal(daemon, "TERM");
                assertEquals("STOPPING=1\nSTATUS=stopping", await(notify, m -> m.startsWith("STOPPING=1"), log));
                assertTrue(daemon.waitFor(30, TimeUnit.SECONDS), "daemon did not exit");
                assertEquals(0, daemon.exitValue(), Files.readString(log));
                assertTrue(Files.readString(log).endsWith("<6>stopped\n"), Files.readString(log));
            } finally {
                daemon.destroyForcibly();
            }
        }
    }
}
