package dev.nvmf.tests.bench;

import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.core.NvmeTarget;
import dev.nvmf.target.core.TargetObserver;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.NamespaceObserver;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.daemon.DaemonRuntime;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.verbs.soft.SoftFabric;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The target's I/O path without a VM: the RDMA transport, the NVMe core and a RAM namespace on the in-process soft
 * verbs provider in manual mode, and one {@link BenchQueue} I/O queue connected to it. Nothing runs on its own:
 * {@link #step()} delivers what the fabric has in flight, runs the poller agent's duty cycle once (through its
 * {@code AgentInvoker}), and polls the host. All on the caller's thread, so a benchmark sees every cycle.
 *
 * <p>With {@code daemonMetrics} the core reports every completion to the daemon's own observer (latency histogram,
 * bytes and error counters per namespace and opcode), as {@code nvmf-target serve} does. That observer is created
 * only by {@link DaemonRuntime#start}, so it is taken from a throw-away runtime started on a separate automatic soft
 * fabric (and stopped again) together with its namespace's pre-resolved meters.
 */
public final class SoftBenchRig implements AutoCloseable {
    public static final String TARGET_IP = "10.0.0.1";
    public static final String HOST_IP = "10.0.0.2";
    public static final int PORT = 4420;
    public static final String SUBNQN = "nqn.2024-01.dev.nvmf:bench";
    public static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:0b0e0c0a-0000-4000-8000-00000000be0c";
    public static final int NSID = 1;
    public static final int BLOCK = 4096;

    /** The target's INFO lines (listening, namespace added, stopped) would land in the benchmark's output. */
    private static final Logger QUIET = Logger.getLogger("dev.nvmf");

    static {
        QUIET.setLevel(Level.WARNING);
    }

    public final SoftFabric fabric = SoftFabric.manual();
    public final NvmeTarget target = new NvmeTarget();
    public final RamBackend ram;
    public final RdmaTransport transport;
    public final BenchQueue admin;
    /** The first I/O queue ({@code ios.get(0)}). */
    public final BenchQueue io;
    /** Every I/O queue, each its own RDMA connection of the one controller (qid 1, 2, ...). */
    public final List<BenchQueue> ios;
    private final BenchQueue[] ioArray;
    private final Runnable pump = this::pumpOnce;

    /**
     * @param namespaceBytes size of the RAM namespace
     * @param queueDepth     entries of the I/O queue (outstanding commands stay below it)
     * @param maxIoBytes     largest transfer a command of the benchmark moves
     * @param daemonMetrics  record completions as the daemon does (see the class comment)
     */
    public SoftBenchRig(long namespaceBytes, int queueDepth, int maxIoBytes, boolean daemonMetrics) throws Exception {
        this(namespaceBytes, queueDepth, maxIoBytes, daemonMetrics, RdmaTransportConfig.DEFAULT_ZERO_COPY_RAM);
    }

    /** @param zeroCopy the transport's {@code zeroCopyRam}: keyed data straight to and from the RAM namespace */
    public SoftBenchRig(long namespaceBytes, int queueDepth, int maxIoBytes, boolean daemonMetrics, boolean zeroCopy)
            throws Exception {
        this(namespaceBytes, queueDepth, maxIoBytes, daemonMetrics, zeroCopy, 1, 1);
    }

    /**
     * @param ioQueues I/O queues (connections) of the one controller, 1 to 128, each of {@code queueDepth} entries;
     *                 the transport's CQ size is raised so that they all fit on one poller, as an operator sets
     *                 {@code transport.cq_size} for many connections
     * @param pollers  the transport's pollers; the CM agent spreads the queues over them
     */
    public SoftBenchRig(long namespaceBytes, int queueDepth, int maxIoBytes, boolean daemonMetrics, boolean zeroCopy,
                        int ioQueues, int pollers) throws Exception {
        this(namespaceBytes, queueDepth, maxIoBytes, daemonMetrics, zeroCopy, ioQueues, pollers, 0);
    }

    /**
     * @param srqDepth the transport's shared receive queue per poller ({@code transport.srq_depth}); 0: none, each
     *                 queue posts receives of its own
     */
    public SoftBenchRig(long namespaceBytes, int queueDepth, int maxIoBytes, boolean daemonMetrics, boolean zeroCopy,
                        int ioQueues, int pollers, int srqDepth) throws Exception {
        if (ioQueues < 1 || ioQueues > 128) throw new IllegalArgumentException("ioQueues 1..128: " + ioQueues);
        fabric.addDevice("t0", TARGET_IP);
        fabric.addDevice("h0", HOST_IP);
        target.addPort(new Port(1, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, TARGET_IP,
                Integer.toString(PORT), 8192, 1024));
        Subsystem sub = target.addSubsystem(SubsystemConfig.of(SUBNQN, "BENCH0001").withAllowAnyHost(true));
        ram = new RamBackend(namespaceBytes);
        Namespace ns = sub.addNamespace(NamespaceConfig.of(NSID, BLOCK), ram);
        if (daemonMetrics) {
            Object[] observerAndMeters = daemonObserver();
            target.observer((TargetObserver) observerAndMeters[0]);
            ns.observer((NamespaceObserver) observerAndMeters[1]);
        }
        target.exposeSubsystem(1, SUBNQN);
        RdmaTransportConfig config = RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, TARGET_IP, PORT)))
                .withZeroCopyRam(zeroCopy).withPollers(pollers).withSrqDepth(srqDepth);
        // Each queue reserves its receives and its send budget on its poller's CQ (about 3 x depth entries).
        int cqNeeded = Integer.highestOneBit(Math.max(1, ioQueues * (4 * queueDepth + 64)) - 1) << 1;
        if (cqNeeded > config.cqSize()) config = config.withCqSize(cqNeeded);
        transport = new RdmaTransport(fabric, config, target);
        transport.open();
        InetSocketAddress src = new InetSocketAddress(HOST_IP, 0);
        InetSocketAddress dst = new InetSocketAddress(TARGET_IP, PORT);
        admin = new BenchQueue(fabric, src, dst, 0, 32, 4096);
        admin.rdmaConnect(pump);
        check(admin.nvmeConnect(SUBNQN, HOSTNQN, 0xFFFF, pump), "admin Connect");
        int cntlid = admin.lastResult0 & 0xFFFF;
        check(admin.enableController(pump), "Property Set CC.EN");
        ioArray = new BenchQueue[ioQueues];
        for (int q = 0; q < ioQueues; q++) {
            BenchQueue b = new BenchQueue(fabric, src, dst, q + 1, queueDepth, Math.max(maxIoBytes, 1024));
            ioArray[q] = b;
            b.rdmaConnect(pump);
            check(b.nvmeConnect(SUBNQN, HOSTNQN, cntlid, pump), "I/O queue " + (q + 1) + " Connect");
        }
        ios = List.of(ioArray);
        io = ioArray[0];
        if (zeroCopy) {
            // The first keyed command has the CM agent register the namespace (step() does not run the CM agent).
            long before = io.completed;
            if (io.read(0, NSID, 0, 1, BLOCK) != 0) throw new IllegalStateException("host post_send failed");
            for (int i = 0; i < 10_000 && io.completed == before; i++) pumpOnce();
            pumpOnce();
            boolean registered = false;
            for (var d : transport.cm().deviceResources().values()) registered |= !d.registrations().isEmpty();
            if (!registered) throw new IllegalStateException("zero copy: the RAM namespace was not registered");
        }
        for (BenchQueue b : ioArray) b.completed = 0; // the Connects (and the registering read) do not count
    }

    private static void check(int status, String what) {
        if (status != 0) throw new IllegalStateException(what + ": status 0x" + Integer.toHexString(status));
    }

    /** The daemon's observer and the meters of a namespace (nsid 1) of a runtime started and stopped for it. */
    private static Object[] daemonObserver() throws Exception {
        SoftFabric side = SoftFabric.automatic();
        side.addDevice("m0", "10.9.0.1");
        TargetMetrics metrics = new TargetMetrics();
        DaemonRuntime rt = new DaemonRuntime(DaemonRuntime.Options.of(side), metrics);
        String yaml = """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - nsid: %d
                        ram_size: 1MiB
                ports:
                  - id: 1
                    traddr: 10.9.0.1
                    trsvcid: 4420
                    subsystems: [%s]
                metrics:
                  enabled: false
                """.formatted(SUBNQN, NSID, SUBNQN);
        rt.start(ConfigLoader.parse(yaml, "bench", ConfigLoader.Options.NO_DEVICE_CHECK).config());
        try {
            return new Object[] {rt.target().observer(), rt.target().subsystem(SUBNQN).namespace(NSID).observer()};
        } finally {
            rt.stop(Duration.ofSeconds(5));
        }
    }

    private void pumpOnce() {
        fabric.deliverAll();
        transport.cmInvoker().invoke();
        runPollers();
        admin.poll();
        if (ioArray != null) {
            for (BenchQueue b : ioArray) if (b != null) b.poll();
        }
    }

    /** Every poller agent's duty cycle, once each. Returns their work. */
    public int runPollers() {
        int w = 0;
        for (int i = 0; i < transport.pollerCount(); i++) w += transport.pollerInvoker(i).invoke();
        return w;
    }

    /** Every I/O queue of the host polls once. Returns the responses taken. */
    public int pollHosts() {
        int w = 0;
        for (BenchQueue b : ioArray) w += b.poll();
        return w;
    }

    /** One turn: the fabric delivers, each poller agent runs once, each I/O queue of the host polls. Returns work. */
    public int step() {
        int w = fabric.deliverAll();
        w += runPollers();
        w += pollHosts();
        return w;
    }

    @Override
    public void close() {
        transport.stop(5000);
        for (BenchQueue b : ioArray) b.close();
        admin.close();
        fabric.deliverAll();
        ram.close();
    }
}
