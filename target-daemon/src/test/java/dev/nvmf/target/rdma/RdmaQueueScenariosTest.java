package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.RdmaMetrics.RejectReason;
import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.poller.PollerDevice;
import dev.nvmf.target.rdma.queue.QueueState;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.support.Attrs;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.target.rdma.support.TestHost;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.soft.CmMessage;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static dev.nvmf.target.rdma.RdmaTransportSoftTest.fill;
import static dev.nvmf.target.rdma.RdmaTransportSoftTest.same;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaQueueScenariosTest {

    private static RdmaQueue onlyQueue(SoftTarget t) {
        assertEquals(1, t.transport.cm().queues().size());
        return t.transport.cm().queues().get(0);
    }

    private static List<Integer> cids(TestHost h) {
        List<Integer> out = new ArrayList<>();
        for (TestHost.Response r : h.received) out.add(r.cid());
        return out;
    }

    /** Everything the queue took comes back, and the soft fabric saw no QP destroyed before it was drained. */
    private static void assertReleased(SoftTarget t) {
        assertEquals(0, t.transport.openQueues());
        for (PollerDevice d : t.transport.poller(0).devices()) {
            for (BufferPool p : d.pools()) assertEquals(p.capacity(), p.available(), "data buffers returned");
            assertEquals(0, d.cqReserved(), "CQ entries returned");
        }
        assertEquals(0, t.fabric.resources().undrainedQpDestroys());
        for (var d : t.transport.cm().deviceResources().values()) {
            // Only the pollers' data pools are still out.
            assertEquals(2, d.slabs().regionsOutstanding());
        }
    }

    // ---------------------------------------------------------------------------------------------- rejects

    private static int rejectStatus(CmEvent e) {
        assertEquals(CmEventType.REJECTED, e.type());
        byte[] p = e.parameters().privateData();
        assertEquals(0, (p[0] & 0xFF) | (p[1] & 0xFF) << 8, "recfmt");
        return (p[2] & 0xFF) | (p[3] & 0xFF) << 8;
    }

    private static int connectWith(SoftTarget t, byte[] pdata, int responderResources) {
        TestHost h = t.newHost();
        h.startConnect(t.source(), t.target(), pdata, responderResources, 32, 32, t::pump);
        CmEvent e = h.awaitConnect(t::pump);
        assertNotNull(e);
        return rejectStatus(e);
    }

    @Test
    void eachRejectCodeReachesTheHost() {
        try (SoftTarget t = new SoftTarget()) {
            // IB/RoCE pads REQ private data with zeros to 56 bytes: a short payload arrives as qid 0, hsqsize 0,
            // which is refused (status 1 itself is only reachable on iWARP; ConnectRequestDataTest covers it).
            assertEquals(4, connectWith(t, new byte[8], 16), "short private data");
            assertEquals(2, connectWith(t, new ConnectRequestData(1, 1, 32, 31, 1).encode(), 16));
            assertEquals(3, connectWith(t, new ConnectRequestData(0, 200, 32, 31, 1).encode(), 16));
            assertEquals(4, connectWith(t, new ConnectRequestData(0, 0, 32, 63, 0xFFFF).encode(), 16));
            assertEquals(4, connectWith(t, new ConnectRequestData(0, 1, 32, 0, 1).encode(), 16));
            assertEquals(5, connectWith(t, new ConnectRequestData(0, 1, 0, 31, 1).encode(), 16));
            assertEquals(7, connectWith(t, new ConnectRequestData(0, 1, 32, 31, 1).encode(), 0), "IRD 0");
            t.core.refuse = true;
            assertEquals(6, connectWith(t, new ConnectRequestData(0, 1, 32, 31, 1).encode(), 16), "core refuses");
            RdmaMetrics m = t.transport.metrics();
            assertEquals(3, m.rejects(RejectReason.INVALID_HSQSIZE));
            assertEquals(1, m.rejects(RejectReason.INVALID_RECFMT));
            assertEquals(1, m.rejects(RejectReason.INVALID_QID));
            assertEquals(1, m.rejects(RejectReason.INVALID_HRQSIZE));
            assertEquals(1, m.rejects(RejectReason.INVALID_IRD));
            assertEquals(1, m.rejects(RejectReason.NO_RESOURCES));
            assertEquals(0, t.transport.openQueues());
            assertEquals(0, t.fabric.resources().undrainedQpDestroys());
        }
    }

    @Test
    void deviceWithoutReadsRejectsOrdAndCqFullRejectsNoResources() {
        try (SoftTarget t = new SoftTarget(c -> c, Attrs.with(16384, 0))) {
            assertEquals(8, connectWith(t, new ConnectRequestData(0, 1, 32, 31, 1).encode(), 16));
        }
        try (SoftTarget t = new SoftTarget(c -> c.withCqSize(200), SoftFabric.defaultAttributes())) {
            TestHost ok = t.connect(1, 32);
            assertEquals(CmEventType.ESTABLISHED, ok.connectResult.type());
            assertEquals(6, connectWith(t, new ConnectRequestData(0, 2, 32, 31, 1).encode(), 16), "CQ full");
        }
    }

    // ---------------------------------------------------------------------------------------- early capsule

    @Test
    void capsulesBeforeEstablishedAreKeptAndReplayedInOrder() {
        try (SoftTarget t = new SoftTarget()) {
            t.fabric.acceptLeavesRtr(true);
            t.fabric.faults().dropNext(CmMessage.RTU); // the RTU is lost: only COMM_EST + rdma_notify establish
            TestHost h = t.connect(1, 8);
            assertEquals(CmEventType.ESTABLISHED, h.connectResult.type());
            RdmaQueue q = onlyQueue(t);
            assertEquals(QueueState.CONNECTING, q.state());
            for (int cid = 1; cid <= 3; cid++) {
                h.capsule(FakeCore.OP_FLUSH, cid, 0);
                assertEquals(0, h.send(0));
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke(); // the poller sees the capsules; the CM thread has not run
            assertEquals(3, q.parkedCapsules());
            assertEquals(QueueState.CONNECTING, q.state());
            assertEquals(8, q.postedReceives(), "receives reposted even for kept capsules");
            t.pump(); // CM: COMM_EST -> rdma_notify -> ESTABLISHED -> replay
            assertEquals(QueueState.LIVE, q.state());
            assertEquals(List.of(1, 2, 3), cids(h));
            for (TestHost.Response r : h.received) assertEquals(0, r.status());
            assertEquals(3, t.transport.metrics().earlyCapsules.sum());
            assertEquals(0, t.transport.metrics().errorCompletions(WcStatus.GENERAL_ERR));
        }
    }

    // ------------------------------------------------------------------------------------------ send budget

    @Test
    void sendBudgetExhaustedWaitersResumeInFifoOrder() {
        // max_qp_wr 4: the QP's whole send queue is 4 WRs; a read's chain (WRITE + SEND) takes 2.
        try (SoftTarget t = new SoftTarget(c -> c, Attrs.with(4, 16))) {
            TestHost h = t.connect(1, 4);
            RdmaQueue q = onlyQueue(t);
            assertEquals(4, q.budget().capacity());
            List<TestHost.HostBuffer> bufs = new ArrayList<>();
            fill(t.core.disk, 4 * 4096, 3);
            for (int cid = 1; cid <= 4; cid++) {
                TestHost.HostBuffer r = h.regionBuffer(4096);
                bufs.add(r);
                MemorySegment c = h.capsule(FakeCore.OP_READ, cid, (cid - 1) * 4096L);
                TestHost.keyed(c, r.address(), 4096, r.rkey(), false);
                assertEquals(0, h.send(0));
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke();
            assertEquals(2, q.sendWaiters(), "two chains fit, two wait");
            assertEquals(0, q.budget().available());
            assertEquals(2, t.transport.metrics().sendBudgetWaits.sum());
            t.pump();
            assertEquals(List.of(1, 2, 3, 4), cids(h), "waiters resumed in FIFO order");
            for (int i = 0; i < 4; i++) {
                assertEquals(0, h.received.get(i).status());
                assertTrue(same(bufs.get(i).segment(), 0, t.core.disk, i * 4096L, 4096));
            }
            assertTrue(q.budget().idle());
            assertTrue(h.sendErrors.isEmpty());
        }
    }

    @Test
    void outstandingReadsNeverExceedTheNegotiatedDepth() {
        try (SoftTarget t = new SoftTarget(c -> c, Attrs.with(16384, 1))) {
            TestHost h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            assertEquals(1, q.budget().readCapacity());
            List<TestHost.HostBuffer> bufs = new ArrayList<>();
            for (int cid = 1; cid <= 3; cid++) {
                TestHost.HostBuffer r = h.regionBuffer(8192);
                fill(r.segment(), 8192, cid);
                bufs.add(r);
                MemorySegment c = h.capsule(FakeCore.OP_WRITE, cid, (cid - 1) * 8192L);
                TestHost.keyed(c, r.address(), 8192, r.rkey(), false);
                h.send(0);
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke();
            assertEquals(2, q.readWaiters());
            assertEquals(0, q.budget().readAvailable());
            t.pump();
            assertEquals(List.of(1, 2, 3), cids(h));
            for (int i = 0; i < 3; i++) assertTrue(same(bufs.get(i).segment(), 0, t.core.disk, i * 8192L, 8192));
            assertTrue(q.budget().idle());
        }
    }

    // ------------------------------------------------------------------------------------ errors and drains

    @Test
    void errorCompletionMidIoClosesOnlyThatQueue() {
        try (SoftTarget t = new SoftTarget()) {
            TestHost a = t.connect(1, 8);
            TestHost b = t.connect(2, 8);
            RdmaQueue qa = t.transport.cm().queues().get(0);
            t.core.deferred = true;
            TestHost.HostBuffer r = a.regionBuffer(4096);
            MemorySegment c = a.capsule(FakeCore.OP_READ, 7, 0);
            TestHost.keyed(c, r.address(), 4096, r.rkey(), false);
            a.send(0);
            t.pump();
            assertEquals(1, t.core.deferredCount());
            t.fabric.faults().completeNextSendWith(qa.queuePair(), WcStatus.RETRY_EXC_ERR);
            t.core.releaseDeferred();
            t.pump();
            assertEquals(1, t.transport.metrics().errorCompletions(WcStatus.RETRY_EXC_ERR));
            assertEquals(QueueState.CLOSED, qa.state());
            assertTrue(t.core.queue(0).closed);
            assertTrue(t.core.queue(0).transportFailure != null
                    && t.core.queue(0).transportFailure.endsWith("completion RETRY_EXC_ERR"),
                    "the core hears of the failure (controller fatal): " + t.core.queue(0).transportFailure);
            assertFalse(t.core.queue(1).closed);
            assertEquals(null, t.core.queue(1).transportFailure);
            // The other queue still works.
            t.core.deferred = false;
            b.capsule(FakeCore.OP_FLUSH, 9, 0);
            b.send(0);
            t.pump();
            assertEquals(0, b.response(9).status());
            assertEquals(1, t.transport.openQueues());
        }
    }

    @Test
    void disconnectWhileIoInFlightReturnsEveryBuffer() {
        try (SoftTarget t = new SoftTarget()) {
            TestHost h = t.connect(1, 16);
            RdmaQueue q = onlyQueue(t);
            t.core.deferred = true;
            // Reads held by the "backend", a held AER-like command, and writes whose READ is in flight.
            for (int cid = 1; cid <= 4; cid++) {
                TestHost.HostBuffer r = h.regionBuffer(65536);
                MemorySegment c = h.capsule(FakeCore.OP_READ, cid, 0);
                TestHost.keyed(c, r.address(), 65536, r.rkey(), true);
                h.send(0);
            }
            h.capsule(FakeCore.OP_HELD, 5, 0);
            h.send(0);
            t.pump();
            assertEquals(4, t.core.deferredCount());
            assertEquals(1, t.core.queue(0).heldCount());
            for (int cid = 6; cid <= 8; cid++) {
                TestHost.HostBuffer r = h.regionBuffer(4096);
                MemorySegment c = h.capsule(FakeCore.OP_WRITE, cid, 0);
                TestHost.keyed(c, r.address(), 4096, r.rkey(), false);
                h.send(0);
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke(); // READs posted, not yet executed by the fabric
            assertTrue(q.requestsInCore() >= 5);
            h.disconnect();
            t.pump();
            // The backend still holds 4 requests: the queue waits for them before releasing anything.
            assertEquals(QueueState.DRAINING, q.state());
            assertTrue(t.core.queue(0).aborted);
            assertEquals(0, t.core.queue(0).heldCount(), "held command aborted");
            assertFalse(t.core.queue(0).closed);
            assertEquals(1, t.transport.openQueues());
            t.core.releaseDeferred();
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            assertTrue(t.core.queue(0).closed);
            assertReleased(t);
            assertTrue(t.transport.metrics().flushCompletions.sum() > 0);
        }
    }

    @Test
    void aBufferFreedByTheDrainIsNotUsedToPostOnTheSameQueue() {
        // Send queue of 5 WRs, one small data buffer. Two 64 KiB reads (large buffers) take 4 slots with their
        // WRITE + SEND chains; a 4 KiB read then holds the small buffer and waits for 2 slots; a 4 KiB keyed write
        // waits for the small buffer. The drain gives the read's buffer back: the write of the same, draining
        // queue must not get it and post its RDMA READ. rxe never completes a send posted after the error
        // transition (modelled here), so such a READ would also keep the queue from ever draining.
        try (SoftTarget t = new SoftTarget(c -> c.withBuffers(1, 4), Attrs.with(5, 16))) {
            TestHost h = t.connect(1, 4);
            RdmaQueue q = onlyQueue(t);
            assertEquals(5, q.budget().capacity());
            for (int cid = 1; cid <= 2; cid++) {
                TestHost.HostBuffer b = h.regionBuffer(65536);
                TestHost.keyed(h.capsule(FakeCore.OP_READ, cid, 0), b.address(), 65536, b.rkey(), false);
                h.send(0);
            }
            TestHost.HostBuffer small = h.regionBuffer(4096);
            TestHost.keyed(h.capsule(FakeCore.OP_READ, 3, 0), small.address(), 4096, small.rkey(), false);
            h.send(0);
            TestHost.HostBuffer data = h.regionBuffer(4096);
            TestHost.keyed(h.capsule(FakeCore.OP_WRITE, 4, 0), data.address(), 4096, data.rkey(), false);
            h.send(0);
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke(); // the chains of 1 and 2 are posted, not yet executed by the fabric
            assertEquals(1, q.sendWaiters(), "the 4 KiB read waits for send slots");
            assertEquals(1, q.count(dev.nvmf.target.rdma.queue.RequestState.NEED_BUFFER), "the write waits");
            long reads = t.transport.metrics().rdmaReads.sum();
            t.fabric.faults().sendsPostedInErrorVanish(true);
            t.core.queue(0).transport.requestDisconnect("test");
            t.transport.pollerInvoker(0).invoke();
            assertEquals(reads, t.transport.metrics().rdmaReads.sum(), "no RDMA READ posted by a draining queue");
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            assertReleased(t);
        }
    }

    @Test
    void hostExceedingItsCreditsLosesOnlyItsQueue() {
        try (SoftTarget t = new SoftTarget()) {
            TestHost bad = t.connect(1, 4);
            TestHost good = t.connect(2, 4);
            t.core.deferred = true; // nothing completes: every capsule stays outstanding
            for (int cid = 1; cid <= 5; cid++) {
                bad.capsule(FakeCore.OP_FLUSH, cid, 0);
                bad.send(0);
            }
            t.pump();
            assertEquals(1, t.transport.metrics().creditOverruns.sum());
            t.core.releaseDeferred();
            t.pump();
            assertTrue(t.core.queue(0).closed);
            assertFalse(t.core.queue(1).closed);
            t.core.deferred = false;
            good.capsule(FakeCore.OP_FLUSH, 1, 0);
            good.send(0);
            t.pump();
            assertEquals(0, good.response(1).status());
        }
    }

    @Test
    void shutdownDrainsLikeADisconnect() {
        SoftTarget t = new SoftTarget();
        TestHost h = t.connect(1, 8);
        TestHost a = t.connect(0, 32);
        t.core.deferred = true;
        h.capsule(FakeCore.OP_FLUSH, 1, 0);
        h.send(0);
        a.capsule(FakeCore.OP_HELD, 2, 0);
        a.send(0);
        t.pump();
        t.transport.beginShutdown();
        t.pump();
        assertEquals(1, t.transport.openQueues(), "the I/O queue waits for its backend request");
        t.core.releaseDeferred();
        t.pump();
        assertReleased(t);
        assertTrue(t.core.queue(0).closed && t.core.queue(1).closed);
        t.transport.close();
        for (TestHost x : t.hosts) x.close();
        t.fabric.deliverAll();
        assertTrue(t.fabric.resources().nothingLeaked(), t.fabric.resources().toString());
    }

    // ----------------------------------------------------------------------------------- invalidation switch

    @Test
    void remoteInvalidationOffOrUnsupportedSendsPlainSend() {
        for (int variant = 0; variant < 2; variant++) {
            SoftTarget t = variant == 0
                    ? new SoftTarget(c -> c.withRemoteInvalidation(false), SoftFabric.defaultAttributes())
                    : new SoftTarget(c -> c, SoftFabric.attributesWithoutMemoryManagementExtensions());
            try (t) {
                TestHost h = t.connect(1, 8);
                TestHost.HostBuffer r = h.regionBuffer(4096);
                MemorySegment c = h.capsule(FakeCore.OP_READ, 1, 0);
                TestHost.keyed(c, r.address(), 4096, r.rkey(), true);
                h.send(0);
                t.pump();
                assertEquals(0, h.response(1).status());
                assertFalse(h.response(1).withInvalidate());
                assertEquals(0, t.transport.metrics().remoteInvalidations.sum());
            }
        }
    }

    @Test
    void badSglGetsPreciseStatusWithoutTouchingTheCore() {
        try (SoftTarget t = new SoftTarget()) {
            TestHost h = t.connect(1, 8);
            MemorySegment c = h.capsule(FakeCore.OP_WRITE, 1, 0);
            TestHost.inCapsule(c, 0, 4096);
            h.send(100); // says 4096 bytes in the capsule, carries 100
            c = h.capsule(FakeCore.OP_WRITE, 2, 0);
            c.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 39, (byte) 0x30); // Last Segment: unsupported
            h.send(0);
            t.pump();
            assertEquals(0x0F, h.response(1).status() & 0xFF);
            assertEquals(0x11, h.response(2).status() & 0xFF);
            assertNull(null);
        }
    }

    @Test
    void twoPortsIpv4AnyAndIpv6SpecificEachReachTheCoreWithItsPortId() {
        SoftFabric fabric = SoftFabric.manual();
        fabric.addDevice("t0", "10.0.0.1");
        fabric.addDevice("t6", "fd00::1");
        fabric.addDevice("h0", "10.0.0.2");
        fabric.addDevice("h6", "fd00::2");
        FakeCore core = new FakeCore();
        RdmaTransport tr = new RdmaTransport(fabric, RdmaTransportConfig.of(List.of(
                RdmaPortConfig.of(1, "0.0.0.0", 4420), RdmaPortConfig.of(2, "fd00::1", 4421))), core);
        tr.open();
        List<TestHost> hosts = new ArrayList<>();
        Runnable pump = () -> {
            for (int i = 0; i < 10_000; i++) {
                int w = fabric.deliverAll() + tr.cmInvoker().invoke() + tr.pollerInvoker(0).invoke();
                for (TestHost h : hosts) w += h.poll();
                if (w == 0) return;
            }
        };
        try {
            assertEquals(2, tr.listenAddresses().size());
            assertEquals(4420, tr.listenAddresses().get(0).getPort());
            assertEquals(4421, tr.listenAddresses().get(1).getPort());
            TestHost v4 = new TestHost(fabric);
            hosts.add(v4);
            v4.connect(new java.net.InetSocketAddress("10.0.0.2", 0), new java.net.InetSocketAddress("10.0.0.1", 4420),
                    1, 8, 16, pump);
            TestHost v6 = new TestHost(fabric);
            hosts.add(v6);
            v6.connect(new java.net.InetSocketAddress("fd00::2", 0), new java.net.InetSocketAddress("fd00::1", 4421),
                    1, 8, 16, pump);
            assertEquals(CmEventType.ESTABLISHED, v4.connectResult.type());
            assertEquals(CmEventType.ESTABLISHED, v6.connectResult.type());
            assertEquals(1, core.queue(0).portId);
            assertEquals(2, core.queue(1).portId);
            v6.capsule(FakeCore.OP_FLUSH, 4, 0);
            v6.send(0);
            pump.run();
            assertEquals(0, v6.response(4).status());
        } finally {
            tr.stop(1000);
            for (TestHost h : hosts) h.close();
            fabric.deliverAll();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }

    @Test
    void coreRequestedDisconnectFromAnotherThreadDrainsAndTellsTheHost() throws Exception {
        try (SoftTarget t = new SoftTarget()) {
            TestHost h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            Thread keepAlive = new Thread(() -> t.core.queue(0).transport.requestDisconnect("keep-alive expired"));
            keepAlive.start();
            keepAlive.join();
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            assertEquals("keep-alive expired", q.closeReason());
            assertTrue(t.core.queue(0).closed);
            assertTrue(h.sawEvent(CmEventType.DISCONNECTED));
            assertReleased(t);
        }
    }

    @Test
    void hostDeathMidIoEndsInTheSameDrain() {
        try (SoftTarget t = new SoftTarget()) {
            TestHost h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            t.core.deferred = true;
            TestHost.HostBuffer r = h.regionBuffer(4096);
            MemorySegment c = h.capsule(FakeCore.OP_READ, 1, 0);
            TestHost.keyed(c, r.address(), 4096, r.rkey(), true);
            h.send(0);
            t.pump();
            t.fabric.faults().killQueuePair(h.qp()); // the host vanishes: no ACKs, no DREP
            t.core.releaseDeferred();               // our WRITE + SEND go out into the void
            for (int i = 0; i < 600 && t.transport.openQueues() > 0; i++) {
                t.fabric.advanceTime(java.time.Duration.ofMillis(100));
                t.pump();
            }
            assertEquals(QueueState.CLOSED, q.state());
            assertEquals(1, t.transport.metrics().errorCompletions(WcStatus.RETRY_EXC_ERR));
            assertTrue(t.core.queue(0).closed);
            assertReleased(t);
        }
    }
}
