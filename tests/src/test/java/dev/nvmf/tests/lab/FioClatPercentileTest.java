package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code fio_clat_pct} of the lab's guest library ({@code tests/lab/guest/lib.sh}), run by bash on this machine:
 * perf-compare's QD1 job asks fio for the total latency's percentiles too, and then fio's terse line carries those,
 * so the completion latency's come from the normal output, in whatever unit fio chose (not tagged lab: no VM).
 */
class FioClatPercentileTest {

    @TempDir
    Path dir;

    /** fio 3.33's normal output for one read job, both blocks, with the completion latency in {@code unit}. */
    static String fioLog(String unit, int p50, int p99) {
        return "3;fio-3.33;fio-daemon-randread4k_qd1;0;0;171256;5708;1427;30001;61;14062;206.670000;141.890000\n"
                + "fio-daemon-randread4k_qd1: (groupid=0, jobs=1): err= 0: pid=612: Fri Dec  4 02:23:40 2026\n"
                + "  read: IOPS=1427, BW=5708KiB/s (5845kB/s)(167MiB/30001msec)\n"
                + "    slat (usec): min=61, max=14062, avg=206.67, stdev=141.89\n"
                + "    clat (" + unit + "): min=15, max=9650, avg=477.91, stdev=271.04\n"
                + "     lat (usec): min=443, max=14944, avg=684.58, stdev=292.97\n"
                + "    clat percentiles (" + unit + "):\n"
                + "     |  1.00th=[   21],  5.00th=[  355], 10.00th=[  359], 20.00th=[  363],\n"
                + "     | 30.00th=[  371], 40.00th=[  388], 50.00th=[ " + p50 + "], 60.00th=[  437],\n"
                + "     | 70.00th=[  482], 80.00th=[  578], 90.00th=[  709], 95.00th=[  799],\n"
                + "     | 99.00th=[" + p99 + "], 99.50th=[ 1483], 99.90th=[ 3884], 99.95th=[ 4424],\n"
                + "     | 99.99th=[ 8848]\n"
                + "    lat percentiles (usec):\n"
                + "     |  1.00th=[  453],  5.00th=[  502], 10.00th=[  519], 20.00th=[  545],\n"
                + "     | 30.00th=[  562], 40.00th=[  586], 50.00th=[  611], 60.00th=[  644],\n"
                + "     | 99.00th=[ 1401], 99.50th=[ 1598], 99.90th=[ 4015], 99.95th=[ 4555],\n"
                + "   bw (  KiB/s): min= 4215, max= 6075, per=100.00%, avg=5663.02, stdev=449.26, samples=59\n";
    }

    String clatPct(String log, String pct) throws IOException, InterruptedException {
        Path f = dir.resolve("fio.log");
        Files.writeString(f, log);
        String lib = LabVm.repoRoot().resolve("tests/lab/guest/lib.sh").toString();
        Process p = new ProcessBuilder("bash", "-c", ". \"$1\"; fio_clat_pct \"$2\" \"$3\"; echo \"V=$V\"", "bash",
                lib, f.toString(), pct).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.startsWith("V="), out);
        return out.substring(2);
    }

    @Test
    void theCompletionLatencyNotTheTotalInMicroseconds() throws Exception {
        assertEquals("400", clatPct(fioLog("usec", 400, 1090), "50.00"), "clat's p50, not lat's 611");
        assertEquals("1090", clatPct(fioLog("usec", 400, 1090), "99.00"), "clat's p99, not lat's 1401");
        assertEquals("21", clatPct(fioLog("usec", 400, 1090), "1.00"));
    }

    @Test
    void nanosecondsAndMillisecondsAreTurnedIntoMicroseconds() throws Exception {
        assertEquals("463", clatPct(fioLog("nsec", 462_700, 1_089_400), "50.00"), "rounded to the nearest µs");
        assertEquals("1089", clatPct(fioLog("nsec", 462_700, 1_089_400), "99.00"));
        assertEquals("4000", clatPct(fioLog("msec", 4, 12), "50.00"));
        assertEquals("12000", clatPct(fioLog("msec", 4, 12), "99.00"));
    }

    @Test
    void aLogWithoutTheBlockOrThePercentileGivesADash() throws Exception {
        String noBlock = fioLog("usec", 400, 1090).replace("clat percentiles", "clat pctls");
        assertEquals("-", clatPct(noBlock, "50.00"), "the lat block is not taken for the clat one");
        assertEquals("-", clatPct(fioLog("usec", 400, 1090), "99.999"));
    }
}
