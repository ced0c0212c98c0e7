package dev.nvmf.target.rdma;

import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.rdma.queue.QueueState;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.RequestState;
import dev.nvmf.target.rdma.support.Attrs;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static dev.nvmf.target.rdma.RdmaTransportSoftTest.fill;
import static dev.nvmf.target.rdma.RdmaTransportSoftTest.same;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Several Keyed SGL Data Block descriptors per command, as SPDK's host sends them: SGL1 is a Last Segment descriptor
 * pointing into the in-capsule data at a list of up to 16 (NVMe Base 2.0, 4.1.2; SPDK rdma.c,
 * {@code nvmf_rdma_request_fill_iovs_multi_sgl}). The soft fabric enforces the host's READ depth throughout: a
 * target that posts more READs than the negotiated initiator depth gets a NAK and an error completion.
 */
class MultiDescriptorSglTest {
    private static final int ACCESS = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;

    private static SoftTarget target(int maxQpWr, int readDepth) {
        SoftTarget t = new SoftTarget(c -> c, Attrs.with(maxQpWr, readDepth));
        t.fabric.enforceReadDepth(true);
        return t;
    }

    /**
     * Command {@code cid} over 3 keyed descriptors of 4 KiB, each its own region, with the provider refusing the WR
     * at {@code refusedAt} of the next post (bad_wr); one poller pass: the capsule, its buffer, then the chain.
     */
    private static void sendThreeRefusedAt(SoftTarget t, ScriptedInitiator h, RdmaQueue q, int opcode, int cid,
                                           int refusedAt) {
        List<ScriptedInitiator.HostBuffer> r = regions(h, 4096, 4096, 4096);
        t.fabric.faults().failPostSendAt(q.queuePair(), refusedAt, dev.nvmf.verbs.Errno.ENOMEM);
        MemorySegment c = Capsules.command(opcode, cid, 0);
        Capsules.lastSegment(c, 0, 3);
        for (int i = 0; i < 3; i++) Capsules.listEntry(c, 0, i).keyed(r.get(i).address(), 4096, r.get(i).rkey(), false);
        assertEquals(0, Capsules.send(h, c, 48));
        t.fabric.deliverAll();
        t.transport.pollerInvoker(0).invoke();
    }

    /** Data buffers out of the poller's pools. */
    private static int buffersOut(SoftTarget t) {
        int out = 0;
        for (var pool : t.transport.poller(0).devices()[0].pools()) out += pool.capacity() - pool.available();
        return out;
    }

    private static RdmaQueue onlyQueue(SoftTarget t) {
        assertEquals(1, t.transport.cm().queues().size());
        return t.transport.cm().queues().get(0);
    }

    /** Host regions of {@code lengths} bytes, each registered on its own with its own rkey. */
    private static List<ScriptedInitiator.HostBuffer> regions(ScriptedInitiator h, int... lengths) {
        List<ScriptedInitiator.HostBuffer> out = new ArrayList<>();
        for (int length : lengths) out.add(h.exposeBuffer(length, ACCESS, ScriptedInitiator.HostKey.REGION));
        for (int i = 1; i < out.size(); i++) assertFalse(out.get(i).rkey() == out.get(0).rkey(), "own rkeys");
        return out;
    }

    /**
     * Sends command {@code cid} whose SGL1 is a Last Segment list at offset 0 of the in-capsule data, one plain
     * keyed descriptor per region (its whole length), then pumps.
     */
    private static void sendList(SoftTarget t, ScriptedInitiator h, int opcode, int cid, long diskOffset,
                                 List<ScriptedInitiator.HostBuffer> regions) {
        sendList(t, h, opcode, cid, diskOffset, regions.size(), c -> {
            for (int i = 0; i < regions.size(); i++) {
                ScriptedInitiator.HostBuffer b = regions.get(i);
                Capsules.listEntry(c, 0, i).keyed(b.address(), b.length(), b.rkey(), false);
            }
        });
    }

    private static void sendList(SoftTarget t, ScriptedInitiator h, int opcode, int cid, long diskOffset, int count,
                                 Consumer<MemorySegment> entries) {
        MemorySegment c = Capsules.command(opcode, cid, diskOffset);
        Capsules.lastSegment(c, 0, count);
        entries.accept(c);
        assertEquals(0, Capsules.send(h, c, 16 * count));
        t.pump();
    }

    private static void disconnectAndCheck(SoftTarget t, ScriptedInitiator h) {
        assertTrue(SoftTarget.sendErrors(h).isEmpty(), () -> "host SENDs failed: " + SoftTarget.sendErrors(h));
        assertTrue(h.receiveErrors().isEmpty(), () -> "host receives failed: " + h.receiveErrors());
        assertEquals(0, t.fabric.readDepthViolations(), "READs beyond the host's READ depth");
        assertEquals(0, t.transport.metrics().errorCompletions(WcStatus.REM_INV_REQ_ERR));
        RdmaQueue q = onlyQueue(t);
        assertTrue(q.budget().idle(), "send budget and READ credits all back");
        h.disconnect();
        t.pump();
        assertEquals(QueueState.CLOSED, q.state());
        t.assertEverythingReturned();
    }

    @Test
    void writeWithThreeDescriptorsLandsInOrder() {
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 8);
            List<ScriptedInitiator.HostBuffer> r = regions(h, 4096, 1000, 3000);
            for (int i = 0; i < 3; i++) fill(r.get(i).memory(), r.get(i).length(), 17 * (i + 1));
            long reads = t.transport.metrics().rdmaReads.sum();
            sendList(t, h, FakeCore.OP_WRITE, 5, 65536, r);
            Cqe cqe = Cqe.take(h, 5);
            assertEquals(Status.SUCCESS, cqe.status());
            assertFalse(cqe.withInvalidate());
            assertEquals(3, t.transport.metrics().rdmaReads.sum() - reads, "one RDMA READ per descriptor");
            assertTrue(same(r.get(0).memory(), 0, t.core.disk, 65536, 4096));
            assertTrue(same(r.get(1).memory(), 0, t.core.disk, 65536 + 4096, 1000));
            assertTrue(same(r.get(2).memory(), 0, t.core.disk, 65536 + 5096, 3000));
            assertEquals(1, t.core.queue(0).executed);
            disconnectAndCheck(t, h);
        }
    }

    @Test
    void readWithSixteenDescriptorsGivesEachRegionItsSlice() {
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 8);
            int[] lengths = new int[16];
            for (int i = 0; i < 16; i++) lengths[i] = 512 * (i + 1) - 100 * (i % 3); // 67,600 bytes in all
            List<ScriptedInitiator.HostBuffer> r = regions(h, lengths);
            fill(t.core.disk, 1 << 20, 9);
            long writes = t.transport.metrics().rdmaWrites.sum();
            sendList(t, h, FakeCore.OP_READ, 7, 8192, r);
            assertEquals(Status.SUCCESS, Cqe.take(h, 7).status());
            assertEquals(16, t.transport.metrics().rdmaWrites.sum() - writes, "one RDMA WRITE per descriptor");
            long at = 8192;
            for (int i = 0; i < 16; i++) {
                assertTrue(same(r.get(i).memory(), 0, t.core.disk, at, lengths[i]), "slice " + i);
                at += lengths[i];
            }
            disconnectAndCheck(t, h);
        }
    }

    @Test
    void readDataLandsAtEachDescriptorsAddressAndNowhereElse() {
        // The second descriptor covers the middle 2 KiB of its region: the bytes around it stay as they were.
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 8);
            List<ScriptedInitiator.HostBuffer> r = regions(h, 4096, 4096);
            fill(t.core.disk, 8192, 3);
            MemorySegment before = MemorySegment.ofArray(r.get(1).read());
            sendList(t, h, FakeCore.OP_READ, 2, 0, 2, c -> {
                Capsules.listEntry(c, 0, 0).keyed(r.get(0).address(), 4096, r.get(0).rkey(), false);
                Capsules.listEntry(c, 0, 1).keyed(r.get(1).address() + 1024, 2048, r.get(1).rkey(), false);
            });
            assertEquals(Status.SUCCESS, Cqe.take(h, 2).status());
            assertTrue(same(r.get(0).memory(), 0, t.core.disk, 0, 4096));
            assertTrue(same(r.get(1).memory(), 1024, t.core.disk, 4096, 2048));
            assertTrue(same(r.get(1).memory(), 0, before, 0, 1024), "nothing before the descriptor's address");
            assertTrue(same(r.get(1).memory(), 3072, before, 3072, 1024), "nothing past its length");
            disconnectAndCheck(t, h);
        }
    }

    @Test
    void seventeenDescriptorsAreRefused() {
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 8);
            ScriptedInitiator.HostBuffer b = regions(h, 17 * 512).get(0);
            sendList(t, h, FakeCore.OP_WRITE, 3, 0, 17, c -> {
                for (int i = 0; i < 17; i++) {
                    Capsules.listEntry(c, 0, i).keyed(b.address() + 512L * i, 512, b.rkey(), false);
                }
            });
            assertEquals(Status.INVALID_NUMBER_OF_SGL_DESCRIPTORS, Cqe.take(h, 3).status());
            assertEquals(0x400E, Status.INVALID_NUMBER_OF_SGL_DESCRIPTORS, "SC 0Eh, DNR");
            assertEquals(0, t.core.queue(0).executed, "the core executed nothing");
            assertEquals(0, t.transport.metrics().rdmaReads.sum(), "no data moved");
            disconnectAndCheck(t, h);
        }
    }

    /** One malformed capsule: its raw SGL1 and list, the in-capsule bytes sent, and the status it must get. */
    private record Malformed(String what, int status, int inCapsuleBytes, Consumer<MemorySegment> sgl) {}

    @Test
    void malformedListsGetTheirStatusAndNothingRuns() {
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 16);
            ScriptedInitiator.HostBuffer b = regions(h, 65536).get(0);
            List<Malformed> cases = List.of(
                    new Malformed("list in host memory (Last Segment, Address subtype)",
                            Status.SGL_DESCRIPTOR_TYPE_INVALID, 32, c -> {
                                Capsules.lastSegment(c, 0, 2);
                                c.set(JAVA_BYTE, 24 + 15, (byte) 0x30);
                            }),
                    new Malformed("list offset past the in-capsule data", Status.SGL_OFFSET_INVALID, 32,
                            c -> Capsules.lastSegment(c, 48, 1)),
                    new Malformed("list running past the in-capsule data", Status.DATA_SGL_LENGTH_INVALID, 32,
                            c -> Capsules.lastSegment(c, 16, 2)),
                    new Malformed("list length not 16-byte descriptors", Status.INVALID_SGL_SEGMENT_DESCRIPTOR, 32,
                            c -> {
                                Capsules.lastSegment(c, 0, 1);
                                c.set(JAVA_BYTE, 24 + 8, (byte) 24);
                            }),
                    new Malformed("empty list", Status.INVALID_SGL_SEGMENT_DESCRIPTOR, 32,
                            c -> Capsules.lastSegment(c, 0, 0)),
                    new Malformed("in-capsule data block inside the list", Status.SGL_DESCRIPTOR_TYPE_INVALID, 32,
                            c -> {
                                Capsules.lastSegment(c, 0, 2);
                                Capsules.listEntry(c, 0, 0).keyed(b.address(), 512, b.rkey(), false);
                                Capsules.listEntry(c, 0, 1).inCapsule(0, 16);
                            }),
                    new Malformed("a segment inside the last segment", Status.INVALID_SGL_SEGMENT_DESCRIPTOR, 32,
                            c -> {
                                Capsules.lastSegment(c, 0, 2);
                                Capsules.listEntry(c, 0, 0).keyed(b.address(), 512, b.rkey(), false);
                                Capsules.listEntry(c, 0, 1).lastSegment(0, 16);
                            }),
                    new Malformed("zero total", Status.DATA_SGL_LENGTH_INVALID, 32, c -> {
                        Capsules.lastSegment(c, 0, 2);
                        Capsules.listEntry(c, 0, 0).keyed(b.address(), 0, b.rkey(), false);
                        Capsules.listEntry(c, 0, 1).keyed(b.address(), 0, b.rkey(), false);
                    }),
                    new Malformed("total beyond max_io_size (128 KiB)", Status.DATA_SGL_LENGTH_INVALID, 48, c -> {
                        Capsules.lastSegment(c, 0, 3);
                        for (int i = 0; i < 3; i++) {
                            Capsules.listEntry(c, 0, i).keyed(b.address(), i < 2 ? 65536 : 1, b.rkey(), false);
                        }
                    }));
            int cid = 100;
            for (Malformed m : cases) {
                MemorySegment c = Capsules.command(FakeCore.OP_WRITE, ++cid, 0);
                m.sgl().accept(c);
                assertEquals(0, Capsules.send(h, c, m.inCapsuleBytes()));
                t.pump();
                Cqe cqe = Cqe.take(h, cid);
                assertEquals(m.status(), cqe.status(), m.what());
                assertFalse(cqe.withInvalidate(), m.what());
            }
            assertEquals(cases.size(), t.core.queue(0).begun);
            assertEquals(0, t.core.queue(0).executed, "the core executed none of them");
            assertEquals(0, t.transport.metrics().rdmaReads.sum(), "no data moved");
            assertEquals(QueueState.LIVE, onlyQueue(t).state(), "the queue carries on");
            disconnectAndCheck(t, h);
        }
    }

    @Test
    void multiDescriptorWritesKeepToTheReadDepth() {
        // READ depth 2: each write of 5 descriptors takes its READs in parts of at most 2, and three writes share
        // the two credits in arrival order.
        try (SoftTarget t = target(16384, 2)) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            assertEquals(2, q.budget().readCapacity());
            List<List<ScriptedInitiator.HostBuffer>> all = new ArrayList<>();
            for (int cid = 1; cid <= 3; cid++) {
                List<ScriptedInitiator.HostBuffer> r = regions(h, 1024, 2048, 512, 4096, 1536);
                for (int i = 0; i < r.size(); i++) fill(r.get(i).memory(), r.get(i).length(), cid * 7 + i);
                all.add(r);
                MemorySegment c = Capsules.command(FakeCore.OP_WRITE, cid, (cid - 1) * 16384L);
                Capsules.lastSegment(c, 0, r.size());
                for (int i = 0; i < r.size(); i++) {
                    Capsules.listEntry(c, 0, i).keyed(r.get(i).address(), r.get(i).length(), r.get(i).rkey(), false);
                }
                assertEquals(0, Capsules.send(h, c, 16 * r.size()));
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke();
            assertEquals(1, q.count(RequestState.READING), "the first write's first part");
            assertEquals(2, q.readWaiters());
            assertEquals(0, q.budget().readAvailable(), "both credits in use, none more");
            t.pump();
            assertEquals(List.of(1, 2, 3), Cqe.cids(h));
            for (Cqe c : Cqe.received(h)) assertEquals(Status.SUCCESS, c.status());
            assertEquals(15, t.transport.metrics().rdmaReads.sum(), "one READ per descriptor");
            for (int cid = 1; cid <= 3; cid++) {
                long at = (cid - 1) * 16384L;
                for (ScriptedInitiator.HostBuffer b : all.get(cid - 1)) {
                    assertTrue(same(b.memory(), 0, t.core.disk, at, b.length()), "write " + cid);
                    at += b.length();
                }
            }
            disconnectAndCheck(t, h);
        }
    }

    /**
     * Descriptor 1 of 3 (write) or 8 of 16 (read) names a key the host never registered: that WR completes with
     * REM_ACCESS_ERR, the ones after it flush (the unsignaled ones too), and the queue drains with every READ credit,
     * send slot and buffer back, without the core executing anything of a failed write.
     */
    private static void badKeyInTheMiddle(int opcode, int count, int bad) {
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            ScriptedInitiator.HostBuffer b = regions(h, count * 1024).get(0);
            sendList(t, h, opcode, 9, 0, count, c -> {
                for (int i = 0; i < count; i++) {
                    Capsules.listEntry(c, 0, i).keyed(b.address() + 1024L * i, 1024, b.rkey() + (i == bad ? 0x5500 : 0),
                            false);
                }
            });
            assertEquals(QueueState.CLOSED, q.state());
            assertEquals(1, t.transport.metrics().errorCompletions(WcStatus.REM_ACCESS_ERR));
            if (opcode == FakeCore.OP_WRITE) assertEquals(0, t.core.queue(0).executed, "no data, no execution");
            assertTrue(q.budget().idle(), "every READ credit and send slot back after the flushes");
            assertEquals(0, t.fabric.readDepthViolations());
            t.assertEverythingReturned();
        }
    }

    @Test
    void aBadKeyInAWriteListEndsTheQueueCleanly() {
        badKeyInTheMiddle(FakeCore.OP_WRITE, 3, 1);
    }

    @Test
    void aBadKeyInAReadListEndsTheQueueCleanly() {
        badKeyInTheMiddle(FakeCore.OP_READ, 16, 8);
    }

    @Test
    void oneKeyIsInvalidatedTheOthersStayValid() {
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 8);
            ScriptedInitiator.HostBuffer a = h.exposeBuffer(4096, ACCESS);
            ScriptedInitiator.HostBuffer b = h.exposeBuffer(4096, ACCESS);
            // The binds precede the capsule on the host's QP: the keys are valid when the target uses them.
            fill(t.core.disk, 8192, 5);
            sendList(t, h, FakeCore.OP_READ, 4, 0, 2, c -> {
                Capsules.listEntry(c, 0, 0).keyed(a.address(), 4096, a.rkey(), true);
                Capsules.listEntry(c, 0, 1).keyed(b.address(), 4096, b.rkey(), true);
            });
            Cqe cqe = Cqe.take(h, 4);
            assertEquals(Status.SUCCESS, cqe.status());
            assertTrue(cqe.withInvalidate(), "SEND_WITH_INVALIDATE");
            assertEquals(b.rkey(), cqe.invalidatedRkey(), "the last descriptor that asked");
            assertTrue(same(a.memory(), 0, t.core.disk, 0, 4096));
            assertTrue(same(b.memory(), 0, t.core.disk, 4096, 4096));
            // The first key was not invalidated: the host (which would now invalidate it itself) can still use it.
            fill(a.memory(), 4096, 77);
            sendList(t, h, FakeCore.OP_WRITE, 6, 65536, 1, c ->
                    Capsules.listEntry(c, 0, 0).keyed(a.address(), 4096, a.rkey(), false));
            assertEquals(Status.SUCCESS, Cqe.take(h, 6).status());
            assertTrue(same(a.memory(), 0, t.core.disk, 65536, 4096));
            disconnectAndCheck(t, h);
        }
    }

    @Test
    void aSendQueueShorterThanSixteenWritesTakesFewerDescriptors() {
        // max_qp_wr 8: a response chain is at most 8 WRs, so 7 WRITEs and the SEND; an 8th descriptor is refused.
        try (SoftTarget t = target(8, 16)) {
            ScriptedInitiator h = t.connect(1, 4);
            RdmaQueue q = onlyQueue(t);
            assertEquals(8, q.budget().capacity());
            int[] lengths = {512, 512, 512, 512, 512, 512, 512};
            List<ScriptedInitiator.HostBuffer> r = regions(h, lengths);
            fill(t.core.disk, 8192, 1);
            sendList(t, h, FakeCore.OP_READ, 1, 0, r);
            assertEquals(Status.SUCCESS, Cqe.take(h, 1).status());
            for (int i = 0; i < 7; i++) assertTrue(same(r.get(i).memory(), 0, t.core.disk, 512L * i, 512));
            List<ScriptedInitiator.HostBuffer> eight = new ArrayList<>(r);
            eight.add(regions(h, 512).get(0));
            sendList(t, h, FakeCore.OP_READ, 2, 0, eight);
            assertEquals(Status.INVALID_NUMBER_OF_SGL_DESCRIPTORS, Cqe.take(h, 2).status());
            disconnectAndCheck(t, h);
        }
    }

    /**
     * A write over 3 descriptors whose READ chain the provider refuses at its second WR (bad_wr): the first READ,
     * unsignaled, is on the queue and may still write the data buffer, the signaled last one is not. The buffer and
     * that READ's credit stay out until the READ comes back flushed; the post failure is fatal for the controller,
     * the core executes nothing, no response is sent, and then everything comes back.
     */
    @Test
    void aReadChainRefusedPartWayKeepsItsBufferUntilTheReadOnTheQueueComesBack() {
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            sendThreeRefusedAt(t, h, q, FakeCore.OP_WRITE, 9, 1); // READ 1 posted, READ 2 refused
            assertEquals(1, buffersOut(t), "the buffer the queued READ writes is still out");
            assertEquals(QueueState.DRAINING, q.state());
            assertTrue(t.core.queue(0).transportFailure != null, "the post failure is fatal for the controller");
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            assertTrue(Cqe.find(h, 9) == null, "no response");
            assertEquals(0, t.core.queue(0).executed, "the core executed nothing");
            t.assertEverythingReturned();
        }
    }

    /**
     * A read over 3 descriptors whose response chain (3 unsignaled WRITEs, then the SEND) the provider refuses at the
     * SEND: the three WRITEs are on the queue and may still read the buffer, so it stays out until the last of them
     * comes back flushed, not the first.
     */
    @Test
    void aResponseChainRefusedAtItsSendKeepsItsBufferUntilEveryWriteComesBack() {
        try (SoftTarget t = target(16384, 16)) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            sendThreeRefusedAt(t, h, q, FakeCore.OP_READ, 11, 3); // 3 WRITEs posted, SEND refused
            assertEquals(1, buffersOut(t), "the buffer the queued WRITEs read is still out");
            boolean sending = false;
            for (int i = 0; i < 8; i++) sending |= q.context(i).state() == RequestState.SENDING;
            assertTrue(sending, "the request stays SENDING");
            assertEquals(QueueState.DRAINING, q.state());
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            assertTrue(Cqe.find(h, 11) == null, "no response: its SEND was never posted");
            t.assertEverythingReturned();
        }
    }
}
