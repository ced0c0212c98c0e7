package dev.nvmf.target.rdma.poller;

import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.VerbsCalls.Call;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A benchmark, not a test (tag {@code perf}, left out of the suite): the busy-poll period against QD 1 latency and
 * the poller thread's CPU, and the verbs downcalls per I/O at QD 1 and QD 32, on the automatic soft fabric with the
 * poller on its own thread (as the daemon runs it) and a host that spins on its CQ. The core is the test kit's
 * (RAM-like, completes inline). Prints a table and writes it to {@code target/busy-poll-bench.md}; the load average
 * goes with it. Run: {@code mvn -pl target-daemon test -Dgroups=perf -DexcludedGroups=none -Dtest=BusyPollBench}; only
 * some rows: {@code -Dbench.cases=0:0:read:1,0:0:read:32} (busy_poll µs, host gap µs, op, QD).
 */
@Tag("perf")
class BusyPollBench {
    private static final int WARMUP = Integer.getInteger("bench.warmup", 5000);
    private static final int IOS = Integer.getInteger("bench.ios", 20000);

    private record Result(String label, long[] lat, double pollerCpuNsPerIo, double[] callsPerIo) {}

    @Test
    void busyPollPeriods() throws Exception {
        StringBuilder out = new StringBuilder();
        out.append("load average at start: ").append(Files.readString(Path.of("/proc/loadavg")).trim()).append('\n');
        out.append("| busy_poll | host gap | op | QD | p50 us | p99 us | mean us | poller CPU ns/IO | poll_cq | empty | "
                + "post_send | post_recv | req_notify | get_cq_event | ack | epoll_wait |\n|---|---|---|---|---|---|---|"
                + "---|---|---|---|---|---|---|---|---|\n");
        String cases = System.getProperty("bench.cases", "");
        if (!cases.isBlank()) {
            // Chosen rows: busy_poll us:host gap us:op:QD, comma-separated, e.g. 0:0:read:1,0:0:read:32
            for (String c : cases.split(",")) {
                String[] f = c.trim().split(":");
                long p = Long.parseLong(f[0]) * 1000;
                long gap = Long.parseLong(f[1]) * 1000;
                int op = f[2].equals("write") ? FakeCore.OP_WRITE : FakeCore.OP_READ;
                int qd = Integer.parseInt(f[3]);
                row(out, run(p, gap, op, qd), p, gap, f[2], qd);
            }
            out.append("load average at end: ").append(Files.readString(Path.of("/proc/loadavg")).trim()).append('\n');
            System.out.println(out);
            Files.writeString(Path.of("target/busy-poll-bench.md"), out.toString());
            return;
        }
        long[] periods = {0, 10_000, 50_000, 200_000};
        for (long gap : new long[] {0, 20_000}) {
            for (long p : periods) row(out, run(p, gap, FakeCore.OP_READ, 1), p, gap, "read", 1);
        }
        for (long p : new long[] {0, 50_000}) {
            row(out, run(p, 0, FakeCore.OP_WRITE, 1), p, 0, "write", 1);
            row(out, run(p, 0, FakeCore.OP_READ, 32), p, 0, "read", 32);
            row(out, run(p, 0, FakeCore.OP_WRITE, 32), p, 0, "write", 32);
        }
        out.append("load average at end: ").append(Files.readString(Path.of("/proc/loadavg")).trim()).append('\n');
        System.out.println(out);
        Files.writeString(Path.of("target/busy-poll-bench.md"), out.toString());
    }

    private static void row(StringBuilder out, Result r, long period, long gap, String op, int qd) {
        long[] l = r.lat();
        double mean = Arrays.stream(l).average().orElse(0);
        out.append(String.format("| %dus | %dus | %s | %d | %.1f | %.1f | %.1f | %.0f |", period / 1000, gap / 1000, op,
                qd, l[l.length / 2] / 1e3, l[(int) (l.length * 0.99)] / 1e3, mean / 1e3, r.pollerCpuNsPerIo()));
        for (double c : r.callsPerIo()) out.append(String.format(" %.2f |", c));
        out.append('\n');
    }

    private static Result run(long busyPollNanos, long gapNanos, int opcode, int qd) throws Exception {
        SoftFabric fabric = SoftFabric.automatic();
        fabric.addDevice("t0", SoftTarget.TARGET_IP);
        fabric.addDevice("h0", SoftTarget.HOST_IP);
        FakeCore core = new FakeCore();
        RdmaTransport t = new RdmaTransport(fabric, RdmaTransportConfig.of(List.of(
                RdmaPortConfig.of(1, SoftTarget.TARGET_IP, SoftTarget.PORT))).withBusyPollNanos(busyPollNanos), core);
        t.start();
        ScriptedInitiator h = new ScriptedInitiator(fabric, Capsules.queueOptions(
                new InetSocketAddress(SoftTarget.HOST_IP, 0),
                new InetSocketAddress(SoftTarget.TARGET_IP, SoftTarget.PORT), 1, 64, 64));
        try {
            if (h.connect(10_000) != ScriptedInitiator.State.CONNECTED) throw new AssertionError("no connection");
            ScriptedInitiator.HostBuffer[] bufs = new ScriptedInitiator.HostBuffer[qd];
            byte[][] capsules = new byte[qd][];
            for (int i = 0; i < qd; i++) {
                bufs[i] = h.exposeBuffer(4096, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE,
                        ScriptedInitiator.HostKey.REGION);
                MemorySegment c = Capsules.command(opcode, i + 1, (long) i * 4096);
                Capsules.keyed(c, bufs[i].address(), 4096, bufs[i].rkey(), false);
                capsules[i] = c.asSlice(0, 64).toArray(JAVA_BYTE);
            }
            loop(h, capsules, WARMUP, gapNanos, null);
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            long tid = t.poller(0).thread().threadId();
            long[] before = t.poller(0).verbsCalls().snapshot();
            long cpu0 = mx.getThreadCpuTime(tid);
            long[] lat = new long[IOS];
            loop(h, capsules, IOS, gapNanos, lat);
            long cpu = mx.getThreadCpuTime(tid) - cpu0;
            long[] after = t.poller(0).verbsCalls().snapshot();
            double[] perIo = new double[after.length];
            for (int i = 0; i < perIo.length; i++) perIo[i] = (after[i] - before[i]) / (double) IOS;
            Arrays.sort(lat);
            return new Result("", lat, cpu / (double) IOS, perIo);
        } finally {
            t.stop(5000);
            h.close();
            fabric.close();
        }
    }

    /** {@code n} I/Os with every slot kept busy (QD = capsules.length); the latency of each if {@code lat}. */
    private static void loop(ScriptedInitiator h, byte[][] capsules, int n, long gapNanos, long[] lat) {
        int qd = capsules.length;
        long[] sent = new long[qd + 1];
        int issued = 0;
        int done = 0;
        for (int i = 0; i < qd && issued < n; i++, issued++) {
            sent[i + 1] = System.nanoTime();
            if (h.sendCapsule(capsules[i]) != 0) throw new AssertionError("send failed");
        }
        while (done < n) {
            ScriptedInitiator.Response r = h.pollResponse();
            if (r == null) continue;
            Cqe cqe = Cqe.of(r);
            int cid = cqe.cid();
            if (cqe.status() != 0) throw new AssertionError("status " + cqe.status());
            long now = System.nanoTime();
            if (lat != null) lat[done] = now - sent[cid];
            done++;
            if (issued < n) {
                if (gapNanos > 0) {
                    long until = now + gapNanos;
                    while (System.nanoTime() < until) h.doWork();
                }
                sent[cid] = System.nanoTime();
                if (h.sendCapsule(capsules[cid - 1]) != 0) throw new AssertionError("send failed");
                issued++;
            }
        }
    }
}
