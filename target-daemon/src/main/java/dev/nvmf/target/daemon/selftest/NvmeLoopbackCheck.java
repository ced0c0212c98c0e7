package dev.nvmf.target.daemon.selftest;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.daemon.DaemonRuntime;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Identify;
import dev.nvmf.target.nvme.IdentifyController;
import dev.nvmf.target.nvme.IdentifyNamespace;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.RdmaMetrics;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.initiator.ScriptedInitiator;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The NVMe half of the selftest: the daemon's own runtime ({@link DaemonRuntime}: core, RDMA transport, pollers,
 * CM agent) serving a RAM namespace on one address, and an in-process host that connects to it over the same
 * device's loopback as the Linux host would: admin queue (RDMA CM, Fabrics Connect with keyed data, CC.EN, CSTS.RDY,
 * Identify), an I/O queue, a 128 KiB write by keyed SGL (the target RDMA READs it), the read back (RDMA WRITE and
 * SEND, SEND_WITH_INV where the host's key allows), a write with in-capsule data, Flush, then disconnect, the
 * target's drain and an orderly stop. One line per step; the first failure ends the run.
 */
public final class NvmeLoopbackCheck {
    static final String SUBSYSTEM_NQN = "nqn.2014-08.dev.nvmf:selftest";
    static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:6e766d66-7365-6c66-7465-737400000001";
    static final long NAMESPACE_BYTES = 16L << 20;
    static final int IO_BYTES = 128 * 1024;
    static final int IN_CAPSULE_BYTES = 4096;
    static final int QUEUE_DEPTH = 32;

    /** What the check found: passed, or the step that failed and why; one line per step run. */
    public record Result(boolean passed, String failedStep, String reason, List<String> lines) {
        public String summary() {
            return passed ? "NVME-LOOPBACK: PASS" : "NVME-LOOPBACK: FAIL " + failedStep + ": " + reason;
        }
    }

    private final RdmaProvider provider;
    private final InetAddress address;
    private final int port;
    private final boolean invalidatableKeys;
    private final long timeoutMillis;
    private final PrintStream out;
    private final List<String> lines = new ArrayList<>();
    private String step = "nvme-target";

    private NvmeLoopbackCheck(RdmaProvider provider, InetAddress address, int port, boolean invalidatableKeys,
                              long timeoutMillis, PrintStream out) {
        this.provider = provider;
        this.address = address;
        this.port = port;
        this.invalidatableKeys = invalidatableKeys;
        this.timeoutMillis = timeoutMillis;
        this.out = out;
    }

    /**
     * Runs the check; never throws for a failed step.
     *
     * @param invalidatableKeys the host's read buffers are type-2 windows the target may invalidate (the device
     *                          has windows); otherwise region keys, and the target must not invalidate
     */
    public static Result run(RdmaProvider provider, InetAddress address, int port, boolean invalidatableKeys,
                             long timeoutMillis, PrintStream out) {
        return new NvmeLoopbackCheck(provider, address, port, invalidatableKeys, timeoutMillis, out).execute();
    }

    /** The configuration the selftest serves: one subsystem open to any host, one RAM namespace, one port. */
    static String configuration(InetAddress address, int port) {
        return """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - nsid: 1
                        ram_size: %d
                ports:
                  - id: 1
                    adrfam: %s
                    traddr: %s
                    trsvcid: %d
                    subsystems: [%s]
                metrics:
                  enabled: false
                """.formatted(SUBSYSTEM_NQN, NAMESPACE_BYTES, address instanceof Inet6Address ? "ipv6" : "ipv4",
                address.getHostAddress(), port, SUBSYSTEM_NQN);
    }

    private void ok(String detail) {
        String line = "STEP " + step + ": ok (" + detail + ")";
        lines.add(line);
        out.println(line);
        out.flush();
    }

    private static void check(boolean condition, String why) {
        if (!condition) {
            throw new CheckFailure(why);
        }
    }

    private Result execute() {
        DaemonRuntime runtime = new DaemonRuntime(DaemonRuntime.Options.of(provider), new TargetMetrics());
        HostQueue admin = null;
        HostQueue io = null;
        boolean started = false;
        try {
            TargetConfig config = ConfigLoader.parse(configuration(address, port), "selftest",
                    ConfigLoader.Options.NO_DEVICE_CHECK).config();
            runtime.start(config);
            started = true;
            ok(SUBSYSTEM_NQN + ", RAM namespace 1 of " + (NAMESPACE_BYTES >> 20) + " MiB, listening on "
                    + runtime.transport().listenAddresses());
            InetSocketAddress target = new InetSocketAddress(address, port);
            InetSocketAddress source = new InetSocketAddress(address, 0);
            byte[] hostId = Arrays.copyOf("nvmf-selftest".getBytes(StandardCharsets.US_ASCII), 16);

            step = "nvme-admin-connect";
            admin = new HostQueue(provider, source, target, 0, QUEUE_DEPTH, 16, HOST_NQN, hostId, timeoutMillis);
            int cntlid = admin.connect(SUBSYSTEM_NQN, FabricsCommand.CNTLID_DYNAMIC, QUEUE_DEPTH - 1);
            ok("controller " + cntlid + ", Connect data read by the target through RDMA READ");

            step = "nvme-enable";
            admin.propertySet(Properties.CC, Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT)
                    | (4 << Properties.CC_IOCQES_SHIFT));
            HostQueue a = admin;
            int[] csts = new int[1];
            boolean ready = a.rdma.await(() -> {
                csts[0] = a.propertyGet(Properties.CSTS);
                return (csts[0] & (Properties.CSTS_RDY | Properties.CSTS_CFS)) != 0;
            }, timeoutMillis);
            check(ready && (csts[0] & Properties.CSTS_CFS) == 0 && (csts[0] & Properties.CSTS_RDY) != 0,
                    "CSTS 0x" + Integer.toHexString(csts[0]) + " after CC.EN = 1 (RDY expected)");
            ok("CC.EN = 1, CSTS.RDY = 1");

            step = "nvme-identify";
            ScriptedInitiator.HostBuffer idBuf = admin.buffer(Identify.DATA_SIZE, false);
            MemorySegment c = admin.command(Opcodes.ADMIN_IDENTIFY, 0);
            Le.u32(c, SubmissionQueueEntry.CDW10, Identify.CNS_CONTROLLER);
            HostQueue.keyed(c, idBuf, false);
            admin.expectSuccess("Identify Controller", c, 0, idBuf);
            String subnqn = Le.utf8NulTerminated(idBuf.memory(), IdentifyController.SUBNQN,
                    IdentifyController.SUBNQN_LENGTH);
            check(SUBSYSTEM_NQN.equals(subnqn), "Identify Controller SUBNQN is '" + subnqn + "'");
            idBuf.memory().fill((byte) 0);
            c = admin.command(Opcodes.ADMIN_IDENTIFY, 1);
            Le.u32(c, SubmissionQueueEntry.CDW10, Identify.CNS_NAMESPACE);
            HostQueue.keyed(c, idBuf, false);
            admin.expectSuccess("Identify Namespace 1", c, 0, idBuf);
            long nsze = Le.u64(idBuf.memory(), IdentifyNamespace.NSZE);
            int flbas = Le.u8(idBuf.memory(), IdentifyNamespace.FLBAS) & 0xF;
            int lbads = (Le.u32(idBuf.memory(), IdentifyNamespace.LBAF0 + 4L * flbas)
                    >>> IdentifyNamespace.LBAF_LBADS_SHIFT) & 0xFF;
            int blockSize = 1 << lbads;
            check(nsze * blockSize == NAMESPACE_BYTES, "Identify Namespace: NSZE " + nsze + " blocks of " + blockSize
                    + " B, expected " + NAMESPACE_BYTES + " bytes");
            idBuf.close();
            ok("SUBNQN " + subnqn + ", namespace 1: " + nsze + " blocks of " + blockSize + " B");

            step = "nvme-io-connect";
            io = new HostQueue(provider, source, target, 1, QUEUE_DEPTH, 16, HOST_NQN, hostId, timeoutMillis);
            int ioCntlid = io.connect(SUBSYSTEM_NQN, cntlid, QUEUE_DEPTH - 1);
            check(ioCntlid == cntlid, "I/O queue Connect answered controller " + ioCntlid + ", expected " + cntlid);
            ok("I/O queue 1 of " + QUEUE_DEPTH + " entries on controller " + cntlid);

            step = "nvme-write";
            byte[] data = pattern(IO_BYTES, 7);
            ScriptedInitiator.HostBuffer src = io.buffer(IO_BYTES, false).write(data);
            io.expectSuccess("Write of " + IO_BYTES + " bytes", rw(io, Opcodes.IO_WRITE, 0, IO_BYTES / blockSize, src,
                    false), 0, src);
            src.close();
            ok(IO_BYTES / 1024 + " KiB at LBA 0 by keyed SGL: the target RDMA READ it from the host");

            step = "nvme-read";
            ScriptedInitiator.HostBuffer sink = io.buffer(IO_BYTES, invalidatableKeys);
            sink.memory().fill((byte) 0x5A);
            HostQueue.Response r = io.expectSuccess("Read of " + IO_BYTES + " bytes",
                    rw(io, Opcodes.IO_READ, 0, IO_BYTES / blockSize, sink, invalidatableKeys), 0, sink);
            long mismatch = sink.memory().mismatch(MemorySegment.ofArray(data));
            check(mismatch == -1, "the data read back differs from what was written at byte " + mismatch);
            String invalidation;
            if (r.withInvalidate()) {
                check(invalidatableKeys, "the target invalidated a key the host did not ask it to (rkey 0x"
                        + Integer.toHexString(r.invalidatedRkey()) + ")");
                check(r.invalidatedRkey() == sink.rkey(), "SEND_WITH_INV invalidated rkey 0x"
                        + Integer.toHexString(r.invalidatedRkey()) + ", the host's key was 0x"
                        + Integer.toHexString(sink.rkey()));
                invalidation = "response by SEND_WITH_INV of the host's window key";
            } else {
                invalidation = invalidatableKeys
                        ? "response by plain SEND (the device lacks remote invalidation)"
                        : "response by plain SEND (region key, not invalidatable)";
            }
            sink.close();
            ok(IO_BYTES / 1024 + " KiB read back identical, by RDMA WRITE; " + invalidation);

            step = "nvme-in-capsule";
            byte[] small = pattern(IN_CAPSULE_BYTES, 11);
            long slba = (NAMESPACE_BYTES / blockSize) - IN_CAPSULE_BYTES / blockSize;
            c = rw(io, Opcodes.IO_WRITE, slba, IN_CAPSULE_BYTES / blockSize, null, false);
            HostQueue.inCapsule(c, small);
            io.expectSuccess("Write of " + IN_CAPSULE_BYTES + " bytes in the capsule", c, IN_CAPSULE_BYTES, null);
            ScriptedInitiator.HostBuffer back = io.buffer(IN_CAPSULE_BYTES, false);
            io.expectSuccess("Read of the in-capsule write", rw(io, Opcodes.IO_READ, slba,
                    IN_CAPSULE_BYTES / blockSize, back, false), 0, back);
            mismatch = back.memory().mismatch(MemorySegment.ofArray(small));
            check(mismatch == -1, "the in-capsule write read back differs at byte " + mismatch);
            back.close();
            ok(IN_CAPSULE_BYTES / 1024 + " KiB in the command capsule at the last LBAs, read back identical");

            step = "nvme-flush";
            io.expectSuccess("Flush", io.command(Opcodes.IO_FLUSH, 1), 0, null);
            ok("namespace 1");

            step = "nvme-disconnect";
            RdmaMetrics m = runtime.transport().metrics();
            io.rdma.disconnect();
            admin.rdma.disconnect();
            HostQueue ioq = io;
            boolean drained = admin.rdma.await(() -> {
                ioq.rdma.doWork();
                return runtime.transport().openQueues() == 0;
            }, timeoutMillis);
            check(drained, runtime.transport().openQueues() + " of the target's queues still open "
                    + timeoutMillis + " ms after the host disconnected (their drain did not end)");
            check(m.queuesAccepted.sum() == 2 && m.queuesClosed.sum() == 2, "the target accepted "
                    + m.queuesAccepted.sum() + " queues and released " + m.queuesClosed.sum() + ", expected 2 and 2");
            ok("both queues drained and released by the target; it posted " + m.rdmaReads.sum() + " RDMA READs, "
                    + m.rdmaWrites.sum() + " RDMA WRITEs, " + m.remoteInvalidations.sum() + " SEND_WITH_INV, "
                    + m.flushCompletions.sum() + " flushed completions");

            step = "nvme-stop";
            io.close();
            io = null;
            admin.close();
            admin = null;
            runtime.stop(Duration.ofMillis(timeoutMillis));
            started = false;
            ok("target stopped in order");
            return finish(new Result(true, null, null, List.copyOf(lines)));
        } catch (CheckFailure e) {
            return finish(new Result(false, step, e.getMessage(), List.copyOf(lines)));
        } catch (Exception | LinkageError e) {
            return finish(new Result(false, step, String.valueOf(e.getMessage() != null ? e.getMessage() : e),
                    List.copyOf(lines)));
        } finally {
            if (io != null) {
                io.close();
            }
            if (admin != null) {
                admin.close();
            }
            if (started) {
                runtime.stop(Duration.ofMillis(timeoutMillis));
            }
        }
    }

    private Result finish(Result r) {
        out.println(r.summary());
        out.flush();
        return r;
    }

    /** A Read or Write of {@code blocks} blocks at {@code slba} of namespace 1, keyed over {@code buffer} if given. */
    private static MemorySegment rw(HostQueue q, int opcode, long slba, int blocks,
                                    ScriptedInitiator.HostBuffer buffer, boolean invalidate) {
        MemorySegment c = q.command(opcode, 1);
        Le.u64(c, SubmissionQueueEntry.CDW10, slba);
        Le.u32(c, SubmissionQueueEntry.CDW12, blocks - 1);
        if (buffer != null) {
            HostQueue.keyed(c, buffer, invalidate);
        }
        return c;
    }

    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) {
            b[i] = (byte) (seed * 31 + i * 7 + (i >> 9));
        }
        return b;
    }
}
