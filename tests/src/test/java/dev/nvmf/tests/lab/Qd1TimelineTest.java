package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lab's QD1 trace reader ({@code tests/lab/qd1-timeline.awk}, perf-compare's {@code PERF_TRACE=1}) on a trace
 * written here in perf script's layout, whose cycles, phases and event shares are known (not tagged lab: no VM).
 */
class Qd1TimelineTest {

    static final String POLLER = "nvmf-rdma-polle";

    @TempDir
    Path dir;

    final StringBuilder trace = new StringBuilder();

    /** One line as {@code perf script -F comm,tid,cpu,time,event,trace} prints it; {@code us}: microseconds. */
    void event(String comm, int tid, int cpu, long us, String event, String detail) {
        trace.append(String.format(Locale.ROOT, "%16s %6d [%03d] %12.6f: %30s: %s%n",
                comm, tid, cpu, us / 1e6, event, detail));
    }

    /**
     * 21 cycles of 1,000 µs on fio's vCPU 0 with the poller on vCPU 1: io_submit 100 µs, 300 µs on to the
     * poller's post_send (a write), 300 µs to the host's completion, 50 µs to io_getevents returning, 250 µs of fio.
     * Cycle 5 waits out a timer tick in io_submit (4,100 µs, everything after it 4,000 µs later); cycle 10 completes
     * before io_submit returns (no poller write: the kernel's way); cycle 3 has a softirq seen in no other cycle.
     */
    String run() throws IOException, InterruptedException {
        long t = 100_000_000;
        for (int i = 0; i < 21; i++) {
            long late = i == 5 ? 4_000 : 0;
            event("fio", 647, 0, t, "syscalls:sys_enter_io_submit", "ctx_id: 0x1, nr: 0x00000001");
            event("fio", 647, 0, t + 40, "nvme:nvme_setup_cmd", "disk=nvme1c1n1 qid=1 opcode=2 cid=" + i);
            if (i == 10) {
                event("ksoftirqd/0", 14, 0, t + 90, "nvme:nvme_complete_rq", "disk=nvme1c1n1 qid=1 cid=" + i);
                event("fio", 647, 0, t + 100, "syscalls:sys_exit_io_submit", "0x1");
            } else {
                event("fio", 647, 0, t + 100 + late, "syscalls:sys_exit_io_submit", "0x1");
                event("fio", 647, 0, t + 110 + late, "syscalls:sys_enter_io_getevents", "ctx_id: 0x1");
                event(POLLER, 268, 1, t + 400 + late, "syscalls:sys_enter_write", "fd: 0x23, count: 0x20");
                if (i == 3) {
                    event(POLLER, 268, 1, t + 420, "irq:softirq_entry", "vec=9 [action=RCU]");
                }
                event(POLLER, 268, 1, t + 700 + late, "nvme:nvme_complete_rq", "disk=nvme1c1n1 qid=1 cid=" + i);
            }
            event("fio", 647, 0, t + 750 + late, "syscalls:sys_exit_io_getevents", "0x1");
            t += 1_000 + late;
        }
        event("fio", 647, 0, t, "syscalls:sys_enter_io_submit", "ctx_id: 0x1, nr: 0x00000001");
        Path in = dir.resolve("trace-daemon-qd1.txt");
        Files.writeString(in, trace);
        Process p = new ProcessBuilder("awk", "-f", LabVm.repoRoot().resolve("tests/lab/qd1-timeline.awk").toString(),
                in.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return out;
    }

    @Test
    void cyclesMeansAndPhaseMediansAreThoseOfTheTrace() throws Exception {
        List<String> lines = run().lines().toList();
        // Means over all 21 cycles carry the tick: io_submit (20 x 100 + 4,100) / 21, cycle (20 x 1,000 + 5,000) / 21.
        assertEquals("cycles: 21; mean cycle 1190.5 us; mean io_submit (slat) 290.5 us", lines.get(0));
        assertEquals("completion (nvme_complete_rq) before io_submit returned: 1 of 21 cycles", lines.get(1));
        // Medians over the 20 cycles with a poller write between io_submit's return and the completion: the tick
        // is one cycle among them and moves no median.
        assertEquals("phase medians over 20 cycles (us): io_submit 100.0; to the response posted 300.0; to the"
                + " host's completion 300.0; to io_getevents returning 50.0; fio until its next io_submit 250.0;"
                + " cycle 1000.0", lines.get(2));
    }

    @Test
    void eventRowsAreInTheOrderOfTheirFirstTimeInACycleAndRareOnesAreLeftOut() throws Exception {
        String out = run();
        List<String> rows = out.lines().filter(l -> l.startsWith("| ") && !l.startsWith("| first")).toList();
        // Means over the cycles that had the event: exit of io_submit (20 x 100 + 4,100) / 21, enter of
        // io_getevents (19 x 110 + 4,110) / 20.
        assertEquals(List.of(
                "| 40.0 | 100% | 1.00 | fio nvme:nvme_setup_cmd [fio's vCPU] |",
                "| 290.5 | 100% | 1.00 | fio syscalls:sys_exit_io_submit [fio's vCPU] |",
                "| 310.0 | 95% | 0.95 | fio syscalls:sys_enter_io_getevents [fio's vCPU] |",
                // (19 x 400 + 4,400) / 20 and (19 x 700 + 4,700) / 20: the mean over the cycles that had it
                "| 600.0 | 95% | 0.95 | " + POLLER + " syscalls:sys_enter_write [other vCPU] |",
                "| 900.0 | 95% | 0.95 | " + POLLER + " nvme:nvme_complete_rq [other vCPU] |",
                "| 940.5 | 100% | 1.00 | fio syscalls:sys_exit_io_getevents [fio's vCPU] |"), rows, out);
        // The RCU softirq of cycle 3 and the early completion of cycle 10 are in 1 of 21 cycles each, under the
        // 5% floor.
        assertFalse(out.contains("RCU"), out);
        assertFalse(out.contains("ksoftirqd/0 nvme:nvme_complete_rq"), out);
    }
}
