package dev.nvmf.verbs.selftest;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.MemoryWindow;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WrOpcode;

import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * Provider-neutral verbs conformance scenario: both ends of one RC connection in one process, through the RDMA
 * CM and only the {@code dev.nvmf.verbs} API. Server (the target's role) listens and accepts; client (the
 * host's role) resolves and connects. Steps, each printed as one line:
 * <ol>
 *   <li>devices, listen, resolve (address and route), connect/accept with private data checked both ways;</li>
 *   <li>the client binds a type-2 memory window over a buffer (BIND_MW on its QP);</li>
 *   <li>SEND client to server (completion-channel wakeup) advertising the window's rkey, SEND back advertising a
 *       buffer and its rkey;</li>
 *   <li>RDMA WRITE and RDMA READ against the advertised buffer, bytes checked on both sides;</li>
 *   <li>a chain of unsignaled WRITEs ended by a signaled one: exactly one completion;</li>
 *   <li>SEND_WITH_INV from the server invalidating the client's window rkey (IBV_WC_WITH_INV + rkey). It must be
 *       a window's: a registered region's rkey cannot be invalidated remotely (rxe and hardware fail the receive
 *       with REM_INV_REQ_ERR and the QP);</li>
 *   <li>an RDMA WRITE through the invalidated rkey fails with REM_ACCESS_ERR (both QPs go to error);</li>
 *   <li>orderly disconnect: DISCONNECTED on both sides, every receive still posted flushed (WR_FLUSH_ERR), in
 *       order; then teardown.</li>
 * </ol>
 * Every wait is a poll loop bounded by {@link Config#stepTimeoutMillis()}; nothing sleeps.
 *
 * <p>{@code main(provider serverAddress clientAddress port [stepTimeoutMillis])}, e.g. in the lab:
 * {@code ffm 10.77.0.1 10.77.0.2 4791}. Prints {@code VERBS-SCENARIO: PASS} and exits 0, or
 * {@code VERBS-SCENARIO: FAIL <step>: <why>} and exits 1. {@code --skip STEP[,STEP]} (diagnosis) skips steps; such
 * a run ends {@code VERBS-SCENARIO: INCOMPLETE ...} and exits 3, never PASS.
 */
public final class VerbsScenario {
    /** Provider names to implementation classes, loaded reflectively so the scenario sees only the API. */
    private static final Map<String, String> PROVIDERS = Map.of(
            "ffm", "dev.nvmf.verbs.ffm.FfmProvider",
            "soft", "dev.nvmf.verbs.soft.SoftFabric");

    private static final int RECV_COUNT = 8;
    private static final int MSG_SIZE = 512;
    private static final int RDMA_SIZE = 4096;
    private static final int SLAB = 64 * 1024;
    // Slab layout (same on both sides).
    private static final long RECV_AREA = 0;              // RECV_COUNT x 1 KiB
    private static final int RECV_SLOT = 1024;
    private static final long SEND_AREA = 8 * 1024;       // outgoing messages
    private static final long REMOTE_AREA = 16 * 1024;    // what the peer writes to / reads from (16 KiB)
    private static final long LOCAL_AREA = 32 * 1024;     // local source / sink of RDMA operations (16 KiB)
    private static final int INV_REGION_SIZE = 4096;      // separately registered, exposed through a memory window
    private static final int RESOLVE_TIMEOUT_MS = 2000;
    /** Inline data the client's QP asks for, to learn what the device grants (max_inline_data). */
    private static final int PROBE_INLINE = 64;
    /**
     * wc_flags bit rxe sets on a receive that invalidated a key: the kernel's IB_WC_WITH_INVALIDATE, copied into the
     * user-mapped CQE unchanged (user space's IBV_WC_WITH_INV is 1 << 3; 1 << 2 is IBV_WC_IP_CSUM_OK there).
     */
    private static final int RXE_KERNEL_WITH_INVALIDATE = 1 << 2;

    /** How an entry of {@link Result#lacking()} starts when the device has no type-2 memory windows. */
    public static final String FEATURE_MEMORY_WINDOWS = "type-2 memory windows";
    /** How an entry of {@link Result#lacking()} starts when the device cannot send SEND_WITH_INV. */
    public static final String FEATURE_REMOTE_INVALIDATION = "remote invalidation";

    private static final long MAGIC_CLIENT = 0x314e43534d564e4eL; // "NNVMSCN1" little endian
    private static final long MAGIC_SERVER = 0x324e43534d564e4eL;
    private static final byte[] CLIENT_PRIVATE = "nvmf-verbs-scenario:client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_PRIVATE = "nvmf-verbs-scenario:server:accept".getBytes(StandardCharsets.US_ASCII);

    /**
     * @param serverBind         address the server listens on (e.g. 10.77.0.1:4791)
     * @param clientSource       local address of the client (e.g. 10.77.0.2:0), or null to let the CM choose
     * @param serverDestination  address the client connects to (normally serverBind)
     * @param stepTimeoutMillis  bound of every wait
     */
    public record Config(InetSocketAddress serverBind, InetSocketAddress clientSource,
                         InetSocketAddress serverDestination, long stepTimeoutMillis, PrintStream out,
                         Set<String> skip, boolean optionalFeatures) {
        public Config {
            if (out == null) out = System.out;
            if (serverDestination == null) serverDestination = serverBind;
            skip = skip == null ? Set.of() : Set.copyOf(skip);
        }

        public Config(InetSocketAddress serverBind, InetSocketAddress clientSource,
                      InetSocketAddress serverDestination, long stepTimeoutMillis, PrintStream out, Set<String> skip) {
            this(serverBind, clientSource, serverDestination, stepTimeoutMillis, out, skip, false);
        }

        public Config(InetSocketAddress serverBind, InetSocketAddress clientSource, long stepTimeoutMillis) {
            this(serverBind, clientSource, serverBind, stepTimeoutMillis, System.out, Set.of());
        }

        /**
         * The selftest's run: both CM ids on one device and address ({@code address:port} listens, the client
         * connects from {@code address}, through the device's loopback), with what the target can do without
         * (type-2 memory windows, remote invalidation) reported as lacking instead of failing the run.
         */
        public static Config loopback(InetSocketAddress address, long stepTimeoutMillis, PrintStream out) {
            return new Config(address, new InetSocketAddress(address.getAddress(), 0), address, stepTimeoutMillis,
                    out, Set.of(), true);
        }

        /** Both ends on one address: one device, its loopback. */
        public boolean loopback() {
            return clientSource != null && clientSource.getAddress().equals(serverBind.getAddress());
        }
    }

    /**
     * The outcome: passed, or the first step that failed and why; plus one line per step run, the device's
     * capabilities as the run found them, and (with {@link Config#optionalFeatures}) what the device lacks, each
     * with the steps it kept from running.
     */
    public record Result(boolean passed, String failedStep, String reason, List<String> lines,
                         List<String> skipped, List<String> capabilities, List<String> lacking) {
        /** Every step ran and passed. A run with skipped steps is never a PASS. */
        public boolean complete() { return passed && skipped.isEmpty(); }

        /** Whether the device lacked {@code feature} ({@link #FEATURE_MEMORY_WINDOWS}, ...). */
        public boolean lacks(String feature) {
            return lacking.stream().anyMatch(l -> l.startsWith(feature));
        }

        public String summary() {
            if (!passed) return "VERBS-SCENARIO: FAIL " + failedStep + ": " + reason;
            if (!skipped.isEmpty()) return "VERBS-SCENARIO: INCOMPLETE skipped " + skipped;
            return lacking.isEmpty() ? "VERBS-SCENARIO: PASS"
                    : "VERBS-SCENARIO: PASS (" + lacking.size() + " optional feature" + (lacking.size() == 1 ? "" : "s")
                    + " lacking)";
        }
    }

    /** A step's failure, with the step's name. */
    static final class StepFailure extends RuntimeException {
        final String step;

        StepFailure(String step, String why) {
            super(why);
            this.step = step;
        }
    }

    /** A work completion copied to the heap. */
    record Wc(long wrId, int status, int opcode, int byteLen, int invalidatedRkey, int flags) {
        @Override
        public String toString() {
            return "wc{wr_id=" + wrId + " " + WcStatus.name(status) + " opcode=" + opcode + " len=" + byteLen
                    + " flags=0x" + Integer.toHexString(flags) + " inv_rkey=0x" + Integer.toHexString(invalidatedRkey) + "}";
        }
    }

    /** One end of the connection: its device, PD, CQ with a completion channel, QP and registered slab. */
    private static final class Side implements AutoCloseable {
        final String name;
        final Arena arena = Arena.ofShared();
        final MemorySegment slab;
        final MemorySegment invRegionMemory;
        Device device;
        ProtectionDomain pd;
        CompletionChannel channel;
        CompletionQueue cq;
        MemoryRegion mr;
        MemoryRegion invRegion;
        /** Type-2 window over invRegion: its rkey is what the peer invalidates. Null if the device has none. */
        MemoryWindow invWindow;
        /** Why the device gave no window (optional features only), or null. */
        String windowRefusal;
        /** Why the device refused the QP with inline data (it was created without), or null. */
        String inlineRefusal;
        QueuePair qp;
        /** Completions polled while waiting for a particular one, handed out first by awaitCompletions. */
        final ArrayDeque<Wc> pending = new ArrayDeque<>();
        final WorkCompletion wc;
        final RecvWorkRequest[] recvs = new RecvWorkRequest[RECV_COUNT];
        final SendWorkRequest[] sends = new SendWorkRequest[8];
        final ScatterGatherEntry sges;
        final ScatterGatherEntry[] sge = new ScatterGatherEntry[8 + RECV_COUNT];

        Side(String name) {
            this.name = name;
            this.slab = arena.allocate(SLAB, 4096);
            this.invRegionMemory = arena.allocate(INV_REGION_SIZE, 4096);
            this.wc = WorkCompletion.allocate(arena, 16);
            this.sges = ScatterGatherEntry.allocate(arena, sge.length);
            for (int i = 0; i < sge.length; i++) sge[i] = sges.at(i);
            for (int i = 0; i < recvs.length; i++) recvs[i] = RecvWorkRequest.allocate(arena);
            for (int i = 0; i < sends.length; i++) sends[i] = SendWorkRequest.allocate(arena);
        }

        /**
         * @param windowOptional a device without type-2 windows ({@code ibv_alloc_mw}: EOPNOTSUPP) leaves
         *                       {@link #invWindow} null and {@link #windowRefusal} says why, instead of failing
         * @param inline         max_inline_data to ask for; a QP the device refuses with it is created without
         */
        void create(Device device, CmId id, boolean windowOptional, int inline) {
            this.device = device;
            pd = device.allocProtectionDomain();
            channel = device.createCompletionChannel();
            cq = device.createCompletionQueue(64, channel);
            mr = pd.register(slab, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            try {
                invWindow = pd.allocateMemoryWindow();
            } catch (VerbsException e) {
                if (!windowOptional) throw e;
                windowRefusal = e.getMessage();
            }
            invRegion = pd.register(invRegionMemory, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ
                    | (invWindow != null ? Access.MW_BIND : 0));
            try {
                qp = id.createQueuePair(new QpInitAttributes(pd, cq, cq,
                        new QpCapabilities(16, RECV_COUNT, 1, 1, inline), false));
            } catch (VerbsException e) {
                if (inline == 0) throw e;
                inlineRefusal = e.getMessage();
                qp = id.createQueuePair(new QpInitAttributes(pd, cq, cq,
                        new QpCapabilities(16, RECV_COUNT, 1, 1, 0), false));
            }
        }

        /** Posts every receive buffer, one chain, wr_id = base + slot. */
        int postAllReceives(long base) {
            for (int i = 0; i < RECV_COUNT; i++) {
                ScatterGatherEntry s = sge[8 + i];
                s.set(mr.address() + RECV_AREA + (long) i * RECV_SLOT, RECV_SLOT, mr.lkey());
                recvs[i].wrId(base + i).sgList(s, 1).next(i + 1 < RECV_COUNT ? recvs[i + 1] : null);
            }
            return qp.postRecv(recvs[0]);
        }

        MemorySegment recvSlot(long slot) {
            return slab.asSlice(RECV_AREA + slot * RECV_SLOT, RECV_SLOT);
        }

        @Override
        public void close() {
            // Reverse order of creation; each step tolerates the previous one having failed. The window goes before
            // its region (a region under a bound window cannot be deregistered).
            closeQuietly(invWindow);
            closeQuietly(invRegion);
            closeQuietly(mr);
            closeQuietly(cq);
            closeQuietly(channel);
            closeQuietly(pd);
            arena.close();
        }
    }

    private final RdmaProvider provider;
    private final Config config;
    private final List<String> lines = new ArrayList<>();
    private final List<String> skipped = new ArrayList<>();
    private final List<String> capabilities = new ArrayList<>();
    private final List<String> lacking = new ArrayList<>();
    private String currentStep = "init";

    private VerbsScenario(RdmaProvider provider, Config config) {
        this.provider = provider;
        this.config = config;
    }

    /** Runs the whole scenario on {@code provider}; never throws for a scenario failure. */
    public static Result run(RdmaProvider provider, Config config) {
        return new VerbsScenario(provider, config).execute();
    }

    private void ok(String detail) {
        String line = "STEP " + currentStep + ": ok" + (detail.isEmpty() ? "" : " (" + detail + ")");
        lines.add(line);
        config.out().println(line);
        config.out().flush();
    }

    private void step(String name) { currentStep = name; }

    /** Whether the step was skipped on request (diagnosis only: the run then cannot PASS). */
    private boolean skipping(String name) {
        if (!config.skip().contains(name)) return false;
        skipped.add(name);
        String line = "STEP " + name + ": SKIPPED (requested)";
        lines.add(line);
        config.out().println(line);
        return true;
    }

    private StepFailure fail(String why) { return new StepFailure(currentStep, why); }

    /**
     * A feature the device lacks. With {@link Config#optionalFeatures} it is recorded, with the steps it keeps from
     * running, and the run goes on; otherwise the step fails with {@code what}.
     */
    private void lacks(String what, String... steps) {
        if (!config.optionalFeatures()) throw fail(what);
        lacking.add(what + " (not run: " + String.join(", ", steps) + ")");
        for (String s : steps) {
            String line = "STEP " + s + ": SKIPPED (device lacks " + what + ")";
            lines.add(line);
            config.out().println(line);
        }
        config.out().flush();
    }

    private void capability(String line) {
        capabilities.add(line);
        config.out().println("DEVICE " + line);
        config.out().flush();
    }

    private void check(boolean condition, String why) {
        if (!condition) throw fail(why);
    }

    private Result execute() {
        CmEventChannel serverEvents = null;
        CmEventChannel clientEvents = null;
        CmId listener = null;
        CmId serverId = null;
        CmId clientId = null;
        Side server = new Side("server");
        Side client = new Side("client");
        boolean teardownDone = false;
        try {
            step("devices");
            List<DeviceInfo> devices = provider.listDevices();
            check(!devices.isEmpty(), "provider " + provider.name() + " lists no RDMA devices");
            StringBuilder d = new StringBuilder();
            for (DeviceInfo info : devices) {
                if (d.length() > 0) d.append(", ");
                d.append(info.name()).append(" ports=").append(info.ports().size());
                if (!info.ports().isEmpty()) {
                    d.append(' ').append(info.ports().getFirst().stateName())
                            .append(" gids=").append(info.ports().getFirst().gids().size());
                }
            }
            ok(d.toString());

            step("listen");
            serverEvents = provider.createEventChannel();
            clientEvents = provider.createEventChannel();
            listener = serverEvents.createId("listener-context");
            listener.bind(config.serverBind());
            listener.listen(8);
            ok("bound " + listener.localAddress());

            step("resolve");
            // Address resolution may time out while the neighbour entry is being learnt (first resolution after
            // the link came up, seen on Soft-RoCE): like any initiator, retry with a fresh id until the step's
            // bound. Each attempt has a short CM timeout so the error comes back well inside the bound.
            long resolveDeadline = System.nanoTime() + config.stepTimeoutMillis() * 1_000_000L;
            int attempts = 0;
            while (true) {
                attempts++;
                clientId = clientEvents.createId("client-context");
                clientId.resolveAddress(config.clientSource(), config.serverDestination(), RESOLVE_TIMEOUT_MS);
                CmEvent e = next(clientEvents, clientId, CmEventType.ADDR_RESOLVED, CmEventType.ADDR_ERROR);
                if (e.type() == CmEventType.ADDR_RESOLVED) {
                    e.ack();
                    clientId.resolveRoute(RESOLVE_TIMEOUT_MS);
                    e = next(clientEvents, clientId, CmEventType.ROUTE_RESOLVED, CmEventType.ROUTE_ERROR);
                    if (e.type() == CmEventType.ROUTE_RESOLVED) {
                        e.ack();
                        break;
                    }
                }
                String why = e.type() + " status " + e.status();
                e.ack();
                clientId.close();
                clientId = null;
                check(System.nanoTime() < resolveDeadline, "still " + why + " after " + attempts + " attempts");
                config.out().println("  resolve attempt " + attempts + ": " + why + ", retrying");
            }
            Device clientDevice = clientId.device();
            check(clientDevice != null, "client id has no device after route resolution");
            check(clientId.device() == clientDevice, "device() returned a different object for the same context");
            ok("client on " + clientDevice.name() + " local " + clientId.localAddress() + ", attempt " + attempts);

            step("client-resources");
            client.create(clientDevice, clientId, config.optionalFeatures(), PROBE_INLINE);
            check(client.qp == clientId.queuePair(), "queuePair() is not the QP createQueuePair returned");
            int rc = client.postAllReceives(100);
            check(rc == 0, "post_recv returned errno " + rc);
            check(clientDevice.attributes().maxQpInitRdAtom() > 0, "device allows no RDMA READ as initiator");
            ok("qp " + client.qp.qpNum() + " caps " + client.qp.capabilities() + " lkey 0x"
                    + Integer.toHexString(client.mr.lkey()));
            describe(clientDevice, client);

            step("connect");
            clientId.connect(new ConnectionParameters(CLIENT_PRIVATE, 4, 4, 0, 7, 7, false, 0));
            CmEvent request = expect(serverEvents, CmEventType.CONNECT_REQUEST, null);
            serverId = request.id();
            check(request.listenId() == listener, "CONNECT_REQUEST listenId is not the listener object");
            check("listener-context".equals(serverId.context()),
                    "new id did not inherit the listener's context: " + serverId.context());
            byte[] got = request.parameters().privateData();
            check(startsWith(got, CLIENT_PRIVATE), "server got private data " + printable(got));
            int initiatorDepth = request.parameters().initiatorDepth();
            request.ack();
            Device serverDevice = serverId.device();
            check(serverDevice != null, "connect request id has no device");
            check(listener.device() == null || listener.device() == serverDevice,
                    "listener and its connection on the same context gave different Device objects");
            if (config.loopback()) {
                check(serverDevice == clientDevice, "both ids are on one address but on different Device objects ("
                        + serverDevice.name() + ", " + clientDevice.name() + ")");
            } else {
                check(serverDevice != clientDevice, "server and client share one Device object but are different ends");
            }
            ok("server on " + serverDevice.name() + ", request from " + serverId.peerAddress() + ", "
                    + got.length + " bytes private data, initiator_depth " + initiatorDepth);

            step("accept");
            server.create(serverDevice, serverId, config.optionalFeatures(), 0);
            rc = server.postAllReceives(200);
            check(rc == 0, "server post_recv returned errno " + rc);
            serverId.accept(new ConnectionParameters(SERVER_PRIVATE, 4, 4, 0, 7, 7, false, 0));
            CmEvent established = expect(clientEvents, CmEventType.ESTABLISHED, clientId);
            byte[] back = established.parameters() == null ? new byte[0] : established.parameters().privateData();
            established.ack();
            check(startsWith(back, SERVER_PRIVATE), "client got accept private data " + printable(back));
            expect(serverEvents, CmEventType.ESTABLISHED, serverId).ack();
            check(client.qp.state() == QpState.RTS, "client QP is " + client.qp.state() + ", not RTS");
            check(server.qp.state() == QpState.RTS, "server QP is " + server.qp.state() + ", not RTS");
            ok("ESTABLISHED both sides; client got " + back.length + " bytes private data");

            boolean windows = client.invWindow != null;
            if (!windows) {
                lacks(FEATURE_MEMORY_WINDOWS + " (" + client.windowRefusal + "): no key a peer may invalidate",
                        "bind-window", "send-with-inv", "invalidated-access");
            } else {
            step("bind-window");
            // The client exposes invRegion through a type-2 window (the key a host lets the target invalidate, like
            // the Linux host's fast-registration keys). The bind runs on the client's send queue, ahead of the SEND
            // that advertises the key.
            int allocatedKey = client.invWindow.rkey();
            int expectedKey = client.invWindow.nextRkey();
            rc = client.invWindow.bind(client.qp, client.sends[1], 6, SendFlags.SIGNALED, client.invRegion,
                    client.invRegion.address(), INV_REGION_SIZE, Access.REMOTE_READ | Access.REMOTE_WRITE);
            check(rc == 0, "post_send (BIND_MW) returned errno " + rc);
            expectWc(awaitCompletions(client, 1).getFirst(), 6, WcStatus.SUCCESS, WcOpcode.BIND_MW);
            check(client.invWindow.rkey() == expectedKey, "window rkey 0x" + Integer.toHexString(client.invWindow.rkey())
                    + " after the bind, expected 0x" + Integer.toHexString(expectedKey));
            check(expectedKey != client.invRegion.rkey(), "the window's key equals its region's");
            ok("window rkey 0x" + Integer.toHexString(allocatedKey) + " -> 0x" + Integer.toHexString(expectedKey)
                    + " over region rkey 0x" + Integer.toHexString(client.invRegion.rkey()));
            }

            step("send");
            MemorySegment hello = client.slab.asSlice(SEND_AREA, MSG_SIZE);
            fillPattern(hello, 1);
            hello.set(JAVA_LONG_UNALIGNED, 0, MAGIC_CLIENT);
            hello.set(JAVA_LONG_UNALIGNED, 8, client.invRegion.address());
            hello.set(JAVA_INT_UNALIGNED, 16, windows ? client.invWindow.rkey() : 0);
            client.sge[0].set(client.mr.address() + SEND_AREA, MSG_SIZE, client.mr.lkey());
            client.sends[0].wrId(1).next(null).sgList(client.sge[0], 1).opcode(WrOpcode.SEND)
                    .sendFlags(SendFlags.SIGNALED);
            // Arm the server's CQ first (the idle poller's protocol), so the arriving SEND must raise a channel
            // event that names this CQ.
            check(server.cq.poll(server.wc) == 0, "server CQ not empty before the first SEND");
            rc = server.cq.requestNotify(false);
            check(rc == 0, "req_notify_cq returned errno " + rc);
            rc = client.qp.postSend(client.sends[0]);
            check(rc == 0, "post_send returned errno " + rc);
            CompletionQueue notified = server.channel.awaitEvent(config.stepTimeoutMillis());
            check(notified != null, "no completion-channel event within " + config.stepTimeoutMillis() + " ms");
            check(notified == server.cq, "channel event names another CQ");
            Wc recv = awaitCompletions(server, 1).getFirst();
            expectWc(recv, 200, WcStatus.SUCCESS, WcOpcode.RECV);
            check(recv.byteLen() == MSG_SIZE, "received " + recv.byteLen() + " bytes, sent " + MSG_SIZE);
            check(server.recvSlot(0).asSlice(0, MSG_SIZE).mismatch(hello) == -1, "SEND payload differs at byte "
                    + server.recvSlot(0).asSlice(0, MSG_SIZE).mismatch(hello));
            expectWc(awaitCompletions(client, 1).getFirst(), 1, WcStatus.SUCCESS, WcOpcode.SEND);
            long invAddress = server.recvSlot(0).get(JAVA_LONG_UNALIGNED, 8);
            int invRkey = server.recvSlot(0).get(JAVA_INT_UNALIGNED, 16);
            ok(MSG_SIZE + " bytes, server woken through its completion channel");

            step("send-back");
            MemorySegment reply = server.slab.asSlice(SEND_AREA, MSG_SIZE);
            fillPattern(reply, 2);
            reply.set(JAVA_LONG_UNALIGNED, 0, MAGIC_SERVER);
            reply.set(JAVA_LONG_UNALIGNED, 8, server.mr.address() + REMOTE_AREA);
            reply.set(JAVA_INT_UNALIGNED, 16, server.mr.rkey());
            server.sge[0].set(server.mr.address() + SEND_AREA, MSG_SIZE, server.mr.lkey());
            server.sends[0].wrId(2).next(null).sgList(server.sge[0], 1).opcode(WrOpcode.SEND)
                    .sendFlags(SendFlags.SIGNALED);
            rc = server.qp.postSend(server.sends[0]);
            check(rc == 0, "server post_send returned errno " + rc);
            Wc crecv = awaitCompletions(client, 1).getFirst();
            expectWc(crecv, 100, WcStatus.SUCCESS, WcOpcode.RECV);
            check(client.recvSlot(0).asSlice(0, MSG_SIZE).mismatch(reply) == -1, "reply payload differs");
            expectWc(awaitCompletions(server, 1).getFirst(), 2, WcStatus.SUCCESS, WcOpcode.SEND);
            long remoteAddress = client.recvSlot(0).get(JAVA_LONG_UNALIGNED, 8);
            int remoteRkey = client.recvSlot(0).get(JAVA_INT_UNALIGNED, 16);
            ok("client learned remote buffer 0x" + Long.toHexString(remoteAddress) + " rkey 0x"
                    + Integer.toHexString(remoteRkey));

            step("rdma-write");
            MemorySegment source = client.slab.asSlice(LOCAL_AREA, RDMA_SIZE);
            fillPattern(source, 3);
            server.slab.asSlice(REMOTE_AREA, 16 * 1024).fill((byte) 0);
            client.sge[0].set(client.mr.address() + LOCAL_AREA, RDMA_SIZE, client.mr.lkey());
            client.sends[0].wrId(3).next(null).sgList(client.sge[0], 1).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED).remote(remoteAddress, remoteRkey);
            rc = client.qp.postSend(client.sends[0]);
            check(rc == 0, "post_send (RDMA WRITE) returned errno " + rc);
            expectWc(awaitCompletions(client, 1).getFirst(), 3, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE);
            long mismatch = server.slab.asSlice(REMOTE_AREA, RDMA_SIZE).mismatch(source);
            check(mismatch == -1, "server memory differs from what was written at byte " + mismatch);
            ok(RDMA_SIZE + " bytes landed in the server's buffer");

            step("rdma-read");
            MemorySegment exposed = server.slab.asSlice(REMOTE_AREA + RDMA_SIZE, RDMA_SIZE);
            fillPattern(exposed, 4);
            MemorySegment sink = client.slab.asSlice(LOCAL_AREA + RDMA_SIZE, RDMA_SIZE);
            sink.fill((byte) 0);
            client.sge[0].set(client.mr.address() + LOCAL_AREA + RDMA_SIZE, RDMA_SIZE, client.mr.lkey());
            client.sends[0].wrId(4).next(null).sgList(client.sge[0], 1).opcode(WrOpcode.RDMA_READ)
                    .sendFlags(SendFlags.SIGNALED).remote(remoteAddress + RDMA_SIZE, remoteRkey);
            rc = client.qp.postSend(client.sends[0]);
            check(rc == 0, "post_send (RDMA READ) returned errno " + rc);
            Wc read = awaitCompletions(client, 1).getFirst();
            expectWc(read, 4, WcStatus.SUCCESS, WcOpcode.RDMA_READ);
            mismatch = sink.mismatch(exposed);
            check(mismatch == -1, "read data differs from the server's buffer at byte " + mismatch);
            ok(RDMA_SIZE + " bytes read back, byte_len " + read.byteLen());

            step("unsignaled");
            // Four unsignaled WRITEs then one signaled, one chain, one post: exactly one completion, and the
            // signaled one retires the four before it. A signaled marker afterwards proves nothing else came.
            int chunk = 1024;
            for (int i = 0; i < 5; i++) {
                MemorySegment part = client.slab.asSlice(LOCAL_AREA + (long) i * chunk, chunk);
                fillPattern(part, 10 + i);
                client.sge[i].set(client.mr.address() + LOCAL_AREA + (long) i * chunk, chunk, client.mr.lkey());
                client.sends[i].wrId(10 + i).sgList(client.sge[i], 1).opcode(WrOpcode.RDMA_WRITE)
                        .sendFlags(i == 4 ? SendFlags.SIGNALED : 0)
                        .remote(remoteAddress + 8192 + (long) i * chunk, remoteRkey)
                        .next(i < 4 ? client.sends[i + 1] : null);
            }
            rc = client.qp.postSend(client.sends[0]);
            check(rc == 0, "post_send (chain of 5) returned errno " + rc);
            Wc signaled = awaitCompletions(client, 1).getFirst();
            expectWc(signaled, 14, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE);
            client.sge[5].set(client.mr.address() + LOCAL_AREA, 8, client.mr.lkey());
            client.sends[5].wrId(15).next(null).sgList(client.sge[5], 1).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED).remote(remoteAddress + 15 * 1024, remoteRkey);
            rc = client.qp.postSend(client.sends[5]);
            check(rc == 0, "post_send (marker) returned errno " + rc);
            expectWc(awaitCompletions(client, 1).getFirst(), 15, WcStatus.SUCCESS, WcOpcode.RDMA_WRITE);
            mismatch = server.slab.asSlice(REMOTE_AREA + 8192, 5L * chunk)
                    .mismatch(client.slab.asSlice(LOCAL_AREA, 5L * chunk));
            check(mismatch == -1, "chained writes: server memory differs at byte " + mismatch);
            ok("5 WRITEs, 1 completion (wr_id 14), all 5 KiB landed");

            int clientFlushFrom = 102;
            boolean remoteInvalidation = serverDevice.attributes().memoryManagementExtensions();
            if (windows && !remoteInvalidation) {
                step("send-with-inv");
                lacks(FEATURE_REMOTE_INVALIDATION + " (IBV_DEVICE_MEM_MGT_EXTENSIONS): the target answers with a plain"
                        + " SEND and hosts invalidate their keys themselves", "send-with-inv", "invalidated-access");
            }
            if (!windows || !remoteInvalidation) {
                clientFlushFrom = 101;
            } else if (!skipping("send-with-inv")) {
            step("send-with-inv");
            check(invRkey == client.invWindow.rkey(), "advertised rkey was garbled");
            MemorySegment inv = server.slab.asSlice(SEND_AREA, 64);
            fillPattern(inv, 5);
            server.sge[0].set(server.mr.address() + SEND_AREA, 64, server.mr.lkey());
            server.sends[0].wrId(5).next(null).sgList(server.sge[0], 1).opcode(WrOpcode.SEND_WITH_INV)
                    .sendFlags(SendFlags.SIGNALED).invalidateRkey(invRkey);
            rc = server.qp.postSend(server.sends[0]);
            check(rc == 0, "post_send (SEND_WITH_INV) returned errno " + rc);
            Wc invRecv = awaitCompletions(client, 1).getFirst();
            expectWc(invRecv, 101, WcStatus.SUCCESS, WcOpcode.RECV);
            check(invRecv.invalidatedRkey() == invRkey, "invalidated rkey 0x"
                    + Integer.toHexString(invRecv.invalidatedRkey()) + ", expected 0x" + Integer.toHexString(invRkey));
            // rxe (Linux 6.1) writes the kernel's IB_WC_WITH_INVALIDATE (1 << 2) into the user-mapped CQE where user
            // space expects IBV_WC_WITH_INV (1 << 3): accept that bit too, with the right key, and say so. The
            // invalidated-access step then proves the key is really dead.
            boolean withInv = (invRecv.flags() & WorkCompletion.WC_WITH_INV) != 0;
            boolean kernelBit = !withInv && (invRecv.flags() & RXE_KERNEL_WITH_INVALIDATE) != 0;
            check(withInv || kernelBit, "receive lacks IBV_WC_WITH_INV: " + invRecv);
            check(client.recvSlot(1).asSlice(0, 64).mismatch(inv) == -1, "SEND_WITH_INV payload differs");
            expectWc(awaitCompletions(server, 1).getFirst(), 5, WcStatus.SUCCESS, WcOpcode.SEND);
            ok("client saw WITH_INV for window rkey 0x" + Integer.toHexString(invRkey) + " (region at 0x"
                    + Long.toHexString(invAddress) + ")" + (kernelBit ? "; flagged with the kernel's"
                    + " IB_WC_WITH_INVALIDATE bit 0x4 (rxe), not IBV_WC_WITH_INV" : ""));
            } else {
                clientFlushFrom = 101;
            }

            if (clientFlushFrom == 102 && !skipping("invalidated-access")) {
            step("invalidated-access");
            // The invalidated key must no longer reach the memory: the WRITE is NAKed (REM_ACCESS_ERR) and both QPs
            // go to error, flushing the receives the disconnect step accounts for.
            MemorySegment target = client.invRegionMemory;
            target.fill((byte) 0);
            fillPattern(server.slab.asSlice(SEND_AREA, 64), 6);
            server.sge[0].set(server.mr.address() + SEND_AREA, 64, server.mr.lkey());
            server.sends[0].wrId(7).next(null).sgList(server.sge[0], 1).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED).remote(invAddress, invRkey);
            rc = server.qp.postSend(server.sends[0]);
            check(rc == 0, "post_send (RDMA WRITE through the invalidated key) returned errno " + rc);
            Wc denied = awaitWrId(server, 7);
            expectWc(denied, 7, WcStatus.REM_ACCESS_ERR, -1);
            long written = -1;
            for (long i = 0; i < 64; i++) {
                if (target.get(JAVA_BYTE, i) != 0) { written = i; break; }
            }
            check(written == -1, "the WRITE through the invalidated key changed the client's memory at byte " + written);
            ok("WRITE through rkey 0x" + Integer.toHexString(invRkey) + " answered " + WcStatus.name(denied.status()));
            }

            step("disconnect");
            // The client's DREQ gives the server DISCONNECTED; the server answers with its own rdma_disconnect
            // (DREP, and its QP to error), and only then does the client see DISCONNECTED (IB CM; the kernel
            // would otherwise wait for the DREQ to time out).
            clientId.disconnect();
            expect(serverEvents, CmEventType.DISCONNECTED, serverId).ack();
            serverId.disconnect();
            expect(clientEvents, CmEventType.DISCONNECTED, clientId).ack();
            // Receives still posted: client 102..107 (6; 101.. if SEND_WITH_INV was skipped), server 201..207
            // (7), flushed in order.
            List<Wc> cflush = awaitCompletions(client, RECV_COUNT - (clientFlushFrom - 100));
            List<Wc> sflush = awaitCompletions(server, RECV_COUNT - 1);
            for (int i = 0; i < cflush.size(); i++) expectWc(cflush.get(i), clientFlushFrom + i, WcStatus.WR_FLUSH_ERR, -1);
            for (int i = 0; i < sflush.size(); i++) expectWc(sflush.get(i), 201 + i, WcStatus.WR_FLUSH_ERR, -1);
            check(client.qp.state() == QpState.ERR, "client QP is " + client.qp.state() + " after disconnect");
            check(server.qp.state() == QpState.ERR, "server QP is " + server.qp.state() + " after disconnect");
            ok("DISCONNECTED both sides, " + cflush.size() + " + " + sflush.size() + " receives flushed in order");

            step("teardown");
            clientId.close();
            clientId = null;
            serverId.close();
            serverId = null;
            listener.close();
            listener = null;
            client.close();
            server.close();
            clientEvents.close();
            clientEvents = null;
            serverEvents.close();
            serverEvents = null;
            teardownDone = true;
            ok("QPs, ids, MRs, CQs, channels, PDs released");
            return finish(new Result(true, null, null, List.copyOf(lines), List.copyOf(skipped),
                    List.copyOf(capabilities), List.copyOf(lacking)));
        } catch (StepFailure f) {
            return finish(new Result(false, f.step, f.getMessage(), List.copyOf(lines), List.copyOf(skipped),
                    List.copyOf(capabilities), List.copyOf(lacking)));
        } catch (RuntimeException e) {
            return finish(new Result(false, currentStep, e.toString(), List.copyOf(lines), List.copyOf(skipped),
                    List.copyOf(capabilities), List.copyOf(lacking)));
        } finally {
            if (!teardownDone) {
                closeQuietly(clientId);
                closeQuietly(serverId);
                closeQuietly(listener);
                closeQuietly(client);
                closeQuietly(server);
                closeQuietly(clientEvents);
                closeQuietly(serverEvents);
            }
        }
    }

    /** The device's limits and capabilities as ibv_query_device and the client's QP report them. */
    private void describe(Device device, Side side) {
        DeviceAttributes a = device.attributes();
        capability(device.name() + ": max_qp " + a.maxQp() + ", max_qp_wr " + a.maxQpWr() + ", max_sge " + a.maxSge()
                + ", max_cq " + a.maxCq() + ", max_cqe " + a.maxCqe() + ", max_mr " + a.maxMr() + ", max_mr_size "
                + Long.toUnsignedString(a.maxMrSize()));
        capability("RDMA READ depth: max_qp_rd_atom (IRD, as responder) " + a.maxQpRdAtom()
                + ", max_qp_init_rd_atom (ORD, as initiator) " + a.maxQpInitRdAtom());
        capability(side.inlineRefusal == null
                ? "max inline data: " + side.qp.capabilities().maxInlineData() + " bytes granted (asked "
                        + PROBE_INLINE + ")"
                : "max inline data: none (a QP asking " + PROBE_INLINE + " bytes was refused: " + side.inlineRefusal
                        + ")");
        capability("type-2 memory windows: " + (a.memoryWindowsType2() ? "reported" : "not reported")
                + " in device_cap_flags; " + (side.invWindow != null ? "ibv_alloc_mw works" : side.windowRefusal));
        capability("remote invalidation (IBV_DEVICE_MEM_MGT_EXTENSIONS, SEND_WITH_INV): "
                + (a.memoryManagementExtensions() ? "yes" : "no"));
    }

    private Result finish(Result r) {
        config.out().println(r.summary());
        config.out().flush();
        return r;
    }

    /**
     * Polls {@code events} for the next event, which must be {@code type} (for {@code id}, when given). Any other
     * event fails the step, naming it.
     */
    private CmEvent expect(CmEventChannel events, CmEventType type, CmId id) {
        CmEvent e = events.pollEvent(config.stepTimeoutMillis());
        if (e == null) throw fail("no " + type + " within " + config.stepTimeoutMillis() + " ms");
        if (e.type() != type) {
            String what = e.type() + " (status " + e.status() + ")";
            e.ack();
            throw fail("expected " + type + ", got " + what);
        }
        if (id != null && e.id() != id) {
            e.ack();
            throw fail(type + " arrived for another id");
        }
        return e;
    }

    /** The next event for {@code id}, which must be one of {@code a} or {@code b}. */
    private CmEvent next(CmEventChannel events, CmId id, CmEventType a, CmEventType b) {
        CmEvent e = events.pollEvent(config.stepTimeoutMillis());
        if (e == null) throw fail("no " + a + " or " + b + " within " + config.stepTimeoutMillis() + " ms");
        if ((e.type() != a && e.type() != b) || e.id() != id) {
            String what = e.type() + " (status " + e.status() + ")" + (e.id() != id ? " for another id" : "");
            e.ack();
            throw fail("expected " + a + " or " + b + ", got " + what);
        }
        return e;
    }

    /**
     * Collects exactly {@code count} completions from the side's CQ, in order. Arms the CQ and waits on its
     * completion channel between polls (the poller idle protocol: arm, poll again, then wait).
     */
    private List<Wc> awaitCompletions(Side side, int count) {
        List<Wc> out = new ArrayList<>();
        while (out.size() < count && !side.pending.isEmpty()) out.add(side.pending.poll());
        long deadline = System.nanoTime() + config.stepTimeoutMillis() * 1_000_000L;
        while (out.size() < count) {
            // Never take more than asked for: later completions stay in the CQ for the next step.
            WorkCompletion into = new WorkCompletion(side.wc.segment().asSlice(0,
                    (long) Math.min(count - out.size(), side.wc.capacity()) * WorkCompletion.SIZE));
            int n = side.cq.poll(into);
            check(n >= 0, side.name + " poll_cq returned " + n);
            if (n > 0) {
                for (int i = 0; i < n; i++) out.add(copy(into, i));
                continue;
            }
            int rc = side.cq.requestNotify(false);
            check(rc == 0, side.name + " req_notify_cq returned errno " + rc);
            n = side.cq.poll(into);
            check(n >= 0, side.name + " poll_cq returned " + n);
            if (n > 0) {
                for (int i = 0; i < n; i++) out.add(copy(into, i));
                continue;
            }
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                throw fail(side.name + ": " + out.size() + " of " + count + " completions within "
                        + config.stepTimeoutMillis() + " ms " + out);
            }
            CompletionQueue which = side.channel.awaitEvent(left);
            if (which != null) check(which == side.cq, side.name + ": channel event names another CQ");
        }
        check(out.size() == count, side.name + ": expected " + count + " completions, got " + out);
        return out;
    }

    /**
     * The completion with {@code wrId}; completions before it (e.g. receives flushed by an error that raced it)
     * are kept for later awaitCompletions calls, in order.
     */
    private Wc awaitWrId(Side side, long wrId) {
        List<Wc> before = new ArrayList<>();
        for (int i = 0; i <= RECV_COUNT + 8; i++) {
            Wc w = awaitCompletions(side, 1).getFirst();
            if (w.wrId() == wrId) {
                for (int j = before.size() - 1; j >= 0; j--) side.pending.addFirst(before.get(j));
                return w;
            }
            before.add(w);
        }
        throw fail(side.name + ": no completion for wr_id " + wrId + " among " + before);
    }

    private static Wc copy(WorkCompletion wc, int i) {
        return new Wc(wc.wrId(i), wc.status(i), wc.opcode(i), wc.byteLen(i), wc.invalidatedRkey(i), wc.wcFlags(i));
    }

    /** @param opcode expected WcOpcode, or -1 for "any" (flushed completions carry no valid opcode) */
    private void expectWc(Wc wc, long wrId, int status, int opcode) {
        check(wc.wrId() == wrId && wc.status() == status && (opcode < 0 || wc.opcode() == opcode),
                "expected wr_id " + wrId + " " + WcStatus.name(status) + (opcode < 0 ? "" : " opcode " + opcode)
                        + ", got " + wc);
    }

    private static void fillPattern(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) s.set(JAVA_BYTE, i, (byte) (seed * 31 + i * 7 + (i >> 8)));
    }

    private static boolean startsWith(byte[] data, byte[] prefix) {
        return data.length >= prefix.length && Arrays.equals(data, 0, prefix.length, prefix, 0, prefix.length);
    }

    private static String printable(byte[] b) {
        StringBuilder sb = new StringBuilder("\"");
        for (byte x : b) sb.append(x >= 32 && x < 127 ? (char) x : '.');
        return sb.append("\" (").append(b.length).append(" bytes)").toString();
    }

    private static void closeQuietly(AutoCloseable c) {
        if (c == null) return;
        try {
            c.close();
        } catch (Exception ignored) {
            // teardown after a failure: the first failure is what gets reported
        }
    }

    /** Creates a provider by name ("ffm", "soft") reflectively: the scenario itself only knows the API. */
    public static RdmaProvider provider(String name) {
        String className = PROVIDERS.get(name);
        if (className == null) throw new IllegalArgumentException("unknown provider " + name + "; known: " + PROVIDERS.keySet());
        try {
            return (RdmaProvider) Class.forName(className).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("cannot create provider " + name + " (" + className + "): " + e, e);
        }
    }

    public static void main(String[] args) {
        if (args.length < 4) {
            System.err.println("usage: VerbsScenario PROVIDER SERVER_ADDRESS CLIENT_ADDRESS PORT [STEP_TIMEOUT_MS]"
                    + " [--skip STEP[,STEP]]");
            System.err.println("  e.g. VerbsScenario ffm 10.77.0.1 10.77.0.2 4791");
            System.out.println("VERBS-SCENARIO: FAIL usage: expected 4 or 5 arguments");
            System.exit(2);
        }
        Result result;
        try (RdmaProvider provider = provider(args[0])) {
            int port = Integer.parseInt(args[3]);
            long timeout = 20_000;
            Set<String> skip = new HashSet<>();
            for (int i = 4; i < args.length; i++) {
                if (args[i].equals("--skip") && i + 1 < args.length) skip.addAll(Arrays.asList(args[++i].split(",")));
                else timeout = Long.parseLong(args[i]);
            }
            InetSocketAddress server = new InetSocketAddress(InetAddress.getByName(args[1]), port);
            InetSocketAddress client = new InetSocketAddress(InetAddress.getByName(args[2]), 0);
            System.out.println("VERBS-SCENARIO: provider " + provider.name() + ", server " + server + ", client "
                    + client.getAddress().getHostAddress() + ", step timeout " + timeout + " ms");
            result = run(provider, new Config(server, client, server, timeout, System.out, skip));
        } catch (Exception e) {
            System.out.println("VERBS-SCENARIO: FAIL setup: " + e);
            System.exit(1);
            return;
        }
        System.exit(result.complete() ? 0 : result.passed() ? 3 : 1);
    }
}
