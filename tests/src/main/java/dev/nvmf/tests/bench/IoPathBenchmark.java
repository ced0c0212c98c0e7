package dev.nvmf.tests.bench;

import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.BenchmarkParams;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;

/**
 * CPU cost per I/O of the target's data path without a VM: {@link SoftBenchRig} (RDMA transport + NVMe core + RAM
 * namespace on the soft verbs provider, manual mode) and a {@link BenchQueue} keeping {@code qd} commands of 4 KiB
 * in flight at random LBAs; every turn delivers the fabric, runs the poller agent's {@code doWork()} once, takes the
 * responses and refills the queue. One thread does everything, so the time per I/O is the sum of
 * <ul>
 *   <li>the target: the poller's doWork (transport, core, RAM copy, metrics when {@code observer=metrics}), and the
 *       soft provider's post/poll calls it makes (plain Java here; FFM downcalls into libibverbs in production);</li>
 *   <li>the fabric: the soft provider moving bytes and generating completions (the NIC's job on hardware);</li>
 *   <li>the host: building capsules and polling responses.</li>
 * </ul>
 * {@link #io} measures the whole loop (ns/op = ns per completed I/O; {@code -prof gc} gives bytes per I/O for the
 * whole loop). {@link #ioBreakdown} runs the same loop with clocks and the thread's allocation counter around each
 * part and reports them per I/O as auxiliary counters: {@code pollerNs}, {@code pollerBytes} (the target's own
 * share), {@code fabricNs}, {@code hostNs}; its timers cost time of their own, so read its primary score as "with
 * instrumentation".
 *
 * <p>Ops: {@code read} (keyed SGL: the target RDMA WRITEs the data), {@code write} (data in the capsule, as the Linux
 * host sends writes up to the in-capsule size), {@code writeKeyed} (keyed SGL: the target RDMA READs the data).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms1g", "-Xmx1g"})
public class IoPathBenchmark {
    /** Completed I/Os one invocation waits for (JMH divides the time by it). */
    static final int BATCH = 256;
    static final long NAMESPACE_BYTES = 64L << 20;

    @Param({"read", "write", "writeKeyed"})
    public String op;

    /** Bytes per command: 4 KiB, or 131072 (128 KiB; {@code write} in-capsule only up to 8 KiB). */
    @Param({"4096"})
    public int bytes;

    /**
     * The transport's {@code zeroCopyRam}: keyed data moves straight to and from the RAM namespace. On by default,
     * as served ({@code RdmaTransportConfig.DEFAULT_ZERO_COPY_RAM}); {@code -p zeroCopy=false} measures the copy.
     */
    @Param({"true"})
    public boolean zeroCopy;

    /** Commands kept in flight, per connection. */
    @Param({"32"})
    public int qd;

    /**
     * I/O queues of the host's controller, each its own RDMA connection with {@code qd} commands in flight: the
     * scaling curve over connections ({@code -p connections=1,4,16,64}).
     */
    @Param({"1"})
    public int connections = 1;

    /** The transport's pollers ({@code -p pollers=1,2}); in this loop one thread runs every poller's duty cycle. */
    @Param({"1"})
    public int pollers = 1;

    /**
     * The transport's shared receive queue per poller, in receive buffers ({@code transport.srq_depth}); 0: none
     * (the default served), each connection posts receives of its own. With many connections the SRQ turns one
     * {@code post_recv} per connection per pass into one per pass ({@code -p srqDepth=0,4096}; it must exceed the
     * commands in flight, connections x qd).
     */
    @Param({"0"})
    public int srqDepth;

    /** {@code metrics}: completions recorded by the daemon's observer, as served; {@code none}: no observer. */
    @Param({"metrics"})
    public String observer;

    private SoftBenchRig rig;
    private BenchQueue[] hosts;
    private int kind;
    private long goal;
    private long rnd = 0x9E3779B97F4A7C15L;
    private long blocks;
    private int nlb;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        kind = switch (op) {
            case "read" -> 0;
            case "write" -> 1;
            case "writeKeyed" -> 2;
            default -> throw new IllegalArgumentException("op: read, write or writeKeyed, not " + op);
        };
        if (!observer.equals("metrics") && !observer.equals("none")) {
            throw new IllegalArgumentException("observer: metrics or none, not " + observer);
        }
        // Queue of 128 entries like the Linux host's default I/O queue; qd of them used.
        if (bytes % SoftBenchRig.BLOCK != 0 || bytes < SoftBenchRig.BLOCK || bytes > 128 * 1024) {
            throw new IllegalArgumentException("bytes: a multiple of 4096 up to 131072, not " + bytes);
        }
        rig = new SoftBenchRig(NAMESPACE_BYTES, Math.max(128, qd + 1), bytes, observer.equals("metrics"), zeroCopy,
                connections, pollers, srqDepth);
        hosts = rig.ios.toArray(new BenchQueue[0]);
        nlb = bytes / SoftBenchRig.BLOCK;
        blocks = NAMESPACE_BYTES / SoftBenchRig.BLOCK - nlb + 1;
        for (BenchQueue host : hosts) {
            for (int s = 0; s < qd; s++) {
                host.data(s).fill((byte) s);
                host.inCapsule(s).fill((byte) s);
            }
        }
        refill();
    }

    /** Responses taken so far, with and without success, over every connection. */
    private long done() {
        long n = 0;
        for (BenchQueue host : hosts) n += host.completed + host.failed;
        return n;
    }

    private long completed() {
        long n = 0;
        for (BenchQueue host : hosts) n += host.completed;
        return n;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        long failed = 0;
        long sendErrors = 0;
        int last = 0;
        for (BenchQueue host : hosts) {
            failed += host.failed;
            sendErrors += host.sendErrors;
            if (host.failed != 0) last = host.lastFailedStatus;
        }
        rig.close();
        if (failed != 0 || sendErrors != 0) {
            throw new IllegalStateException(failed + " commands failed (last status 0x" + Integer.toHexString(last)
                    + "), " + sendErrors + " sends failed: the numbers are not of a working I/O path");
        }
    }

    private long nextLba() {
        long x = rnd;
        x ^= x << 13;
        x ^= x >>> 7;
        x ^= x << 17;
        rnd = x;
        return (x >>> 1) % blocks;
    }

    /** Sends a command on every free slot among the first {@code qd} of each connection. */
    private void refill() {
        for (BenchQueue host : hosts) {
            for (int s = 0; s < qd; s++) {
                if (host.busy(s)) continue;
                long lba = nextLba();
                int rc = switch (kind) {
                    case 0 -> host.read(s, SoftBenchRig.NSID, lba, nlb, bytes);
                    case 1 -> host.writeInCapsule(s, SoftBenchRig.NSID, lba, nlb, bytes);
                    default -> host.writeKeyed(s, SoftBenchRig.NSID, lba, nlb, bytes);
                };
                if (rc != 0) throw new IllegalStateException("host post_send: " + rc);
            }
        }
    }

    private void checkProgress(long turnsWithoutProgress) {
        if (turnsWithoutProgress > 1_000_000) {
            StringBuilder why = new StringBuilder("no I/O completes:");
            for (BenchQueue host : hosts) {
                why.append(" (outstanding ").append(host.outstanding()).append(", failed ").append(host.failed)
                        .append(", send errors ").append(host.sendErrors).append(')');
            }
            throw new IllegalStateException(why.toString());
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long io() {
        goal += BATCH;
        long idle = 0;
        while (done() < goal) {
            if (rig.step() == 0) checkProgress(++idle);
            refill();
        }
        return completed();
    }

    /**
     * Per-I/O shares of the loop. JMH adds up an EVENTS counter over the measurement iterations of all forks, so
     * each iteration publishes its average divided by (iterations x forks): the reported sum is the mean over them
     * (the per-iteration lines JMH prints are scaled down accordingly).
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Breakdown {
        private static final com.sun.management.ThreadMXBean THREADS =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        /** Nanoseconds per I/O in Poller.doWork (transport + core + backend + provider calls it makes). */
        public double pollerNs;
        /** Bytes allocated per I/O in Poller.doWork (the target's I/O path; 0 expected once warm). */
        public double pollerBytes;
        /** Nanoseconds per I/O in the soft fabric's deliverAll (data movement, completions: the NIC's job). */
        public double fabricNs;
        /** Nanoseconds per I/O in the benchmark host (responses, new capsules). */
        public double hostNs;
        long ios;
        long poller;
        long pollerAlloc;
        long fabric;
        long hostTime;
        int iterations = 1;

        @Setup(Level.Trial)
        public void iterations(BenchmarkParams params) {
            // Summed over every measurement iteration of every fork.
            iterations = Math.max(1, params.getMeasurement().getCount()) * Math.max(1, params.getForks());
        }

        @Setup(Level.Iteration)
        public void reset() {
            pollerNs = pollerBytes = fabricNs = hostNs = 0;
            ios = poller = pollerAlloc = fabric = hostTime = 0;
        }

        void publish() {
            if (ios == 0) return;
            double per = (double) ios * iterations;
            pollerNs = poller / per;
            pollerBytes = pollerAlloc / per;
            fabricNs = fabric / per;
            hostNs = hostTime / per;
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long ioBreakdown(Breakdown b) {
        goal += BATCH;
        long done0 = done();
        long idle = 0;
        com.sun.management.ThreadMXBean threads = Breakdown.THREADS;
        while (done() < goal) {
            long t0 = System.nanoTime();
            int w = rig.fabric.deliverAll();
            long t1 = System.nanoTime();
            long a1 = threads.getCurrentThreadAllocatedBytes();
            w += rig.runPollers();
            long a2 = threads.getCurrentThreadAllocatedBytes();
            long t2 = System.nanoTime();
            w += rig.pollHosts();
            refill();
            long t3 = System.nanoTime();
            b.fabric += t1 - t0;
            b.poller += t2 - t1;
            b.pollerAlloc += a2 - a1;
            b.hostTime += t3 - t2;
            if (w == 0) checkProgress(++idle);
        }
        b.ios += done() - done0;
        b.publish();
        return completed();
    }
}
