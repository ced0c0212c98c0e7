package dev.nvmf.target.rdma;

import dev.nvmf.target.backend.BackendCallback;
import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.backend.MemoryMedium;
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
import dev.nvmf.target.rdma.memory.DeviceResources;
import dev.nvmf.target.rdma.memory.MediumRegistration;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Zero copy for RAM namespaces ({@code RdmaTransportConfig.zeroCopyRam}) on the real core and the manual soft
 * fabric: keyed data moves straight between the host and the namespace's memory, registered once per device; the
 * bytes are exact for every kind of transfer at depth 32 on three queues; the memory stays registered and allocated
 * while RDMA on it may still be in flight (a namespace removed, the transport stopped); a failed RDMA READ touches
 * nothing outside its command's range; a backend without memory keeps the buffered path.
 */
class ZeroCopyRamTest {
    static final String TARGET_IP = "10.0.0.1";
    static final String SUBNQN = "nqn.2024-01.dev.nvmf:zero-copy";
    static final String HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:0b0e0c0a-0000-4000-8000-00000000c0c0";
    static final int BLOCK = 512;
    static final int DEPTH = 32;
    static final int CIDS = 2 * DEPTH;
    /** Each (queue, cid) owns this many bytes of the namespace and of its host buffer: its I/Os never overlap. */
    static final int SLOT = 16 * 1024;
    static final int CC_ENABLE = Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);

    private final SoftFabric fabric = SoftFabric.manual();
    private final List<ScriptedInitiator> hosts = new ArrayList<>();
    private final NvmeTarget target = new NvmeTarget();
    private Subsystem sub;
    private RdmaTransport transport;
    private int cntlid;

    @AfterEach
    void tearDown() {
        if (transport != null) transport.stop(200);
        for (ScriptedInitiator h : hosts) h.close();
        fabric.deliverAll();
    }

    private void pump() {
        for (int i = 0; i < 100_000; i++) {
            int w = fabric.deliverAll();
            w += transport.pollerInvoker(0).invoke();
            w += transport.cmInvoker().invoke();
            for (ScriptedInitiator h : hosts) w += h.doWork();
            if (w == 0) return;
        }
        throw new AssertionError("did not settle");
    }

    /** The target with namespace 1 on {@code backend}, zero copy on, and an enabled controller. */
    private void start(BlockBackend backend, boolean zeroCopy) {
        fabric.faults().sendsPostedInErrorVanish(true).receivesPostedInErrorVanish(true);
        fabric.addDevice("t0", TARGET_IP);
        fabric.addDevice("h0", "10.0.0.2");
        target.addPort(new Port(1, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, TARGET_IP, "4420", 8192, 1024));
        sub = target.addSubsystem(SubsystemConfig.of(SUBNQN, "ZC0001").withAllowAnyHost(true));
        sub.addNamespace(NamespaceConfig.of(1, BLOCK), backend);
        target.exposeSubsystem(1, SUBNQN);
        transport = new RdmaTransport(fabric, RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, TARGET_IP, 4420)))
                .withBuffers(8, 4).withZeroCopyRam(zeroCopy), target, fabric::nanoTime);
        transport.open();
        ScriptedInitiator admin = connect(0, 32);
        assertEquals(0, nvmeConnect(admin, 0, 32, 0xFFFF), "admin Connect");
        cntlid = lastCntlid;
        MemorySegment cc = Capsules.command(Opcodes.FABRICS, 2, 0);
        new SubmissionQueueEntry().wrap(cc).nsid(0);
        Le.u8(cc, FabricsCommand.FCTYPE, Opcodes.FCTYPE_PROPERTY_SET);
        Le.u32(cc, FabricsCommand.PROPERTY_OFFSET, Properties.CC);
        Le.u64(cc, FabricsCommand.PROPERTY_VALUE, CC_ENABLE);
        assertEquals(0, Capsules.send(admin, cc, 0));
        pump();
        assertEquals(0, Cqe.of(admin.pollResponse()).status(), "Property Set CC.EN");
    }

    private ScriptedInitiator ioQueue(int qid) {
        ScriptedInitiator h = connect(qid, DEPTH + 1);
        assertEquals(0, nvmeConnect(h, qid, DEPTH + 1, cntlid), "I/O queue Connect");
        return h;
    }

    private ScriptedInitiator connect(int qid, int depth) {
        ScriptedInitiator h = new ScriptedInitiator(fabric, Capsules.queueOptions(new InetSocketAddress("10.0.0.2", 0),
                new InetSocketAddress(TARGET_IP, 4420), qid, depth, 16));
        hosts.add(h);
        h.startConnect();
        pump();
        assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
        return h;
    }

    private int lastCntlid;

    private int nvmeConnect(ScriptedInitiator h, int qid, int depth, int cntlid) {
        assertEquals(0, Capsules.sendConnect(h, qid, depth, cntlid, SUBNQN, HOSTNQN));
        pump();
        ScriptedInitiator.Response r = h.pollResponse();
        assertEquals(1, Cqe.of(r).cid());
        lastCntlid = (r.data()[0] & 0xFF) | (r.data()[1] & 0xFF) << 8;
        return Cqe.of(r).status();
    }

    private static ScriptedInitiator.HostBuffer hostBuffer(ScriptedInitiator h, int length) {
        return h.exposeBuffer(length, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE,
                ScriptedInitiator.HostKey.REGION);
    }

    /** A keyed 4 KiB command of {@code cid} at {@code slba} over {@code buf} from {@code offset}, sent. */
    private static void keyed(ScriptedInitiator h, int opcode, int cid, long slba, int bytes,
                              ScriptedInitiator.HostBuffer buf, long offset, int rkey) {
        MemorySegment c = Capsules.command(opcode, cid, slba);
        new SubmissionQueueEntry().wrap(c).cdw(12, bytes / BLOCK - 1);
        Capsules.keyed(c, buf.address() + offset, bytes, rkey, false);
        assertEquals(0, Capsules.send(h, c, 0));
    }

    /** The registration of namespace 1's memory on the target's one device (null if none). */
    private MediumRegistration registration(MemoryMedium medium) {
        for (DeviceResources d : transport.cm().deviceResources().values()) {
            for (MediumRegistration r : d.registrations()) if (r.medium() == medium) return r;
        }
        return null;
    }

    /** One keyed read through the queue, so that the CM agent registers the namespace on the device. */
    private void registerBy(ScriptedInitiator h, ScriptedInitiator.HostBuffer buf) {
        keyed(h, Opcodes.IO_READ, 0, 0, 4096, buf, 0, buf.rkey());
        pump();
        assertEquals(0, Cqe.of(h.pollResponse()).status());
    }

    // ------------------------------------------------------------------------------------------------------------

    /** What one (queue, cid) has outstanding, and where its bytes are. */
    private static final class Slot {
        final int queue;
        final int cid;
        final long diskOffset;
        final long hostOffset;
        int kind = -1;
        int bytes;

        Slot(int queue, int cid) {
            this.queue = queue;
            this.cid = cid;
            this.diskOffset = (long) (queue * CIDS + cid) * SLOT;
            this.hostOffset = (long) cid * SLOT;
        }
    }

    @Test
    void bytesAreExactForEveryKindOfTransferAtDepth32OnThreeQueues() {
        RamBackend ram = new RamBackend(16 << 20);
        try {
            start(ram, true);
            int queues = 3;
            ScriptedInitiator[] h = new ScriptedInitiator[queues];
            ScriptedInitiator.HostBuffer[] buf = new ScriptedInitiator.HostBuffer[queues];
            for (int q = 0; q < queues; q++) {
                h[q] = ioQueue(q + 1);
                buf[q] = hostBuffer(h[q], CIDS * SLOT);
            }
            registerBy(h[0], buf[0]);
            MemoryMedium medium = ram.memoryMedium();
            MediumRegistration reg = registration(medium);
            assertNotNull(reg, "the namespace is registered on the device");
            byte[] model = new byte[(int) ram.sizeBytes()];
            Random random = new Random(10);
            long zeroCopy0 = transport.metrics().zeroCopyCommands.sum();
            long reads0 = transport.metrics().rdmaReads.sum();
            int keyedSent = 0;
            int answered = 0;
            int[] outstanding = new int[queues];
            List<ArrayDeque<Slot>> free = new ArrayList<>();
            Slot[][] slots = new Slot[queues][CIDS];
            for (int q = 0; q < queues; q++) {
                ArrayDeque<Slot> f = new ArrayDeque<>();
                for (int c = 1; c < CIDS; c++) f.add(slots[q][c] = new Slot(q, c));
                free.add(f);
            }
            int n = 0;
            while (answered < 3000) {
                for (int q = 0; q < queues; q++) {
                    while (outstanding[q] < DEPTH && !free.get(q).isEmpty()) {
                        Slot s = free.get(q).poll();
                        s.kind = n++ % 6;
                        keyedSent += s.kind == 4 ? 0 : 1;
                        send(h[q], buf[q], s, random);
                        outstanding[q]++;
                    }
                }
                pump();
                for (int q = 0; q < queues; q++) {
                    ScriptedInitiator.Response r;
                    while ((r = h[q].pollResponse()) != null) {
                        Slot s = slots[q][Cqe.of(r).cid()];
                        assertEquals(0, Cqe.of(r).status(), "kind " + s.kind);
                        complete(s, buf[q], medium, model);
                        outstanding[q]--;
                        answered++;
                        free.get(q).add(s);
                    }
                }
            }
            // Every byte of the namespace is what the writes put there, and the reads brought back what was there.
            assertArrayEquals(model, medium.segment().toArray(JAVA_BYTE), "namespace contents");
            assertEquals(keyedSent, transport.metrics().zeroCopyCommands.sum() - zeroCopy0,
                    "every keyed command moved its data zero copy");
            assertTrue(transport.metrics().rdmaReads.sum() - reads0 > keyedSent / 2, "RDMA READs ran");
            assertEquals(0, reg.usesInFlight(), "no use left once every command is answered");
        } finally {
            if (transport != null) transport.stop(200);
            ram.close();
        }
    }

    /** Kinds: 0 keyed write, 1 keyed read, 2 keyed write of 3 descriptors, 3 read of 3, 4 in-capsule, 5 16 KiB write. */
    private static void send(ScriptedInitiator h, ScriptedInitiator.HostBuffer buf, Slot s, Random random) {
        long slba = s.diskOffset / BLOCK;
        MemorySegment host = buf.memory();
        switch (s.kind) {
            case 0, 5 -> {
                s.bytes = s.kind == 0 ? 4096 : SLOT;
                fillRandom(host, s.hostOffset, s.bytes, random);
                keyed(h, Opcodes.IO_WRITE, s.cid, slba, s.bytes, buf, s.hostOffset, buf.rkey());
            }
            case 1 -> {
                s.bytes = 8192;
                host.asSlice(s.hostOffset, s.bytes).fill((byte) 0x5A);
                keyed(h, Opcodes.IO_READ, s.cid, slba, s.bytes, buf, s.hostOffset, buf.rkey());
            }
            case 2, 3 -> {
                // Three descriptors of 1 KiB, 2 KiB and 5 KiB, in that order in the host buffer but not adjacent.
                s.bytes = 8192;
                int[] lengths = {1024, 2048, 5120};
                long[] at = {s.hostOffset + 8192, s.hostOffset, s.hostOffset + 2048};
                MemorySegment c = Capsules.command(s.kind == 2 ? Opcodes.IO_WRITE : Opcodes.IO_READ, s.cid, slba);
                new SubmissionQueueEntry().wrap(c).cdw(12, s.bytes / BLOCK - 1);
                Capsules.lastSegment(c, 0, 3);
                for (int i = 0; i < 3; i++) {
                    if (s.kind == 2) fillRandom(host, at[i], lengths[i], random);
                    else host.asSlice(at[i], lengths[i]).fill((byte) 0x5A);
                    Capsules.listEntry(c, 0, i).keyed(buf.address() + at[i], lengths[i], buf.rkey(), false);
                }
                assertEquals(0, Capsules.send(h, c, 16 * 3));
            }
            default -> {
                s.bytes = 4096;
                MemorySegment c = Capsules.command(Opcodes.IO_WRITE, s.cid, slba);
                new SubmissionQueueEntry().wrap(c).cdw(12, s.bytes / BLOCK - 1);
                Capsules.inCapsule(c, 0, s.bytes);
                fillRandom(host, s.hostOffset, s.bytes, random); // the source, copied into the capsule
                MemorySegment.copy(host, s.hostOffset, c, SubmissionQueueEntry.SIZE, s.bytes);
                assertEquals(0, Capsules.send(h, c, s.bytes));
            }
        }
    }

    /** The command of {@code s} succeeded: a write updates the model, a read must have brought back the model. */
    private static void complete(Slot s, ScriptedInitiator.HostBuffer buf, MemoryMedium medium, byte[] model) {
        MemorySegment host = buf.memory();
        int d = (int) s.diskOffset;
        switch (s.kind) {
            case 0, 4, 5 -> MemorySegment.copy(host, JAVA_BYTE, s.hostOffset, model, d, s.bytes);
            case 1 -> assertArrayEquals(Arrays.copyOfRange(model, d, d + s.bytes),
                    host.asSlice(s.hostOffset, s.bytes).toArray(JAVA_BYTE), "keyed read of cid " + s.cid);
            case 2, 3 -> {
                int[] lengths = {1024, 2048, 5120};
                long[] at = {s.hostOffset + 8192, s.hostOffset, s.hostOffset + 2048};
                int o = d;
                for (int i = 0; i < 3; i++) {
                    if (s.kind == 2) {
                        MemorySegment.copy(host, JAVA_BYTE, at[i], model, o, lengths[i]);
                    } else {
                        assertArrayEquals(Arrays.copyOfRange(model, o, o + lengths[i]),
                                host.asSlice(at[i], lengths[i]).toArray(JAVA_BYTE), "descriptor " + i);
                    }
                    o += lengths[i];
                }
            }
            default -> throw new AssertionError();
        }
    }

    private static void fillRandom(MemorySegment m, long offset, int length, Random random) {
        byte[] b = new byte[length];
        random.nextBytes(b);
        MemorySegment.copy(b, 0, m, JAVA_BYTE, offset, length);
    }

    // ------------------------------------------------------------------------------------------------------------

    /** Sends {@code opcode} and lets only the target take it and post its RDMA; nothing is delivered after that. */
    private void postAndHold(ScriptedInitiator h, int opcode, ScriptedInitiator.HostBuffer buf) {
        keyed(h, opcode, 7, 64, 4096, buf, 0, buf.rkey());
        fabric.deliverAll(); // the capsule reaches the target's receive
        transport.pollerInvoker(0).invoke(); // the target posts its RDMA READ (write) or WRITE + SEND (read)
    }

    private void removedWhileInFlight(int opcode) {
        RamBackend ram = new RamBackend(1 << 20);
        start(ram, true);
        ScriptedInitiator h = ioQueue(1);
        ScriptedInitiator.HostBuffer buf = hostBuffer(h, 8192);
        registerBy(h, buf);
        MemoryMedium medium = ram.memoryMedium();
        MediumRegistration reg = registration(medium);
        assertNotNull(reg);
        postAndHold(h, opcode, buf);
        assertEquals(1, reg.usesInFlight(), "the request holds a use while its RDMA is posted");
        // A reload removes the namespace and closes its backend while the device may still touch the memory.
        sub.removeNamespace(1);
        ram.close();
        assertFalse(reg.deregistered(), "not deregistered while RDMA on it is in flight");
        assertFalse(medium.freed(), "not freed while RDMA on it is in flight");
        assertEquals(1, medium.holds(), "the registration holds it, the backend let go");
        pump(); // the RDMA completes
        h.pollResponse();
        assertEquals(0, reg.usesInFlight());
        assertTrue(reg.deregistered(), "deregistered once the last use is done");
        assertTrue(medium.freed(), "then freed");
        assertTrue(transport.cm().deviceResources().values().iterator().next().registrations().isEmpty());
        // The queue goes on: a read of the namespace now gets Invalid Namespace, nothing reaches freed memory.
        keyed(h, Opcodes.IO_READ, 8, 0, 4096, buf, 0, buf.rkey());
        pump();
        assertNotEquals(0, Cqe.of(h.pollResponse()).status());
    }

    @Test
    void aNamespaceRemovedWhileItsRdmaReadIsInFlightStaysRegisteredUntilTheReadCompletes() {
        removedWhileInFlight(Opcodes.IO_WRITE);
    }

    @Test
    void aNamespaceRemovedWhileItsRdmaWriteIsInFlightStaysRegisteredUntilTheSendCompletes() {
        removedWhileInFlight(Opcodes.IO_READ);
    }

    @Test
    void aStopWithRdmaInFlightDeregistersOnlyAfterTheQueuePairIsGoneAndFreesOnlyAfterThat() {
        RamBackend ram = new RamBackend(1 << 20);
        start(ram, true);
        ScriptedInitiator h = ioQueue(1);
        ScriptedInitiator.HostBuffer buf = hostBuffer(h, 8192);
        registerBy(h, buf);
        MemoryMedium medium = ram.memoryMedium();
        MediumRegistration reg = registration(medium);
        postAndHold(h, Opcodes.IO_WRITE, buf);
        assertEquals(1, reg.usesInFlight());
        ram.close(); // the daemon closes its backends
        assertFalse(medium.freed());
        // Nothing is delivered: the drain cannot end by itself, so stop destroys the QPs, then releases.
        transport.stop(50);
        assertEquals(0, transport.openQueues());
        assertTrue(reg.deregistered(), "deregistered after the QP was destroyed");
        assertTrue(medium.freed(), "freed after the deregistration");
        transport = null;
    }

    @Test
    void aFailedRdmaReadTouchesNothingOutsideItsCommandsRange() {
        RamBackend ram = new RamBackend(1 << 20);
        try {
            start(ram, true);
            ScriptedInitiator h = ioQueue(1);
            ScriptedInitiator.HostBuffer buf = hostBuffer(h, 8192);
            registerBy(h, buf);
            MemorySegment mem = ram.memoryMedium().segment();
            mem.fill((byte) 0xA5);
            MediumRegistration reg = registration(ram.memoryMedium());
            long failed0 = transport.metrics().zeroCopyCommands.sum();
            // The host's key is wrong: the RDMA READ completes in error.
            keyed(h, Opcodes.IO_WRITE, 3, 64, 4096, buf, 0, buf.rkey() + 1);
            pump();
            assertEquals(failed0 + 1, transport.metrics().zeroCopyCommands.sum(), "it was zero copy");
            byte[] after = mem.toArray(JAVA_BYTE);
            for (int i = 0; i < after.length; i++) {
                if (i >= 64 * BLOCK && i < 64 * BLOCK + 4096) continue; // its own range may be anything
                assertEquals((byte) 0xA5, after[i], "byte " + i + " outside the command's range");
            }
            assertEquals(0, reg.usesInFlight(), "the failed request gave its use back");
        } finally {
            if (transport != null) transport.stop(200);
            transport = null;
            ram.close();
        }
    }

    @Test
    void aKeyedTransferLongerThanItsBlocksKeepsTheBufferedPath() {
        RamBackend ram = new RamBackend(1 << 20);
        try {
            start(ram, true);
            ScriptedInitiator h = ioQueue(1);
            ScriptedInitiator.HostBuffer buf = hostBuffer(h, 16384);
            registerBy(h, buf);
            long zc = transport.metrics().zeroCopyCommands.sum();
            // One block asked, 8 KiB described: the bytes beyond the block must not land in the namespace.
            ram.memoryMedium().segment().fill((byte) 0x11);
            buf.memory().fill((byte) 0x77);
            MemorySegment c = Capsules.command(Opcodes.IO_WRITE, 4, 2);
            new SubmissionQueueEntry().wrap(c).cdw(12, 0);
            Capsules.keyed(c, buf.address(), 8192, buf.rkey(), false);
            assertEquals(0, Capsules.send(h, c, 0));
            pump();
            assertEquals(0, Cqe.of(h.pollResponse()).status());
            assertEquals(zc, transport.metrics().zeroCopyCommands.sum(), "buffered");
            byte[] m = ram.memoryMedium().segment().toArray(JAVA_BYTE);
            for (int i = 0; i < m.length; i++) {
                byte want = i >= 2 * BLOCK && i < 3 * BLOCK ? (byte) 0x77 : (byte) 0x11;
                assertEquals(want, m[i], "byte " + i);
            }
        } finally {
            if (transport != null) transport.stop(200);
            transport = null;
            ram.close();
        }
    }

    private void bufferedPath(RamBackend ram, BlockBackend backend, boolean zeroCopy) {
        try {
            start(backend, zeroCopy);
            ScriptedInitiator h = ioQueue(1);
            ScriptedInitiator.HostBuffer buf = hostBuffer(h, 8192);
            buf.memory().asSlice(0, 4096).fill((byte) 0x3C);
            for (int i = 0; i < 3; i++) { // more than once: a registration, if asked, would be in place by now
                keyed(h, Opcodes.IO_WRITE, 1, 8, 4096, buf, 0, buf.rkey());
                pump();
                assertEquals(0, Cqe.of(h.pollResponse()).status());
                keyed(h, Opcodes.IO_READ, 2, 8, 4096, buf, 4096, buf.rkey());
                pump();
                assertEquals(0, Cqe.of(h.pollResponse()).status());
            }
            assertArrayEquals(buf.memory().asSlice(0, 4096).toArray(JAVA_BYTE),
                    buf.memory().asSlice(4096, 4096).toArray(JAVA_BYTE));
            assertEquals(0, transport.metrics().zeroCopyCommands.sum());
            for (DeviceResources d : transport.cm().deviceResources().values()) {
                assertTrue(d.registrations().isEmpty(), "nothing registered");
            }
        } finally {
            if (transport != null) transport.stop(200);
            transport = null;
            ram.close();
        }
    }

    @Test
    void aBackendWithoutMemoryKeepsTheBufferedPath() {
        RamBackend ram = new RamBackend(1 << 20);
        bufferedPath(ram, new Delegating(ram), true);
    }

    @Test
    void withTheSwitchOffRamKeepsTheBufferedPath() {
        RamBackend ram = new RamBackend(1 << 20);
        bufferedPath(ram, ram, false);
    }

    @Test
    void aRegistrationThatFailsLeavesTheNamespaceOnTheBufferedPath() {
        RamBackend ram = new RamBackend(1 << 20);
        try {
            start(ram, true);
            ScriptedInitiator h = ioQueue(1);
            ScriptedInitiator.HostBuffer buf = hostBuffer(h, 8192);
            // The queue's slabs and pools are registered: the next ibv_reg_mr is the namespace's (RLIMIT_MEMLOCK).
            fabric.faults().failNextControl("ibv_reg_mr", dev.nvmf.verbs.Errno.ENOMEM);
            buf.memory().asSlice(0, 4096).fill((byte) 0x42);
            for (int i = 0; i < 3; i++) {
                keyed(h, Opcodes.IO_WRITE, 1, 8, 4096, buf, 0, buf.rkey());
                pump();
                assertEquals(0, Cqe.of(h.pollResponse()).status());
                keyed(h, Opcodes.IO_READ, 2, 8, 4096, buf, 4096, buf.rkey());
                pump();
                assertEquals(0, Cqe.of(h.pollResponse()).status());
            }
            assertArrayEquals(buf.memory().asSlice(0, 4096).toArray(JAVA_BYTE),
                    buf.memory().asSlice(4096, 4096).toArray(JAVA_BYTE));
            assertEquals(0, transport.metrics().zeroCopyCommands.sum(), "buffered, and not asked again");
            assertEquals(1, ram.memoryMedium().holds(), "nothing holds the memory but the backend");
        } finally {
            if (transport != null) transport.stop(200);
            transport = null;
            ram.close();
        }
        assertTrue(ram.memoryMedium().freed());
    }

    /** A backend over RAM that does not offer its memory (as files, block devices and RBD do not). */
    private record Delegating(RamBackend ram) implements BlockBackend {
        public long sizeBytes() { return ram.sizeBytes(); }
        public boolean readOnly() { return false; }
        public String describe() { return "delegating"; }
        public void read(long o, MemorySegment d, int l, Object a, BackendCallback c) { ram.read(o, d, l, a, c); }
        public void write(long o, MemorySegment s, int l, boolean f, Object a, BackendCallback c) {
            ram.write(o, s, l, f, a, c);
        }
        public void flush(Object a, BackendCallback c) { ram.flush(a, c); }
        public void writeZeroes(long o, long l, Object a, BackendCallback c) { ram.writeZeroes(o, l, a, c); }
        public void deallocate(long o, long l, Object a, BackendCallback c) { ram.deallocate(o, l, a, c); }
        public void close() { }
    }
}
