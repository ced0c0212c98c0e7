package dev.nvmf.target.rdma;

import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.core.NvmeTarget;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.CompileRequestWarmup;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Zero allocation on the real core (issue "Faults and teardown", test items): the RDMA transport, the NVMe core and a
 * RAM namespace on the manual soft fabric; three I/O queues of one controller at queue depth 32 each, all busy at once,
 * with keyed reads (RDMA WRITE + SEND chains), keyed writes (RDMA READs, limited by the READ depth), in-capsule writes
 * at offset 0 and at a non-zero in-capsule offset, and a data-buffer pool far smaller than the I/O in flight, so that
 * requests wait for buffers and for send budget and receives are reposted in batches. Measured: the bytes the test
 * thread allocates inside the poller's duty cycles (the fabric and the hosts run outside them), in each of 5 rounds of
 * 8000 I/Os after 40,000 to warm up. Bound: 0 in every round. Before CompileRequestWarmup, 5 of 6 runs showed 72 to
 * 936 bytes in some round (the JIT's String literals, never the target's code). With a shared receive queue
 * ({@code transport.srq}) of 64 buffers for the 96 commands in flight, capsules also wait on RNR for buffers, and
 * every receive completion is routed by its QP number and its buffer reposted to the SRQ.
 */
class RealCoreZeroAllocationTest {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    static final String TARGET_IP = "10.0.0.1";
    static final String SUBNQN = "nqn.2024-01.dev.nvmf:zero-allocation";
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:0b0e0c0a-0000-4000-8000-0000000a110c";
    static final int QUEUES = 3;
    static final int DEPTH = 32;
    static final int BLOCK = 512;
    static final int CC_ENABLE = Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);

    private final SoftFabric fabric = SoftFabric.manual();
    private final List<ScriptedInitiator> hosts = new ArrayList<>();
    private RdmaTransport transport;
    private AgentInvoker poller; // taken once: a call of RdmaTransport's inside the window is measured too
    private long measured;
    private final byte[] capsule = new byte[Capsules.CAPSULE_SIZE];

    /** One I/O queue of the host and what it has in flight. */
    private static final class IoQueue {
        final ScriptedInitiator host;
        final ScriptedInitiator.HostBuffer data;
        int outstanding;
        int sent;

        IoQueue(ScriptedInitiator host) {
            this.host = host;
            this.data = host.exposeBuffer(2 * DEPTH * 4096, Access.LOCAL_WRITE | Access.REMOTE_READ
                    | Access.REMOTE_WRITE, ScriptedInitiator.HostKey.REGION);
        }
    }

    private void pump(boolean measure) {
        for (int i = 0; i < 100_000; i++) {
            int w = fabric.deliverAll();
            long before = THREADS.getCurrentThreadAllocatedBytes();
            w += poller.invoke();
            long after = THREADS.getCurrentThreadAllocatedBytes();
            if (measure) measured += after - before;
            w += transport.cmInvoker().invoke();
            for (ScriptedInitiator h : hosts) w += h.doWork();
            if (w == 0) return;
        }
        throw new AssertionError("did not settle");
    }

    private ScriptedInitiator connect(int qid, int depth) {
        ScriptedInitiator h = new ScriptedInitiator(fabric, Capsules.queueOptions(new InetSocketAddress("10.0.0.2", 0),
                new InetSocketAddress(TARGET_IP, 4420), qid, depth, 16));
        hosts.add(h);
        h.startConnect();
        pump(false);
        assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
        return h;
    }

    /**
     * Fabrics Connect of queue {@code qid} (Connect data by keyed SGL, as the Linux host sends it): its status; the
     * controller id it returned (CQE DW0) in {@link #lastCntlid}.
     */
    private int nvmeConnect(ScriptedInitiator h, int qid, int depth, int cntlid) {
        assertEquals(0, Capsules.sendConnect(h, qid, depth, cntlid, SUBNQN, HOSTNQN));
        pump(false);
        ScriptedInitiator.Response r = h.pollResponse();
        assertEquals(1, Cqe.of(r).cid());
        lastCntlid = (r.data()[0] & 0xFF) | (r.data()[1] & 0xFF) << 8;
        return Cqe.of(r).status();
    }

    /** Sends command {@code n} of queue {@code q}: one of four kinds, at an LBA and a host buffer of its own. */
    private void send(IoQueue q) {
        int n = q.sent++;
        int cid = n % (2 * DEPTH);
        long slba = (long) (n % 4096) * 8;
        MemorySegment c = MemorySegment.ofArray(capsule);
        int inCapsule = 0;
        switch (n % 4) {
            case 0 -> { // keyed read of 4 KiB: RDMA WRITE + SEND
                Capsules.command(c, Opcodes.IO_READ, cid, slba);
                new SubmissionQueueEntry().wrap(c).cdw(12, 8 - 1);
                Capsules.keyed(c, q.data.address() + cid * 4096L, 4096, q.data.rkey(), false);
            }
            case 1 -> { // keyed write of 4 KiB: RDMA READ
                Capsules.command(c, Opcodes.IO_WRITE, cid, slba);
                new SubmissionQueueEntry().wrap(c).cdw(12, 8 - 1);
                Capsules.keyed(c, q.data.address() + cid * 4096L, 4096, q.data.rkey(), false);
            }
            case 2 -> { // in-capsule write of 4 KiB at offset 0
                Capsules.command(c, Opcodes.IO_WRITE, cid, slba);
                new SubmissionQueueEntry().wrap(c).cdw(12, 8 - 1);
                Capsules.inCapsule(c, 0, 4096);
                inCapsule = 4096;
            }
            default -> { // in-capsule write of 2 KiB at in-capsule offset 512
                Capsules.command(c, Opcodes.IO_WRITE, cid, slba);
                new SubmissionQueueEntry().wrap(c).cdw(12, 4 - 1);
                Capsules.inCapsule(c, 512, 2048);
                inCapsule = 512 + 2048;
            }
        }
        assertEquals(0, Capsules.send(q.host, c, inCapsule));
        q.outstanding++;
    }

    /** Keeps every queue at depth 32 until {@code count} more commands were answered; all must succeed. */
    private void ios(IoQueue[] queues, int count, boolean measure) {
        int answered = 0;
        while (answered < count) {
            for (IoQueue q : queues) {
                while (q.outstanding < DEPTH) send(q);
            }
            pump(measure);
            for (IoQueue q : queues) {
                ScriptedInitiator.Response r;
                while ((r = q.host.pollResponse()) != null) {
                    assertEquals(0, Cqe.of(r).status(), "status of cid " + Cqe.of(r).cid());
                    q.outstanding--;
                    answered++;
                }
            }
        }
    }

    /**
     * With {@code zeroCopy} the keyed reads and writes move straight to and from the RAM namespace's memory; with
     * {@code srq} the queues take their capsules from the poller's shared receive queue.
     */
    @ParameterizedTest(name = "zero copy {0}, srq {1}")
    @CsvSource({"false, false", "true, false", "false, true"})
    void threeQueuesAtDepth32OnTheRealCoreAllocateNothingPerIo(boolean zeroCopy, boolean srq) throws Exception {
        assertTrue(THREADS.isThreadAllocatedMemorySupported());
        fabric.faults().sendsPostedInErrorVanish(true).receivesPostedInErrorVanish(true);
        fabric.addDevice("t0", TARGET_IP);
        fabric.addDevice("h0", "10.0.0.2");
        NvmeTarget target = new NvmeTarget();
        target.addPort(new Port(1, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, TARGET_IP, "4420", 8192, 1024));
        Subsystem sub = target.addSubsystem(SubsystemConfig.of(SUBNQN, "ZA0001").withAllowAnyHost(true));
        try (RamBackend ram = new RamBackend(16 << 20)) {
            sub.addNamespace(NamespaceConfig.of(1, BLOCK), ram);
            target.exposeSubsystem(1, SUBNQN);
            // 8 small buffers for 96 commands in flight: buffer waiters all the time.
            transport = new RdmaTransport(fabric, RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, TARGET_IP,
                    4420))).withBuffers(8, 4).withZeroCopyRam(zeroCopy).withSrqDepth(srq ? 64 : 0), target,
                    fabric::nanoTime);
            transport.open();
            poller = transport.pollerInvoker(0);
            ScriptedInitiator admin = connect(0, 32);
            assertEquals(0, nvmeConnect(admin, 0, 32, 0xFFFF), "admin Connect");
            int cntlid = lastCntlid;
            MemorySegment cc = Capsules.command(Opcodes.FABRICS, 2, 0);
            new SubmissionQueueEntry().wrap(cc).nsid(0);
            Le.u8(cc, FabricsCommand.FCTYPE, Opcodes.FCTYPE_PROPERTY_SET);
            Le.u32(cc, FabricsCommand.PROPERTY_OFFSET, Properties.CC);
            Le.u64(cc, FabricsCommand.PROPERTY_VALUE, CC_ENABLE);
            assertEquals(0, Capsules.send(admin, cc, 0));
            pump(false);
            assertEquals(0, Cqe.of(admin.pollResponse()).status(), "Property Set CC.EN");
            IoQueue[] queues = new IoQueue[QUEUES];
            for (int i = 0; i < QUEUES; i++) {
                ScriptedInitiator h = connect(i + 1, DEPTH + 1);
                assertEquals(0, nvmeConnect(h, i + 1, DEPTH + 1, cntlid), "I/O queue Connect");
                queues[i] = new IoQueue(h);
            }
            long waits0 = transport.metrics().bufferWaits.sum();
            long inCapsule0 = transport.metrics().inCapsuleCommands.sum();
            ios(queues, 40_000, false); // warm: pools filled, code compiled, the namespace registered (zero copy)
            long zeroCopy0 = transport.metrics().zeroCopyCommands.sum();
            if (zeroCopy) {
                assertTrue(zeroCopy0 > 10_000, "keyed I/O went zero copy: " + zeroCopy0);
            } else {
                assertTrue(transport.metrics().bufferWaits.sum() > waits0, "requests waited for buffers");
                assertEquals(0, zeroCopy0);
            }
            assertTrue(transport.metrics().inCapsuleCommands.sum() > inCapsule0);
            var shared = transport.poller(0).devices()[0].sharedReceives();
            assertEquals(srq, shared != null, "the poller has an SRQ exactly when configured");
            if (srq) assertEquals(QUEUES + 1, shared.queues(), "the admin and I/O queues are all on it");
            // What the JVM allocates once per class when the I/O thread asks for a C2 compilation (see
            // CompileRequestWarmup) is done now, outside the measurement: every round then measures the target alone.
            assertTrue(CompileRequestWarmup.resolve(RdmaTransport.class, SoftFabric.class, AgentInvoker.class) > 0);
            long a = THREADS.getCurrentThreadAllocatedBytes();
            long b = THREADS.getCurrentThreadAllocatedBytes();
            assertEquals(0, b - a, "measuring allocates");
            long[] rounds = new long[5];
            for (int r = 0; r < rounds.length; r++) {
                measured = 0;
                ios(queues, 8000, true);
                rounds[r] = measured;
            }
            if (zeroCopy) {
                // Half the commands are keyed (reads and writes): every one of them in the measured rounds.
                assertEquals(5 * 8000 / 2, transport.metrics().zeroCopyCommands.sum() - zeroCopy0, 5000,
                        "keyed commands zero copy in the measured rounds");
            }
            System.out.println("RealCoreZeroAllocationTest (zero copy " + zeroCopy + ", srq " + srq + "): bytes allocated by Poller.doWork per round of 8000 I/Os"
                    + " on 3 queues at depth 32: " + Arrays.toString(rounds));
            for (long r : rounds) {
                assertEquals(0, r, "bytes allocated in a round of 8000 I/Os: " + Arrays.toString(rounds));
            }
        } finally {
            if (transport != null) transport.stop(5000);
            for (ScriptedInitiator h : hosts) h.close();
            fabric.deliverAll();
        }
    }

    private int lastCntlid;
}
