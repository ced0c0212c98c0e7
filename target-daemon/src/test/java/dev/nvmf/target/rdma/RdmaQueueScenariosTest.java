package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.RdmaMetrics.RejectReason;
import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.poller.PollerDevice;
import dev.nvmf.target.rdma.queue.QueueState;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.RequestState;
import dev.nvmf.target.rdma.support.Attrs;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.CmMessage;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static dev.nvmf.target.rdma.RdmaTransportSoftTest.fill;
import static dev.nvmf.target.rdma.RdmaTransportSoftTest.same;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaQueueScenariosTest {

    private static RdmaQueue onlyQueue(SoftTarget t) {
        assertEquals(1, t.transport.cm().queues().size());
        return t.transport.cm().queues().get(0);
    }

    /** Everything the queue took comes back, and the soft fabric saw no QP destroyed before it was drained. */
    private static void assertReleased(SoftTarget t) {
        t.assertEverythingReturned();
    }

    /** Host memory for a keyed SGL under its region's rkey (not invalidatable: use the plain keyed subtype). */
    private static ScriptedInitiator.HostBuffer region(ScriptedInitiator h, int size) {
        return h.exposeBuffer(size, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE,
                ScriptedInitiator.HostKey.REGION);
    }

    /** Sends command {@code cid} with a plain keyed SGL of {@code length} bytes of {@code b}. */
    private static void keyed(ScriptedInitiator h, int opcode, int cid, ScriptedInitiator.HostBuffer b, int length) {
        MemorySegment c = Capsules.command(opcode, cid, 0);
        Capsules.keyed(c, b.address(), length, b.rkey(), false);
        assertEquals(0, Capsules.send(h, c, 0));
    }

    // ---------------------------------------------------------------------------------------------- rejects

    private static int rejectStatus(ScriptedInitiator h) {
        assertEquals(ScriptedInitiator.State.REJECTED, h.state());
        byte[] p = h.rejectPrivateData();
        assertEquals(0, (p[0] & 0xFF) | (p[1] & 0xFF) << 8, "recfmt");
        return (p[2] & 0xFF) | (p[3] & 0xFF) << 8;
    }

    private static int connectWith(SoftTarget t, byte[] pdata, int responderResources) {
        return rejectStatus(t.startConnect(ScriptedInitiator.Options.to(t.target()).source(t.source())
                .privateData(pdata).rdmaDepths(responderResources, 0).depths(32, 32)));
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
            ScriptedInitiator ok = t.connect(1, 32);
            assertEquals(ScriptedInitiator.State.CONNECTED, ok.state());
            assertEquals(6, connectWith(t, new ConnectRequestData(0, 2, 32, 31, 1).encode(), 16), "CQ full");
        }
    }

    // ---------------------------------------------------------------------------------------- early capsule

    @Test
    void capsulesBeforeEstablishedAreKeptAndReplayedInOrder() {
        try (SoftTarget t = new SoftTarget()) {
            t.fabric.acceptLeavesRtr(true);
            t.fabric.faults().dropNext(CmMessage.RTU); // the RTU is lost: only COMM_EST + rdma_notify establish
            ScriptedInitiator h = t.connect(1, 8);
            assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
            RdmaQueue q = onlyQueue(t);
            assertEquals(QueueState.CONNECTING, q.state());
            for (int cid = 1; cid <= 3; cid++) {
                assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, cid, 0), 0));
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke(); // the poller sees the capsules; the CM thread has not run
            assertEquals(3, q.parkedCapsules());
            assertEquals(QueueState.CONNECTING, q.state());
            assertEquals(8, q.postedReceives(), "receives reposted even for kept capsules");
            t.pump(); // CM: COMM_EST -> rdma_notify -> ESTABLISHED -> replay
            assertEquals(QueueState.LIVE, q.state());
            assertEquals(List.of(1, 2, 3), Cqe.cids(h));
            for (Cqe r : Cqe.received(h)) assertEquals(0, r.status());
            assertEquals(3, t.transport.metrics().earlyCapsules.sum());
            assertEquals(0, t.transport.metrics().errorCompletions(WcStatus.GENERAL_ERR));
        }
    }

    // ------------------------------------------------------------------------------------------ send budget

    @Test
    void sendBudgetExhaustedWaitersResumeInFifoOrder() {
        // max_qp_wr 4: the QP's whole send queue is 4 WRs; a read's chain (WRITE + SEND) takes 2.
        try (SoftTarget t = new SoftTarget(c -> c, Attrs.with(4, 16))) {
            ScriptedInitiator h = t.connect(1, 4);
            RdmaQueue q = onlyQueue(t);
            assertEquals(4, q.budget().capacity());
            List<ScriptedInitiator.HostBuffer> bufs = new ArrayList<>();
            fill(t.core.disk, 4 * 4096, 3);
            for (int cid = 1; cid <= 4; cid++) {
                ScriptedInitiator.HostBuffer r = region(h, 4096);
                bufs.add(r);
                MemorySegment c = Capsules.command(FakeCore.OP_READ, cid, (cid - 1) * 4096L);
                Capsules.keyed(c, r.address(), 4096, r.rkey(), false);
                assertEquals(0, Capsules.send(h, c, 0));
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke();
            assertEquals(2, q.sendWaiters(), "two chains fit, two wait");
            assertEquals(0, q.budget().available());
            assertEquals(2, t.transport.metrics().sendBudgetWaits.sum());
            t.pump();
            assertEquals(List.of(1, 2, 3, 4), Cqe.cids(h), "waiters resumed in FIFO order");
            for (int i = 0; i < 4; i++) {
                assertEquals(0, Cqe.received(h).get(i).status());
                assertTrue(same(bufs.get(i).memory(), 0, t.core.disk, i * 4096L, 4096));
            }
            assertTrue(q.budget().idle());
            assertTrue(SoftTarget.sendErrors(h).isEmpty());
        }
    }

    @Test
    void outstandingReadsNeverExceedTheNegotiatedDepth() {
        try (SoftTarget t = new SoftTarget(c -> c, Attrs.with(16384, 1))) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            assertEquals(1, q.budget().readCapacity());
            List<ScriptedInitiator.HostBuffer> bufs = new ArrayList<>();
            for (int cid = 1; cid <= 3; cid++) {
                ScriptedInitiator.HostBuffer r = region(h, 8192);
                fill(r.memory(), 8192, cid);
                bufs.add(r);
                MemorySegment c = Capsules.command(FakeCore.OP_WRITE, cid, (cid - 1) * 8192L);
                Capsules.keyed(c, r.address(), 8192, r.rkey(), false);
                Capsules.send(h, c, 0);
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke();
            assertEquals(2, q.readWaiters());
            assertEquals(0, q.budget().readAvailable());
            t.pump();
            assertEquals(List.of(1, 2, 3), Cqe.cids(h));
            for (int i = 0; i < 3; i++) assertTrue(same(bufs.get(i).memory(), 0, t.core.disk, i * 8192L, 8192));
            assertTrue(q.budget().idle());
            assertEquals(0, t.fabric.readDepthViolations(), "the fabric enforced the depth and saw no READ beyond it");
        }
    }

    // ------------------------------------------------------------------------------------ errors and drains

    @Test
    void errorCompletionMidIoClosesOnlyThatQueue() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator a = t.connect(1, 8);
            ScriptedInitiator b = t.connect(2, 8);
            RdmaQueue qa = t.transport.cm().queues().get(0);
            t.core.deferred = true;
            ScriptedInitiator.HostBuffer r = region(a, 4096);
            MemorySegment c = Capsules.command(FakeCore.OP_READ, 7, 0);
            Capsules.keyed(c, r.address(), 4096, r.rkey(), false);
            Capsules.send(a, c, 0);
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
            Capsules.send(b, Capsules.command(FakeCore.OP_FLUSH, 9, 0), 0);
            t.pump();
            assertEquals(0, Cqe.find(b, 9).status());
            assertEquals(1, t.transport.openQueues());
        }
    }

    @Test
    void disconnectWhileIoInFlightReturnsEveryBuffer() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 16);
            RdmaQueue q = onlyQueue(t);
            t.core.deferred = true;
            // Reads held by the "backend", a held AER-like command, and writes whose READ is in flight.
            for (int cid = 1; cid <= 4; cid++) {
                ScriptedInitiator.HostBuffer r = region(h, 65536);
                MemorySegment c = Capsules.command(FakeCore.OP_READ, cid, 0);
                Capsules.keyed(c, r.address(), 65536, r.rkey(), true);
                Capsules.send(h, c, 0);
            }
            Capsules.send(h, Capsules.command(FakeCore.OP_HELD, 5, 0), 0);
            t.pump();
            assertEquals(4, t.core.deferredCount());
            assertEquals(1, t.core.queue(0).heldCount());
            for (int cid = 6; cid <= 8; cid++) {
                ScriptedInitiator.HostBuffer r = region(h, 4096);
                MemorySegment c = Capsules.command(FakeCore.OP_WRITE, cid, 0);
                Capsules.keyed(c, r.address(), 4096, r.rkey(), false);
                Capsules.send(h, c, 0);
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
            ScriptedInitiator h = t.connect(1, 4);
            RdmaQueue q = onlyQueue(t);
            assertEquals(5, q.budget().capacity());
            for (int cid = 1; cid <= 2; cid++) keyed(h, FakeCore.OP_READ, cid, region(h, 65536), 65536);
            keyed(h, FakeCore.OP_READ, 3, region(h, 4096), 4096);
            keyed(h, FakeCore.OP_WRITE, 4, region(h, 4096), 4096);
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke(); // the chains of 1 and 2 are posted, not yet executed by the fabric
            assertEquals(1, q.sendWaiters(), "the 4 KiB read waits for send slots");
            assertEquals(1, q.count(RequestState.NEED_BUFFER), "the write waits");
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
            ScriptedInitiator bad = t.connect(1, 4);
            ScriptedInitiator good = t.connect(2, 4);
            t.core.deferred = true; // nothing completes: every capsule stays outstanding
            for (int cid = 1; cid <= 5; cid++) {
                Capsules.send(bad, Capsules.command(FakeCore.OP_FLUSH, cid, 0), 0);
            }
            t.pump();
            assertEquals(1, t.transport.metrics().creditOverruns.sum());
            t.core.releaseDeferred();
            t.pump();
            assertTrue(t.core.queue(0).closed);
            assertFalse(t.core.queue(1).closed);
            t.core.deferred = false;
            Capsules.send(good, Capsules.command(FakeCore.OP_FLUSH, 1, 0), 0);
            t.pump();
            assertEquals(0, Cqe.find(good, 1).status());
        }
    }

    @Test
    void shutdownDrainsLikeADisconnect() {
        SoftTarget t = new SoftTarget();
        ScriptedInitiator h = t.connect(1, 8);
        ScriptedInitiator a = t.connect(0, 32);
        t.core.deferred = true;
        Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, 1, 0), 0);
        Capsules.send(a, Capsules.command(FakeCore.OP_HELD, 2, 0), 0);
        t.pump();
        t.transport.beginShutdown();
        t.pump();
        assertEquals(1, t.transport.openQueues(), "the I/O queue waits for its backend request");
        t.core.releaseDeferred();
        t.pump();
        assertReleased(t);
        assertTrue(t.core.queue(0).closed && t.core.queue(1).closed);
        t.transport.close();
        for (ScriptedInitiator x : t.hosts) x.close();
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
                ScriptedInitiator h = t.connect(1, 8);
                ScriptedInitiator.HostBuffer r = region(h, 4096);
                MemorySegment c = Capsules.command(FakeCore.OP_READ, 1, 0);
                Capsules.keyed(c, r.address(), 4096, r.rkey(), true);
                Capsules.send(h, c, 0);
                t.pump();
                assertEquals(0, Cqe.find(h, 1).status());
                assertFalse(Cqe.find(h, 1).withInvalidate());
                assertEquals(0, t.transport.metrics().remoteInvalidations.sum());
            }
        }
    }

    @Test
    void badSglGetsPreciseStatusWithoutTouchingTheCore() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            MemorySegment c = Capsules.command(FakeCore.OP_WRITE, 1, 0);
            Capsules.inCapsule(c, 0, 4096);
            Capsules.send(h, c, 100); // says 4096 bytes in the capsule, carries 100
            c = Capsules.command(FakeCore.OP_WRITE, 2, 0);
            c.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 39, (byte) 0x30); // Last Segment: unsupported
            Capsules.send(h, c, 0);
            t.pump();
            assertEquals(0x0F, Cqe.find(h, 1).status() & 0xFF);
            assertEquals(0x11, Cqe.find(h, 2).status() & 0xFF);
            // The core saw both only as transport errors to answer (begin() with the status set), executed neither,
            // and nothing reached its disk.
            FakeCore.Queue core = t.core.queue(0);
            assertEquals(2, core.begun);
            assertEquals(0, core.executed, "the core executed nothing");
            assertEquals(0x11, core.lastTransportStatus & 0xFF);
            assertEquals(-1L, t.core.disk.asSlice(0, 4096).mismatch(java.lang.foreign.MemorySegment.ofArray(
                    new byte[4096])), "nothing written");
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
        List<ScriptedInitiator> hosts = new ArrayList<>();
        try {
            assertEquals(2, tr.listenAddresses().size());
            assertEquals(4420, tr.listenAddresses().get(0).getPort());
            assertEquals(4421, tr.listenAddresses().get(1).getPort());
            ScriptedInitiator v4 = new ScriptedInitiator(fabric, Capsules.queueOptions(
                    new InetSocketAddress("10.0.0.2", 0), new InetSocketAddress("10.0.0.1", 4420), 1, 8, 16));
            hosts.add(v4);
            v4.startConnect();
            SoftTarget.pump(fabric, tr, hosts);
            ScriptedInitiator v6 = new ScriptedInitiator(fabric, Capsules.queueOptions(
                    new InetSocketAddress("fd00::2", 0), new InetSocketAddress("fd00::1", 4421), 1, 8, 16));
            hosts.add(v6);
            v6.startConnect();
            SoftTarget.pump(fabric, tr, hosts);
            assertEquals(ScriptedInitiator.State.CONNECTED, v4.state());
            assertEquals(ScriptedInitiator.State.CONNECTED, v6.state());
            assertEquals(1, core.queue(0).portId);
            assertEquals(2, core.queue(1).portId);
            Capsules.send(v6, Capsules.command(FakeCore.OP_FLUSH, 4, 0), 0);
            SoftTarget.pump(fabric, tr, hosts);
            assertEquals(0, Cqe.find(v6, 4).status());
        } finally {
            tr.stop(1000);
            for (ScriptedInitiator h : hosts) h.close();
            fabric.deliverAll();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }

    @Test
    void coreRequestedDisconnectFromAnotherThreadDrainsAndTellsTheHost() throws Exception {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
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
    void anEventTheIdleCmAgentTookIsAcknowledgedBeforeAQueueIsReleased() {
        // rdma_destroy_id blocks until every event of its id that was handed out is acknowledged
        // (rdma_get_cm_event(3)); the soft provider refuses it instead. Here the TIMEWAIT_EXIT of a queue whose
        // release is already waiting wakes the idle agent: its next duty cycle must take and acknowledge the event
        // before it runs the release and destroys the id. (An earlier agent took the event in its idle block and the
        // CM thread hung there on the real provider; the waiter takes nothing.)
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            h.disconnect();
            t.fabric.deliverAll();
            t.transport.cmInvoker().invoke();      // DISCONNECTED: the queue drains on its poller
            t.transport.pollerInvoker(0).invoke(); // QP to error: the flushes wait on the CQ
            t.transport.cmInvoker().invoke();      // the CM agent bounds the drain
            t.fabric.advanceTime(java.time.Duration.ofMillis(10));
            t.fabric.deliverAll();                 // TIMEWAIT_EXIT of the queue's id waits on the CM channel
            assertTrue(t.transport.cm().prepareToBlock());
            t.transport.cm().block();              // the event wakes the idle agent (the channel is readable)
            t.transport.pollerInvoker(0).invoke(); // the flushes: drained, the release goes to the CM agent
            assertEquals(1, t.transport.openQueues());
            t.transport.cmInvoker().invoke();      // acknowledges the event, then releases
            assertEquals(0, t.transport.openQueues());
            t.pump();
            t.transport.stop(1000);
            for (ScriptedInitiator x : t.hosts) x.close();
            t.fabric.deliverAll();
            assertTrue(t.fabric.resources().nothingLeaked(), t.fabric.resources().toString());
        }
    }

    @Test
    void hostDeathMidIoEndsInTheSameDrain() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            t.core.deferred = true;
            ScriptedInitiator.HostBuffer r = region(h, 4096);
            MemorySegment c = Capsules.command(FakeCore.OP_READ, 1, 0);
            Capsules.keyed(c, r.address(), 4096, r.rkey(), true);
            Capsules.send(h, c, 0);
            t.pump();
            t.fabric.faults().killQueuePair(h.queuePair()); // the host vanishes: no ACKs, no DREP
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
