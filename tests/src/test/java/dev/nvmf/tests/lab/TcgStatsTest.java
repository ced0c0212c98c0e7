package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The emulator's translation counters, end to end without a VM (not tagged lab): {@code tests/lab/tcg-stats.py}
 * against a stand-in for QEMU's human monitor on a Unix socket that answers {@code info jit} as QEMU 7.2 does, and
 * the guest library's {@code lab_tcg_stats} (run by bash here) asking through the results folder. Each request
 * gets the monitor's answer of that moment, not an earlier one, and a field the monitor does not print reads -1.
 */
class TcgStatsTest {

    @TempDir
    Path dir;

    private final List<Process> processes = new ArrayList<>();
    private final AtomicInteger queries = new AtomicInteger();

    @AfterEach
    void stop() {
        processes.forEach(Process::destroyForcibly);
    }

    /** QEMU 7.2's {@code info jit} (the readline echo first), its counters growing with each query {@code n}. */
    static String infoJit(int n, boolean withElided) {
        return "info jit\u001b[K\r\n"
                + "Translation buffer state:\r\n"
                + "gen code size       " + (37_309_907 + n * 1_000_000) + "/1073736704\r\n"
                + "TB count            " + (69_230 + n * 500) + "\r\n"
                + "TB avg target size  17 max=2358 bytes\r\n"
                + "cross page TB count 204 (0%)\r\n"
                + "\r\nStatistics:\r\n"
                + "TB flush count      " + n + "\r\n"
                + "TB invalidate count " + (3312 + 7 * n) + "\r\n"
                + "TLB full flushes    " + (100 * n) + "\r\n"
                + "TLB partial flushes " + (34_508 + n) + "\r\n"
                + (withElided ? "TLB elided flushes  108340\r\n" : "")
                + "[TCG profiler not compiled]\r\n(qemu) ";
    }

    /** Serves one monitor connection: the banner, then an {@code info jit} answer per line received. */
    void monitor(ServerSocketChannel server, boolean withElided) {
        Thread t = new Thread(() -> {
            try (SocketChannel c = server.accept()) {
                c.write(StandardCharsets.UTF_8.encode("QEMU 7.2.22 monitor - type 'help' for more information\r\n"
                        + "(qemu) "));
                ByteBuffer in = ByteBuffer.allocate(256);
                StringBuilder line = new StringBuilder();
                while (c.read(in) > 0) {
                    in.flip();
                    while (in.hasRemaining()) {
                        char ch = (char) in.get();
                        if (ch != '\n') {
                            line.append(ch);
                            continue;
                        }
                        String answer = line.toString().equals("info jit")
                                ? infoJit(queries.getAndIncrement(), withElided) : "unknown command\r\n(qemu) ";
                        c.write(StandardCharsets.UTF_8.encode(answer));
                        line.setLength(0);
                    }
                    in.clear();
                }
            } catch (IOException e) {
                // the reader went away: the test is over
            }
        }, "fake-qemu-monitor");
        t.setDaemon(true);
        t.start();
    }

    String run(boolean withElided, String script) throws Exception {
        assumeTrue(new ProcessBuilder("python3", "--version").start().waitFor() == 0, "no python3 here");
        Path sock = dir.resolve("hmp");
        Path out = Files.createDirectories(dir.resolve("out"));
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(sock));
        monitor(server, withElided);
        Path reader = LabVm.repoRoot().resolve("tests/lab/tcg-stats.py");
        Process py = new ProcessBuilder("python3", reader.toString(), sock.toString(), out.toString())
                .redirectErrorStream(true).start();
        processes.add(py);
        Path stats = out.resolve("tcg-stats");
        for (int i = 0; i < 500 && Files.notExists(stats); i++) {
            Thread.sleep(20);    // the reader's first answer (seq 0): it connected and parsed
        }
        assertTrue(Files.exists(stats), "no tcg-stats from the reader");
        Path run = Files.createDirectories(dir.resolve("run"));
        String lib = LabVm.repoRoot().resolve("tests/lab/guest/lib.sh").toString();
        Process p = new ProcessBuilder("bash", "-c", "LAB_RUN=\"$2\" LAB_OUT=\"$3\"; . \"$1\"; " + script, "bash",
                lib, run.toString(), out.toString()).redirectErrorStream(true).start();
        processes.add(p);
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), text);
        server.close();
        return text;
    }

    @Test
    void eachRequestGetsTheCountersOfItsMoment() throws Exception {
        String text = run(true, "lab_tcg_stats || exit 9; echo \"1 ${TCG[tb_flush]} ${TCG[tb_invalidate]}"
                + " ${TCG[tlb_full]} ${TCG[tlb_partial]} ${TCG[tlb_elided]} ${TCG[code_bytes]} ${TCG[tb_count]}\";"
                + " lab_tcg_stats || exit 9; echo \"2 ${TCG[tb_flush]} ${TCG[tlb_full]} ${TCG[tb_count]}\";"
                + " echo \"seq $LAB_TCG_SEQ\"");
        // Query 0 answered the reader's start (seq 0); lab_tcg_stats's requests 1 and 2 got queries 1 and 2.
        assertEquals("1 1 3319 100 34509 108340 38309907 69730\n2 2 200 70230\nseq 2", text);
        assertEquals(3, queries.get(), "one query per request, none while nobody asks");
    }

    @Test
    void aCounterTheMonitorDoesNotPrintIsMinusOne() throws Exception {
        String text = run(false, "lab_tcg_stats || exit 9; echo \"${TCG[tlb_elided]} ${TCG[tlb_full]}\"");
        assertEquals("-1 100", text);
    }

    @Test
    void withoutAReaderOnTheHostThereAreNoCountersAndNoWait() throws Exception {
        Path out = Files.createDirectories(dir.resolve("bare"));
        String lib = LabVm.repoRoot().resolve("tests/lab/guest/lib.sh").toString();
        Process p = new ProcessBuilder("bash", "-c", "LAB_RUN=\"$2\" LAB_OUT=\"$2\"; . \"$1\"; "
                + "if lab_tcg_stats; then echo got; else echo none ${#TCG[@]}; fi", "bash", lib, out.toString())
                .redirectErrorStream(true).start();
        processes.add(p);
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(10, TimeUnit.SECONDS));
        assertEquals("none 0", text);
        assertTrue(Files.notExists(out.resolve("tcg-request")), "no request written when nobody answers");
    }
}
