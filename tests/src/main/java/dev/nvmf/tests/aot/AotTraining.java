package dev.nvmf.tests.aot;

import dev.nvmf.target.cli.Main;
import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.LoggingSection;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.daemon.DaemonRuntime;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Identify;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.service.LogSetup;
import dev.nvmf.target.service.SdNotify;
import dev.nvmf.target.service.TargetRuntime;
import dev.nvmf.target.service.TargetService;
import dev.nvmf.tests.bench.BenchQueue;
import dev.nvmf.verbs.soft.SoftFabric;
import dev.nvmf.verbs.soft.SoftResources;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The AOT cache's training workload: what {@code nvmf-target serve} does in its first minutes, on the in-process
 * soft fabric, so that the JDK records the classes it loads and links and the profiles of its hot methods (JEP 483,
 * JEP 515). {@code bin/nvmf-target --aot-train} runs it at package time through
 * {@link dev.nvmf.target.aot.TrainingLauncher}; docs/performance.md has what it buys.
 *
 * <p>In order: the command line ({@code --help}, {@code check-config}, {@code devices}); then the service as
 * {@code serve} runs it (configuration file, logging, metrics listener, {@link TargetService} with the production
 * {@link DaemonRuntime}: the real transport, NVMe core and RAM backends, only the verbs provider is the soft
 * fabric); a discovery controller as {@code nvme discover} uses it; two hosts, each with the admin commands the
 * Linux host sends at connect and two I/O queues; reads, in-capsule and keyed writes, flushes and write zeroes of
 * 4 KiB to 128 KiB for {@code seconds} (default 6), with SMART log reads and metrics scrapes going on;
 * a reload that adds a namespace to the first subsystem (its host gets the namespace-change event and reads the
 * changed list); then disconnects and an orderly stop. {@link #main} also has a measuring mode for
 * scripts/bench.sh aot. Any failed command or step throws: a training that did not do its work would
 * record a cache of the wrong paths.
 *
 * <p>The workload touches only what {@code serve} would; its own helpers (the soft fabric, {@link BenchQueue}) come
 * from the training kit's class loader and so stay out of the cache's application classes.
 */
public final class AotTraining {
    static final String TARGET_IP = "10.0.0.1";
    static final String HOST_IP = "10.0.0.2";
    static final int PORT = 4420;
    static final String SUB_A = "nqn.2024-01.dev.nvmf:aot-training-a";
    static final String SUB_B = "nqn.2024-01.dev.nvmf:aot-training-b";
    static final String HOST_A = "nqn.2014-08.org.nvmexpress:uuid:a07a0000-0000-4000-8000-00000000000a";
    static final String HOST_B = "nqn.2014-08.org.nvmexpress:uuid:a07a0000-0000-4000-8000-00000000000b";
    static final int BLOCK = 512;
    static final long NAMESPACE_BYTES = 64L << 20;
    static final int IO_DEPTH = 32;
    static final int IO_OUTSTANDING = 16;
    static final int MAX_IO = 128 << 10;
    /** The admin slot that holds the outstanding Asynchronous Event Request. */
    static final int AER_SLOT = 31;
    static final long STEP_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** What the workload did; printed at the end and checked by its test. */
    public static final class Counts {
        public long reads;
        public long writes;
        public long keyedWrites;
        public long flushes;
        public long writeZeroes;
        public long adminCommands;
        public long scrapes;
        public long events;
        /** What the soft fabric still held after the stop ({@link SoftResources#toString}), or null: nothing. */
        public String leaked;

        long io() {
            return reads + writes + keyedWrites + flushes + writeZeroes;
        }

        @Override
        public String toString() {
            return io() + " I/Os (" + reads + " reads, " + writes + " in-capsule writes, " + keyedWrites
                    + " keyed writes, " + flushes + " flushes, " + writeZeroes + " write zeroes), " + adminCommands
                    + " admin commands, " + events + " namespace events, " + scrapes + " metrics scrapes";
        }
    }

    private final Duration ioTime;
    private final Path dir;
    /** Measuring (see {@link #main}): the launch time in epoch milliseconds; training: -1. */
    private final long launched;
    private final Counts counts = new Counts();
    /** The CM answers within the Linux host's 3 s on a quiet machine; a loaded build machine must not fail the build. */
    private final SoftFabric fabric = SoftFabric.automatic().cmTimeout(Duration.ofSeconds(60));
    private long seed = 0x5DEECE66DL;

    AotTraining(Duration ioTime, Path dir, long launched) {
        this.ioTime = ioTime;
        this.dir = dir;
        this.launched = launched;
    }

    private boolean measuring() {
        return launched >= 0;
    }

    /** A measurement line: milliseconds since the launch, and the CPU the JVM and its JIT compilers used so far. */
    private void mark(String what) {
        if (measuring()) {
            long[] cpu = cpuMillis();
            System.out.println("aot measure: " + what + " " + (System.currentTimeMillis() - launched) + " ms, cpu "
                    + cpu[0] + " ms, jit " + cpu[1] + " ms");
        }
    }

    /**
     * CPU milliseconds (user + system) of this process and of its C1/C2 compiler threads, from /proc: CPU time is
     * what a loaded machine disturbs least. {-1, -1} where there is no /proc.
     */
    static long[] cpuMillis() {
        long ticksPerSecond = 100; // USER_HZ on Linux
        try {
            long process = utimeStime(Files.readString(Path.of("/proc/self/stat")));
            long jit = 0;
            try (var tasks = Files.list(Path.of("/proc/self/task"))) {
                for (Path t : tasks.toList()) {
                    try {
                        if (Files.readString(t.resolve("comm")).matches("C[12] Compiler.*\\s*")) {
                            jit += utimeStime(Files.readString(t.resolve("stat")));
                        }
                    } catch (IOException gone) {
                        // the thread ended meanwhile
                    }
                }
            }
            return new long[] {process * 1000 / ticksPerSecond, jit * 1000 / ticksPerSecond};
        } catch (IOException | RuntimeException e) {
            return new long[] {-1, -1};
        }
    }

    /** Fields 14 and 15 (utime, stime) of a /proc stat line; the command name may hold spaces, so after ") ". */
    private static long utimeStime(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(") ") + 2).trim().split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
    }

    /**
     * {@code [SECONDS]}: the training, with an I/O phase of that many seconds (default 6).
     * {@code measure SECONDS LAUNCHED_EPOCH_MILLIS}: the start-up and warm-up measurement of scripts/bench.sh aot
     * instead: the same service and hosts without the command line, discovery and reload; it prints when the
     * service was ready and the hosts connected (milliseconds after the launch time given, taken by the script just
     * before it started the JVM) and the completed I/Os of every second.
     */
    public static void main(String[] args) throws Exception {
        boolean measure = args.length > 0 && args[0].equals("measure");
        int first = measure ? 1 : 0;
        double seconds = args.length > first ? Double.parseDouble(args[first]) : 6;
        long launched = measure && args.length > 2 ? Long.parseLong(args[2]) : System.currentTimeMillis();
        Path dir = Files.createTempDirectory("nvmf-aot-training");
        try {
            AotTraining t = new AotTraining(Duration.ofMillis((long) (seconds * 1000)), dir, measure ? launched : -1);
            if (!measure) {
                t.commandLine();
            }
            t.serve();
            System.out.println("aot training: " + t.counts);
            if (t.counts.leaked != null) {
                System.out.println("aot training: WARNING: the soft fabric still holds " + t.counts.leaked);
            }
        } finally {
            try (var files = Files.list(dir)) {
                for (Path p : files.toList()) {
                    Files.deleteIfExists(p);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /** Runs the training in {@code dir} (its configuration files); returns what it did. */
    public static Counts run(Duration ioTime, Path dir) throws Exception {
        AotTraining t = new AotTraining(ioTime, dir, -1);
        t.commandLine();
        t.serve();
        return t.counts;
    }

    // ------------------------------------------------------------------------------------------ command line

    private void commandLine() throws IOException {
        Path example = dir.resolve("check.yaml");
        Files.writeString(example, config("0.0.0.0", 9464, false));
        PrintWriter sink = new PrintWriter(OutputStream.nullOutputStream(), true);
        expect(0, Main.run(new String[] {"--help"}, sink, sink), "--help");
        expect(0, Main.run(new String[] {"check-config", example.toString()}, sink, sink), "check-config");
        // The FFM provider's bindings to rdma-core; the build machine may have no libibverbs or no device, so any
        // exit code is fine: what is loaded and linked on the way is what counts.
        Main.run(new String[] {"devices"}, sink, sink);
    }

    // ------------------------------------------------------------------------------------------ serve

    private void serve() throws Exception {
        fabric.addDevice("t0", TARGET_IP);
        fabric.addDevice("h0", HOST_IP);
        int metricsPort = freePort();
        Path file = dir.resolve("serve.yaml");
        Files.writeString(file, config(TARGET_IP, metricsPort, false));
        TargetConfig cfg = ConfigLoader.load(file, ConfigLoader.Options.NO_DEVICE_CHECK).config();
        LogSetup.configure(LoggingSection.defaults(), Map.of(), System.err);
        LogSetup.configure(cfg.logging(), Map.of(), System.err);
        TargetMetrics metrics = new TargetMetrics();
        Watched runtime = new Watched(new DaemonRuntime(DaemonRuntime.Options.of(fabric), metrics));
        TargetService service = new TargetService(file, runtime, metrics,
                SdNotify.fromEnvironment(Map.of(), ProcessHandle.current().pid()), Duration.ofSeconds(10));
        int[] exit = {-1};
        Thread control = new Thread(() -> exit[0] = service.run(cfg), "aot-training-control");
        control.start();
        while (!runtime.started.await(100, TimeUnit.MILLISECONDS)) {
            if (!control.isAlive()) {
                throw new IllegalStateException("serve ended before it was ready: exit " + exit[0]);
            }
        }
        mark("ready");
        InetSocketAddress src = new InetSocketAddress(HOST_IP, 0);
        InetSocketAddress dst = new InetSocketAddress(TARGET_IP, PORT);

        if (!measuring()) {
            discover(src, dst);
        }
        List<Host> hosts = List.of(new Host(SUB_A, HOST_A), new Host(SUB_B, HOST_B));
        for (Host h : hosts) {
            h.connect(src, dst);
        }
        mark("connected");
        long start = System.nanoTime();
        long end = start + ioTime.toNanos();
        long reloadAt = measuring() ? Long.MAX_VALUE : start + ioTime.toNanos() / 2;
        long nextTick = start;
        long nextSecond = start + TimeUnit.SECONDS.toNanos(1);
        long doneBefore = 0;
        int second = 0;
        boolean reloaded = measuring();
        while (System.nanoTime() - end < 0) {
            for (Host h : hosts) {
                h.io();
            }
            long now = System.nanoTime();
            if (measuring() && now - nextSecond >= 0) {
                long done = 0;
                for (Host h : hosts) {
                    done += h.completed();
                }
                long[] cpu = cpuMillis();
                System.out.println("aot measure: second " + ++second + " " + (done - doneBefore) + " I/Os, cpu "
                        + cpu[0] + " ms, jit " + cpu[1] + " ms");
                doneBefore = done;
                nextSecond += TimeUnit.SECONDS.toNanos(1);
            }
            if (!measuring() && now - nextTick >= 0) {
                // What runs beside the I/O: monitoring (nvme smart-log) and a Prometheus scrape. (No Keep Alive:
                // these hosts connect with KATO 0, as nvme discover does, and the traffic resets the timer anyway.)
                for (Host h : hosts) {
                    h.admin(Opcodes.ADMIN_GET_LOG_PAGE, Identify.NSID_ALL, logPage(LogPages.LID_SMART_HEALTH,
                            LogPages.SMART_SIZE), 0, LogPages.SMART_SIZE);
                }
                scrape(metricsPort);
                nextTick = now + TimeUnit.MILLISECONDS.toNanos(500);
            }
            if (!reloaded && now - reloadAt >= 0) {
                reloaded = true;
                Files.writeString(file, config(TARGET_IP, metricsPort, true));
                service.requestReload();
                awaitLatch(runtime.applied, "the reload to apply");
                hosts.get(0).namespaceEvent(); // subsystem A got the namespace; B is unchanged
            }
        }
        for (Host h : hosts) {
            h.close();
        }
        service.requestStop();
        control.join(TimeUnit.SECONDS.toMillis(30));
        if (control.isAlive()) {
            throw new IllegalStateException("serve did not stop within 30 s");
        }
        expect(0, exit[0], "serve's exit code");
        if (!reloaded) {
            throw new IllegalStateException("the I/O phase ended before the reload");
        }
        SoftResources left = fabric.resources();
        counts.leaked = left.nothingLeaked() ? null : left.toString();
        fabric.close();
    }

    /** {@code nvme discover}: Connect to the discovery controller, enable it, Identify, the discovery log. */
    private void discover(InetSocketAddress src, InetSocketAddress dst) {
        BenchQueue d = new BenchQueue(fabric, src, dst, 0, 32, 4096);
        try {
            d.rdmaConnect(AotTraining::idle);
            expect(0, d.nvmeConnect(DiscoveryLog.DISCOVERY_NQN, HOST_A, 0xFFFF, AotTraining::idle),
                    "discovery Connect");
            sync(d, 0, d.propertyGet(0, Properties.CAP, true), "Property Get CAP");
            expect(0, d.enableController(AotTraining::idle), "discovery CC.EN");
            sync(d, 0, d.command(0, Opcodes.ADMIN_IDENTIFY, 0, Identify.CNS_CONTROLLER, 0, Identify.DATA_SIZE),
                    "discovery Identify");
            sync(d, 0, d.command(0, Opcodes.ADMIN_GET_LOG_PAGE, 0, logPage(LogPages.LID_DISCOVERY, 1024), 0, 1024),
                    "discovery log page");
        } finally {
            d.close();
        }
    }

    /** One host: an admin queue with the Linux host's connect-time commands, and two I/O queues. */
    private final class Host {
        final String subnqn;
        final String hostnqn;
        BenchQueue admin;
        final List<BenchQueue> queues = new ArrayList<>();
        int nextOp;

        Host(String subnqn, String hostnqn) {
            this.subnqn = subnqn;
            this.hostnqn = hostnqn;
        }

        void connect(InetSocketAddress src, InetSocketAddress dst) {
            admin = new BenchQueue(fabric, src, dst, 0, 32, 4096);
            admin.rdmaConnect(AotTraining::idle);
            expect(0, admin.nvmeConnect(subnqn, hostnqn, 0xFFFF, AotTraining::idle), "admin Connect");
            int cntlid = admin.lastResult0 & 0xFFFF;
            sync(admin, 0, admin.propertyGet(0, Properties.CAP, true), "Property Get CAP");
            sync(admin, 0, admin.propertyGet(0, Properties.VS, false), "Property Get VS");
            expect(0, admin.enableController(AotTraining::idle), "Property Set CC.EN");
            sync(admin, 0, admin.propertyGet(0, Properties.CSTS, false), "Property Get CSTS");
            admin(Opcodes.ADMIN_IDENTIFY, 0, Identify.CNS_CONTROLLER, 0, Identify.DATA_SIZE);
            admin(Opcodes.ADMIN_SET_FEATURES, 0, Features.FID_NUMBER_OF_QUEUES, 1 | (1 << 16), 0);
            admin(Opcodes.ADMIN_SET_FEATURES, 0, Features.FID_ASYNC_EVENT_CONFIGURATION, 1 << 8, 0);
            admin(Opcodes.ADMIN_GET_FEATURES, 0, Features.FID_KEEP_ALIVE_TIMER, 0, 0);
            admin(Opcodes.ADMIN_IDENTIFY, 0, Identify.CNS_ACTIVE_NAMESPACE_LIST, 0, Identify.DATA_SIZE);
            admin(Opcodes.ADMIN_IDENTIFY, 1, Identify.CNS_NAMESPACE, 0, Identify.DATA_SIZE);
            admin(Opcodes.ADMIN_IDENTIFY, 1, Identify.CNS_NAMESPACE_DESCRIPTORS, 0, Identify.DATA_SIZE);
            admin(Opcodes.ADMIN_GET_LOG_PAGE, 0,
                    logPage(LogPages.LID_ERROR_INFORMATION, LogPages.ERROR_ENTRY_SIZE), 0, LogPages.ERROR_ENTRY_SIZE);
            admin(Opcodes.ADMIN_GET_LOG_PAGE, 0, logPage(LogPages.LID_COMMANDS_SUPPORTED_EFFECTS,
                    LogPages.EFFECTS_SIZE), 0, LogPages.EFFECTS_SIZE);
            armEvent();
            for (int qid = 1; qid <= 2; qid++) {
                BenchQueue q = new BenchQueue(fabric, src, dst, qid, IO_DEPTH, MAX_IO);
                q.rdmaConnect(AotTraining::idle);
                expect(0, q.nvmeConnect(subnqn, hostnqn, cntlid, AotTraining::idle), "I/O queue Connect");
                q.completed = 0;
                queues.add(q);
            }
        }

        /** I/O commands completed on this host's queues. */
        long completed() {
            long n = 0;
            for (BenchQueue q : queues) {
                n += q.completed;
            }
            return n;
        }

        /** A synchronous admin command on slot 0. */
        void admin(int opcode, int nsid, int cdw10, int cdw11, int bytes) {
            sync(admin, 0, admin.command(0, opcode, nsid, cdw10, cdw11, bytes), "admin opcode 0x"
                    + Integer.toHexString(opcode));
            counts.adminCommands++;
        }

        void armEvent() {
            expect(0, admin.command(AER_SLOT, Opcodes.ADMIN_ASYNC_EVENT_REQUEST, 0, 0, 0, 0), "post AER");
        }

        /** After a reload that added a namespace: the event arrives, the host reads the changed list, re-arms. */
        void namespaceEvent() {
            long deadline = System.nanoTime() + STEP_NANOS;
            while (admin.busy(AER_SLOT)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(subnqn + ": no namespace-change event after the reload");
                }
                admin.poll();
                for (BenchQueue q : queues) {
                    q.poll();
                }
            }
            counts.events++;
            admin(Opcodes.ADMIN_GET_LOG_PAGE, 0, logPage(LogPages.LID_CHANGED_NAMESPACE_LIST,
                    LogPages.CHANGED_NAMESPACE_LIST_SIZE), 0, LogPages.CHANGED_NAMESPACE_LIST_SIZE);
            admin(Opcodes.ADMIN_IDENTIFY, 0, Identify.CNS_ACTIVE_NAMESPACE_LIST, 0, Identify.DATA_SIZE);
            admin(Opcodes.ADMIN_IDENTIFY, 2, Identify.CNS_NAMESPACE, 0, Identify.DATA_SIZE);
            armEvent();
        }

        /** Polls every I/O queue and tops it up to {@link #IO_OUTSTANDING} commands of the mix. */
        void io() {
            for (BenchQueue q : queues) {
                q.poll();
                if (q.failed != 0) {
                    throw new IllegalStateException(subnqn + ": I/O failed with status 0x"
                            + Integer.toHexString(q.lastFailedStatus));
                }
                for (int slot = 0; slot < IO_DEPTH - 1 && q.outstanding() < IO_OUTSTANDING; slot++) {
                    if (!q.busy(slot)) {
                        expect(0, submit(q, slot), "post I/O");
                    }
                }
            }
            admin.poll();
        }

        /** The mix: mostly 4 KiB reads and writes, some 128 KiB reads and 64 KiB writes, flush, write zeroes. */
        private int submit(BenchQueue q, int slot) {
            int op = nextOp++ % 20;
            long lba = lba();
            if (op < 8) {
                counts.reads++;
                return q.read(slot, 1, lba, 4096 / BLOCK, 4096);
            } else if (op < 12) {
                counts.writes++;
                return q.writeInCapsule(slot, 1, lba, 4096 / BLOCK, 4096);
            } else if (op < 15) {
                counts.keyedWrites++;
                return q.writeKeyed(slot, 1, lba, 4096 / BLOCK, 4096);
            } else if (op < 17) {
                counts.reads++;
                return q.read(slot, 1, lba, MAX_IO / BLOCK, MAX_IO);
            } else if (op == 17) {
                counts.keyedWrites++;
                return q.writeKeyed(slot, 1, lba, (64 << 10) / BLOCK, 64 << 10);
            } else if (op == 18) {
                counts.flushes++;
                return q.command(slot, Opcodes.IO_FLUSH, 1, 0, 0, 0);
            } else {
                counts.writeZeroes++;
                return q.command(slot, Opcodes.IO_WRITE_ZEROES, 1, (int) lba, (int) (lba >>> 32), 0);
            }
        }

        void close() {
            for (BenchQueue q : queues) {
                drain(q);
                q.close();
            }
            drain(admin);
            admin.close();
        }

        /** Waits for everything but the outstanding event request to complete. */
        private void drain(BenchQueue h) {
            long deadline = System.nanoTime() + STEP_NANOS;
            int keep = h == admin && admin.busy(AER_SLOT) ? 1 : 0;
            while (h.outstanding() > keep) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException(subnqn + ": " + h.outstanding() + " commands never completed");
                }
                h.poll();
            }
        }
    }

    /** A random 128 KiB-aligned LBA of the namespace, so that every transfer fits. */
    private long lba() {
        seed = seed * 6364136223846793005L + 1442695040888963407L;
        long chunks = NAMESPACE_BYTES / MAX_IO;
        return Long.remainderUnsigned(seed >>> 17, chunks) * (MAX_IO / BLOCK);
    }

    /** CDW10 of Get Log Page: the log page id and the number of dwords minus one (NUMDL). */
    private static int logPage(int lid, int bytes) {
        return lid | ((bytes / 4 - 1) << 16);
    }

    /** Waits for the command just posted on {@code slot} and checks its status. */
    private static void sync(BenchQueue h, int slot, int postRc, String what) {
        expect(0, postRc, what + ": post_send");
        long failedBefore = h.failed;
        long deadline = System.nanoTime() + STEP_NANOS;
        while (h.busy(slot)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(what + ": no response");
            }
            h.poll();
        }
        if (h.failed != failedBefore) {
            throw new IllegalStateException(what + ": status 0x" + Integer.toHexString(h.lastFailedStatus));
        }
    }

    /** The automatic fabric moves work on every call into it: the host's own polling is the whole pump. */
    private static void idle() {
        Thread.onSpinWait();
    }

    private static void expect(int expected, int actual, String what) {
        if (actual != expected) {
            throw new IllegalStateException(what + ": got " + actual + ", expected " + expected);
        }
    }

    private static void awaitLatch(CountDownLatch latch, String what) throws InterruptedException {
        if (!latch.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("timed out waiting for " + what);
        }
    }

    /** A Prometheus scrape, as plain HTTP/1.1 on a socket (no HTTP client: its classes would join the cache). */
    private void scrape(int port) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(30_000);
            s.getOutputStream().write(("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            String head = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
            if (!head.startsWith("HTTP/1.1 200")) {
                throw new IllegalStateException("metrics scrape: " + head);
            }
            in.transferTo(OutputStream.nullOutputStream());
        }
        counts.scrapes++;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Two subsystems on one port, RAM namespaces, metrics on; {@code second} adds namespace 2 to the first. */
    private static String config(String traddr, int metricsPort, boolean second) {
        String extra = second ? """
                      - nsid: 2
                        ram_size: 16MiB
                """ : "";
        return """
                hosts:
                  - nqn: %s
                  - nqn: %s
                subsystems:
                  - nqn: %s
                    allow_any_host: false
                    allowed_hosts: [%s]
                    namespaces:
                      - nsid: 1
                        ram_size: %d
                %s  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - nsid: 1
                        ram_size: %d
                ports:
                  - id: 1
                    traddr: %s
                    trsvcid: %d
                    subsystems: [%s, %s]
                metrics:
                  enabled: true
                  listen: 127.0.0.1:%d
                logging:
                  level: info
                  format: plain
                """.formatted(HOST_A, HOST_B, SUB_A, HOST_A, NAMESPACE_BYTES, extra, SUB_B, NAMESPACE_BYTES, traddr,
                PORT, SUB_A, SUB_B, metricsPort);
    }

    /** The production runtime, with latches for "started" (READY=1 follows) and "reload applied". */
    private static final class Watched implements TargetRuntime {
        final TargetRuntime delegate;
        final CountDownLatch started = new CountDownLatch(1);
        final CountDownLatch applied = new CountDownLatch(1);

        Watched(TargetRuntime delegate) {
            this.delegate = delegate;
        }

        @Override
        public void start(TargetConfig config) throws Exception {
            delegate.start(config);
            started.countDown();
        }

        @Override
        public void apply(ConfigDiff diff, TargetConfig newConfig) throws Exception {
            delegate.apply(diff, newConfig);
            applied.countDown();
        }

        @Override
        public String status() {
            return delegate.status();
        }

        @Override
        public boolean healthy() {
            return delegate.healthy();
        }

        @Override
        public void stop(Duration timeout) {
            delegate.stop(timeout);
        }
    }
}
