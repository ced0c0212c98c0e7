package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.poller.PollerDevice;
import dev.nvmf.target.rdma.queue.QueueParameters;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.RequestState;
import dev.nvmf.target.rdma.queue.SharedReceives;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;
import dev.nvmf.verbs.soft.SoftQueuePair;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static dev.nvmf.target.rdma.RdmaTransportSoftTest.fill;
import static dev.nvmf.target.rdma.RdmaTransportSoftTest.same;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code transport.srq}: the queues of a poller on a device take their capsules from one shared receive queue on the
 * soft fabric, whose SRQ consumes receives in posting order for whichever QP a SEND reaches and names that QP in the
 * completion (verbs-ffm's SharedReceiveQueueTest shows the fabric does).
 */
class SharedReceiveQueueTest {
    private static SoftTarget target(int srqDepth) {
        return new SoftTarget(c -> c.withSrqDepth(srqDepth), SoftFabric.defaultAttributes());
    }

    private static SharedReceives srq(SoftTarget t) {
        PollerDevice d = t.transport.poller(0).devices()[0];
        assertNotNull(d.sharedReceives(), "the poller has an SRQ on the device");
        return d.sharedReceives();
    }

    private static RdmaQueue queueOf(SoftTarget t, int i) { return t.transport.cm().queues().get(i); }

    /** An in-capsule write of {@code length} bytes of pattern {@code seed} to disk offset {@code offset}. */
    private static MemorySegment write(ScriptedInitiator h, int cid, long offset, int length, int seed) {
        MemorySegment c = Capsules.command(FakeCore.OP_WRITE, cid, offset);
        Capsules.inCapsule(c, 0, length);
        fill(c.asSlice(64), length, seed);
        assertEquals(0, Capsules.send(h, c, length));
        return c;
    }

    @Test
    void commandsOnSeveralQueuesSharingOneSrqCompleteWithTheRightDataAndTheBuffersAreReposted() {
        // 16 SRQ buffers for 3 queues of 8: more capsules in flight than buffers, and 72 commands in all: every buffer
        // is reposted several times.
        try (SoftTarget t = target(16)) {
            List<ScriptedInitiator> hosts = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ScriptedInitiator h = t.connect(1, 8);
                assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
                hosts.add(h);
            }
            SharedReceives s = srq(t);
            assertEquals(16, s.depth());
            assertEquals(3, s.queues());
            for (int i = 0; i < 3; i++) {
                RdmaQueue q = queueOf(t, i);
                assertSame(s, q.sharedReceives());
                assertEquals(0, q.postedReceives(), "a queue on the SRQ posts no receives of its own");
                assertEquals(0, ((SoftQueuePair) q.queuePair()).postedRecvs());
                assertSame(q, s.queueFor(q.qpNum()), "its completions are found by its QP number");
            }
            List<MemorySegment> sent = new ArrayList<>();
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 3; i++) {
                    for (int k = 0; k < 8; k++) {
                        int cid = round * 8 + k + 1;
                        long offset = (long) sent.size() * 4096;
                        sent.add(write(hosts.get(i), cid, offset, 4096, i * 100 + cid));
                    }
                }
                t.pump();
            }
            for (int i = 0; i < 3; i++) {
                ScriptedInitiator h = hosts.get(i);
                for (int cid = 1; cid <= 24; cid++) {
                    Cqe r = Cqe.find(h, cid);
                    assertNotNull(r, "response to cid " + cid + " on queue " + i);
                    assertEquals(0, r.status());
                }
                assertTrue(SoftTarget.sendErrors(h).isEmpty(), "no host saw an error: " + SoftTarget.sendErrors(h));
            }
            for (int n = 0; n < sent.size(); n++) {
                assertTrue(same(sent.get(n), 64, t.core.disk, (long) n * 4096, 4096), "data of command " + n);
            }
            assertEquals(72, t.transport.metrics().inCapsuleCommands.sum());
            assertEquals(16, s.posted(), "every buffer is back on the SRQ");

            // A keyed read through a queue on the SRQ: RDMA WRITE + SEND as always.
            ScriptedInitiator.HostBuffer rb = hosts.get(1).exposeBuffer(8192);
            MemorySegment c = Capsules.command(FakeCore.OP_READ, 100, 24L * 4096);
            Capsules.keyed(c, rb.address(), 8192, rb.rkey(), false);
            assertEquals(0, Capsules.send(hosts.get(1), c, 0));
            t.pump();
            assertEquals(0, Cqe.find(hosts.get(1), 100).status());
            assertTrue(same(rb.memory(), 0, t.core.disk, 24L * 4096, 8192));

            for (ScriptedInitiator h : hosts) h.disconnect();
            t.pump();
            t.assertEverythingReturned();
        }
    }

    @Test
    void aQueueTornDownWhileItHoldsSrqBuffersGivesThemBackAndTheOtherQueueCarriesOn() {
        try (SoftTarget t = target(8)) {
            ScriptedInitiator a = t.connect(1, 8);
            ScriptedInitiator b = t.connect(2, 8);
            SharedReceives s = srq(t);
            RdmaQueue qa = queueOf(t, 0);
            // Three commands the core holds: their contexts keep three SRQ buffers (the SQEs are read in place).
            for (int cid = 1; cid <= 3; cid++) {
                assertEquals(0, Capsules.send(a, Capsules.command(FakeCore.OP_HELD, cid, 0), 0));
            }
            t.pump();
            assertEquals(3, qa.requestsInCore());
            assertEquals(5, s.posted(), "three of eight buffers are held by queue a's commands");

            a.disconnect();
            t.pump();
            assertEquals(1, t.transport.openQueues(), "only queue b is left");
            assertEquals(1, s.queues());
            assertNull(s.queueFor(qa.qpNum()), "queue a is gone from the SRQ's table");
            assertEquals(8, s.posted(), "queue a's held buffers went back to the SRQ");

            // b keeps using the SRQ, through all of its buffers more than once.
            for (int cid = 1; cid <= 20; cid++) {
                write(b, cid, (long) cid * 4096, 2048, cid);
                if (cid % 4 == 0) t.pump();
            }
            t.pump();
            for (int cid = 1; cid <= 20; cid++) assertEquals(0, Cqe.find(b, cid).status(), "cid " + cid);
            assertTrue(SoftTarget.sendErrors(b).isEmpty());
            assertEquals(8, s.posted());

            b.disconnect();
            t.pump();
            t.assertEverythingReturned();
        }
    }

    @Test
    void hostsWithMoreCreditsThanTheSrqHasBuffersWaitOnRnrAndNeverFail() {
        // 4 buffers, a queue of 8: the host may send 8 at once; half of them wait (RNR, retried forever) until
        // buffers come back, none fails, and the host's credits are still what it was granted.
        try (SoftTarget t = target(4)) {
            ScriptedInitiator h = t.connect(1, 8);
            for (int cid = 1; cid <= 8; cid++) write(h, cid, (long) cid * 4096, 1024, cid);
            t.pump();
            for (int cid = 1; cid <= 8; cid++) assertEquals(0, Cqe.find(h, cid).status(), "cid " + cid);
            assertTrue(SoftTarget.sendErrors(h).isEmpty(), "no SEND failed: " + SoftTarget.sendErrors(h));
            assertEquals(0, t.transport.metrics().creditOverruns.sum());
            assertEquals(4, srq(t).posted());
            h.disconnect();
            t.pump();
            t.assertEverythingReturned();
        }
    }

    @Test
    void aHostBeyondItsCreditsIsDisconnectedWithAnSrqToo() {
        try (SoftTarget t = target(32)) {
            ScriptedInitiator h = t.connect(1, 4);
            ScriptedInitiator other = t.connect(2, 4);
            // Held commands get no response: the fifth capsule is one more than the 4 credits granted.
            for (int cid = 1; cid <= 5; cid++) {
                assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_HELD, cid, 0), 0));
            }
            t.pump();
            assertEquals(1, t.transport.metrics().creditOverruns.sum());
            assertEquals(1, t.transport.openQueues(), "only the offending queue went");
            write(other, 1, 0, 512, 9);
            t.pump();
            assertEquals(0, Cqe.find(other, 1).status());
            assertEquals(32, srq(t).posted());
            other.disconnect();
            t.pump();
            t.assertEverythingReturned();
        }
    }

    /**
     * Registered memory per connection (docs/performance.md, "Memory per connection"), at the default queue size of the
     * Linux host (128 entries) and the default in-capsule data size (8 KiB), from the regions the queue takes from the
     * device's slabs: without an SRQ, 2 x 128 receive buffers of 64 + 8192 bytes and 256 response slots of 64 bytes;
     * with one, only the response slots of its depth + sendBudget contexts, the receive buffers being the SRQ's.
     */
    @Test
    void registeredMemoryPerConnectionWithAndWithoutSrq() {
        int recvSize = QueueParameters.recvBufferSize(8192);
        assertEquals(8256, recvSize);
        long perQueue;
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 128);
            assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
            RdmaQueue q = queueOf(t, 0);
            assertEquals(256, q.contextCount());
            perQueue = q.registeredBytes();
            assertEquals(256L * 8256 + 256L * 64, perQueue); // both whole pages: 516 + 4
            assertEquals(2_129_920L, perQueue);
            h.disconnect();
            t.pump();
        }
        try (SoftTarget t = target(RdmaTransportConfig.DEFAULT_SRQ_DEPTH)) {
            ScriptedInitiator h = t.connect(1, 128);
            RdmaQueue q = queueOf(t, 0);
            int readDepth = q.parameters().readDepth();
            assertEquals(16, readDepth);
            assertEquals(2 * 128 + 16, q.parameters().sendBudget());
            assertEquals(128 + 272, q.contextCount());
            long shared = q.registeredBytes();
            assertEquals(28_672L, shared, "400 response slots of 64 bytes, rounded up to whole pages (7)");
            SharedReceives s = srq(t);
            assertEquals(1024L * 8256, s.registeredBytes(), "the SRQ's buffers, once per poller and device");
            System.out.println("SharedReceiveQueueTest: registered bytes per connection at depth 128, 8 KiB in-capsule:"
                    + " without SRQ " + perQueue + ", with SRQ " + shared + " (+ " + s.registeredBytes()
                    + " per poller and device for the SRQ)");
            h.disconnect();
            t.pump();
            t.assertEverythingReturned();
        }
    }

    /**
     * The device is removed while a command holds an SRQ buffer in the core: the QP is destroyed at once, the queue
     * waits only for the core, and then the SRQ goes with the poller's device (after the QP), its buffers after it:
     * nothing is left on the device. When it returns, a new SRQ serves a new host.
     */
    @Test
    void aRemovedDeviceTakesItsSrqWithItAfterEveryQpAndANewOneServesWhenItReturns() {
        try (SoftTarget t = target(16)) {
            t.connectWithACommandInTheCore();
            assertEquals(15, srq(t).posted(), "the command in the core holds one buffer");
            t.fabric.removeDevice("t0");
            t.pump();
            assertEquals(0, t.targetQps(), "the QP is destroyed at once");
            assertEquals(1, t.transport.openQueues(), "the queue still waits for the core");
            t.core.deferred = false;
            t.core.releaseDeferred();
            t.pump();
            assertEquals(0, t.transport.openQueues());
            assertEquals(0, t.fabric.resources().count(dev.nvmf.verbs.soft.SoftResources.Kind.SRQ), "the SRQ is gone");
            assertEquals(0, t.resourcesOn("t0"), "nothing left on the removed device: " + t.fabric.resources());

            t.fabric.returnDevice("t0");
            t.fabric.advanceTime(java.time.Duration.ofSeconds(1));
            t.pump();
            ScriptedInitiator again = t.connect(1, 8);
            assertEquals(ScriptedInitiator.State.CONNECTED, again.state());
            write(again, 2, 0, 512, 5);
            t.pump();
            assertEquals(0, Cqe.find(again, 2).status());
            assertEquals(16, srq(t).posted());
            assertEquals(1, t.fabric.resources().count(dev.nvmf.verbs.soft.SoftResources.Kind.SRQ));
        }
    }

    /** One duty cycle of the poller after the fabric delivered what was posted: its verbs calls (VerbsCallsTest). */
    private static long[] dutyCycle(SoftTarget t) {
        t.fabric.deliverAll();
        long[] before = t.transport.poller(0).verbsCalls().snapshot();
        t.transport.pollerInvoker(0).invoke();
        long[] after = t.transport.poller(0).verbsCalls().snapshot();
        for (int i = 0; i < after.length; i++) after[i] -= before[i];
        return after;
    }

    /**
     * Buffers that come back in one duty cycle go to the SRQ in one ibv_post_srq_recv, whatever queues they came from:
     * two commands on each of three queues are one post_recv in all (without an SRQ, one per queue). A buffer comes
     * back when its command is COMPLETED (its response SEND completed), not when the capsule arrives.
     */
    @Test
    void buffersFreedOnSeveralQueuesInOneDutyCycleAreRepostedInOneCall() {
        try (SoftTarget t = target(32)) {
            List<ScriptedInitiator> hosts = new ArrayList<>();
            for (int i = 0; i < 3; i++) hosts.add(t.connect(1, 8));
            t.pump();
            for (ScriptedInitiator h : hosts) {
                for (int cid = 1; cid <= 2; cid++) {
                    assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, cid, 0), 0));
                }
            }
            // Counts: poll_cq, poll_cq_empty, post_send, post_recv, req_notify, get_cq_event, ack, epoll.
            // Six RECVs in one poll, six response SENDs in one chain per queue (three post_send), no receive to
            // post: the buffers hold the capsules.
            assertArrayEquals(new long[] {1, 0, 3, 0, 0, 0, 0, 0}, dutyCycle(t));
            assertEquals(26, srq(t).posted());
            // The six SEND completions: the six buffers go back to the SRQ in one call.
            assertArrayEquals(new long[] {1, 0, 0, 1, 0, 0, 0, 0}, dutyCycle(t));
            assertEquals(32, srq(t).posted());
            for (ScriptedInitiator h : hosts) {
                h.doWork();
                for (int cid = 1; cid <= 2; cid++) assertEquals(0, Cqe.find(h, cid).status());
            }
        }
    }

    /**
     * The SRQ's buffers hold the largest in-capsule data of all ports; a capsule beyond what its own port allows fails
     * its queue as a too-short receive of its own would have (LOC_LEN_ERR), and only that queue.
     */
    @Test
    void aCapsuleBeyondItsPortsInCapsuleSizeFailsOnlyItsQueue() {
        try (SoftTarget t = new SoftTarget(c -> RdmaTransportConfig.of(List.of(
                RdmaPortConfig.of(1, SoftTarget.TARGET_IP, SoftTarget.PORT).withInCapsuleDataSize(16),
                RdmaPortConfig.of(2, SoftTarget.TARGET_IP, SoftTarget.PORT + 1).withInCapsuleDataSize(4096)))
                .withSrqDepth(16), SoftFabric.defaultAttributes())) {
            assertEquals(QueueParameters.recvBufferSize(4096), srqOnceConnected(t).bufferSize());
            ScriptedInitiator h = t.hosts.get(0);
            write(h, 1, 0, 16, 1);
            t.pump();
            assertEquals(0, Cqe.find(h, 1).status(), "16 bytes fit the port's in-capsule size");
            write(h, 2, 4096, 64, 2);
            t.pump();
            assertNull(Cqe.find(h, 2), "no response to a capsule the port does not allow");
            assertEquals(0, t.transport.openQueues(), "its queue went");
            assertEquals(16, srq(t).posted(), "the buffer went back to the SRQ");
            t.assertEverythingReturned();
        }
    }

    private static SharedReceives srqOnceConnected(SoftTarget t) {
        ScriptedInitiator h = t.connect(1, 8);
        assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
        return srq(t);
    }

    @Test
    void aDeviceWithoutSrqsKeepsReceivesPerQueue() {
        try (SoftTarget t = new SoftTarget(c -> c.withSrqDepth(64),
                SoftFabric.defaultAttributes().withSharedReceiveQueues(0, 0, 0))) {
            ScriptedInitiator h = t.connect(1, 8);
            assertNull(t.transport.poller(0).devices()[0].sharedReceives());
            RdmaQueue q = queueOf(t, 0);
            assertEquals(8, q.postedReceives());
            write(h, 1, 0, 512, 3);
            t.pump();
            assertEquals(0, Cqe.find(h, 1).status());
            assertEquals(q.contextCount() - 8, q.count(RequestState.FREE));
            h.disconnect();
            t.pump();
            t.assertEverythingReturned();
        }
    }
}
