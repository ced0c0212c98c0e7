package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.poller.Poller;
import dev.nvmf.target.rdma.queue.QueueState;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.LogCapture;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.CmMessage;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transport under faults (issue "Faults and teardown"): each test injects one fault on the soft fabric and shows
 * that the queue it hits ends (bounded), that nothing else is disturbed, and that everything comes back.
 */
class RdmaFaultsTest {
    static final String SECOND_TARGET_IP = "10.0.1.1";

    private static RdmaQueue queueOf(SoftTarget t, int qid, String localIp) {
        for (RdmaQueue q : t.transport.cm().queues()) {
            if (q.qid() == qid && q.localAddress().getHostAddress().equals(localIp)) return q;
        }
        throw new AssertionError("no queue qid " + qid + " on " + localIp);
    }

    /**
     * One failure while a poller handles a completion (here the core throws from begin() and from execute()) ends
     * that queue, fatal for its controller, and nothing else: the poller carries on with the rest of the batch it
     * polled (another queue's capsule, in the same batch of completions), and the failed queue still drains and
     * gives everything back.
     */
    @Test
    void aFailureHandlingOneCompletionIsContainedToItsQueueAndTheRestOfTheBatchIsProcessed() {
        for (int opcode : new int[] {FakeCore.OP_THROW_IN_BEGIN, FakeCore.OP_THROW_IN_EXECUTE}) {
            try (SoftTarget t = new SoftTarget()) {
                ScriptedInitiator a = t.connect(1, 8);
                ScriptedInitiator b = t.connect(2, 8);
                RdmaQueue qa = queueOf(t, 1, SoftTarget.TARGET_IP);
                RdmaQueue qb = queueOf(t, 2, SoftTarget.TARGET_IP);
                assertEquals(0, Capsules.send(a, Capsules.command(opcode, 1, 0), 0));
                assertEquals(0, Capsules.send(b, Capsules.command(FakeCore.OP_FLUSH, 2, 0), 0));
                t.fabric.deliverAll(); // both receives completed: one batch for the poller
                t.transport.pollerInvoker(0).invoke(); // must not throw
                t.pump();
                assertEquals(0, Cqe.find(b, 2).status(), "the rest of the batch was processed");
                assertEquals(QueueState.LIVE, qb.state());
                assertEquals(null, t.core.queue(1).transportFailure);
                assertEquals(QueueState.CLOSED, qa.state());
                assertTrue(t.core.queue(0).transportFailure != null, "fatal for the controller");
                assertTrue(t.core.queue(0).closed);
                assertEquals(null, Cqe.find(a, 1), "no response to a command the core failed on");
                assertEquals(0, Capsules.send(b, Capsules.command(FakeCore.OP_FLUSH, 3, 0), 0));
                t.pump();
                assertEquals(0, Cqe.find(b, 3).status(), "the other queue still works");
                b.disconnect();
                t.pump();
                t.assertEverythingReturned();
            }
        }
    }

    /**
     * Every error completion other than a flush is logged with its status and vendor_err (the provider's syndrome,
     * the one detail of why the hardware failed), at most {@code BURST} lines at once and then one a second per
     * poller, the next line saying how many were held back; every one is counted by status. 25 queues each get a
     * SEND completed with RETRY_EXC_ERR (a host that stopped answering).
     */
    @Test
    void everyErrorCompletionIsLoggedWithItsVendorErrorRateLimitedAndCountedByStatus() {
        try (SoftTarget t = new SoftTarget(); LogCapture log = new LogCapture(Poller.class)) {
            for (int qid = 1; qid <= 25; qid++) failOneSend(t, qid);
            assertEquals(25, t.transport.metrics().errorCompletions(WcStatus.RETRY_EXC_ERR));
            List<String> lines = log.containing("completed with RETRY_EXC_ERR");
            assertEquals(10, lines.size(), "a burst of 10 lines, then rate-limited: " + lines);
            for (String l : lines) {
                assertTrue(l.startsWith("WARNING") && l.contains("SEND completed with RETRY_EXC_ERR (vendor_err 0x0)"), l);
            }
            t.fabric.advanceTime(Duration.ofSeconds(1));
            failOneSend(t, 26);
            lines = log.containing("completed with RETRY_EXC_ERR");
            assertEquals(11, lines.size());
            assertTrue(lines.get(10).contains("qid 26") && lines.get(10).contains("(15 more error completion(s) on poller 0 not logged)"),
                    lines.get(10));
            assertEquals(0, t.transport.openQueues(), "every failed queue was torn down");
            t.assertEverythingReturned();
        }
    }

    /** Connects queue {@code qid}, and the response SEND of its first command fails with RETRY_EXC_ERR. */
    private static void failOneSend(SoftTarget t, int qid) {
        ScriptedInitiator h = t.connect(qid, 4);
        RdmaQueue q = queueOf(t, qid, SoftTarget.TARGET_IP);
        t.fabric.faults().completeNextSendWith(q.queuePair(), WcStatus.RETRY_EXC_ERR);
        assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, 1, 0), 0));
        t.pump();
        assertEquals(QueueState.CLOSED, q.state());
    }

    /**
     * The core's completions reach the poller through its inbox, one per request the core holds. The inbox must take
     * as many as can be outstanding at once: every context of every queue admitted on the poller, not a fixed
     * 65,536. Here 65 queues of depth 1024 (the largest max_queue_depth) have 66,560 commands in the core, and the
     * core answers them all at once on the poller's thread (inline completions).
     */
    @Test
    void thePollerTakesACompletionForEveryRequestItAdmitted() {
        int queues = 65;
        int depth = 1024;
        try (SoftTarget t = new SoftTarget(c -> RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, SoftTarget.TARGET_IP,
                SoftTarget.PORT).withMaxQueueDepth(depth).withInCapsuleDataSize(0))).withCqSize(1 << 18),
                SoftFabric.defaultAttributes())) {
            t.core.deferred = true;
            List<ScriptedInitiator> hosts = new ArrayList<>();
            for (int qid = 1; qid <= queues; qid++) {
                // Small host buffers: capsules without data, responses of 16 bytes.
                ScriptedInitiator h = t.startConnect(Capsules.queueOptions(t.source(), t.target(), qid, depth, 16)
                        .depths(depth + 2, depth).bufferSizes(64, 64));
                assertEquals(ScriptedInitiator.State.CONNECTED, h.state());
                for (int cid = 0; cid < depth; cid++) {
                    assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, cid, 0), 0));
                }
                hosts.add(h);
            }
            t.pump();
            assertEquals(queues * depth, t.core.deferredCount());
            assertEquals(queues * depth, t.core.releaseDeferred(), "the core answers every command");
            t.pump();
            for (ScriptedInitiator h : hosts) {
                assertEquals(depth, h.responsesWaiting());
                for (Cqe r : Cqe.received(h)) assertEquals(0, r.status());
            }
            assertEquals((long) queues * depth, t.transport.metrics().responsesSent.sum());
        }
    }

    /**
     * QP numbers are unique per device only (rxe numbers the first QP of both rxe0 and rxe1 17): an asynchronous
     * event names a QP by number, so it must be looked up with the device it was read from. Here two target devices
     * hand out QP 17; the COMM_EST of the queue on t1 (its RTU was lost) must establish that queue, not the one on
     * t0 that was accepted after it.
     */
    @Test
    void asyncEventsAreKeyedByDeviceAndQpNumber() {
        try (SoftTarget t = new SoftTarget(c -> RdmaTransportConfig.of(
                List.of(RdmaPortConfig.of(1, "0.0.0.0", SoftTarget.PORT))), SoftFabric.defaultAttributes())) {
            t.fabric.addDevice("t1", SECOND_TARGET_IP);
            t.fabric.nextQpNumber("t0", 17).nextQpNumber("t1", 17);
            t.fabric.acceptLeavesRtr(true);
            t.fabric.faults().dropNext(CmMessage.RTU); // the queue on t1 is established only by COMM_EST
            ScriptedInitiator onT1 = t.startConnect(Capsules.queueOptions(t.source(),
                    new InetSocketAddress(SECOND_TARGET_IP, SoftTarget.PORT), 1, 8, 16));
            ScriptedInitiator onT0 = t.connect(2, 8);
            RdmaQueue q1 = queueOf(t, 1, SECOND_TARGET_IP);
            RdmaQueue q0 = queueOf(t, 2, SoftTarget.TARGET_IP);
            assertEquals(17, q1.queuePair().qpNum());
            assertEquals(17, q0.queuePair().qpNum());
            assertEquals(QueueState.CONNECTING, q1.state());
            assertEquals(QueueState.LIVE, q0.state());
            assertEquals(0, Capsules.send(onT1, Capsules.command(FakeCore.OP_FLUSH, 5, 0), 0));
            t.pump(); // the capsule completes a receive in RTR: COMM_EST on t1's context, for QP 17
            assertEquals(QueueState.LIVE, q1.state(), "COMM_EST reached the queue on t1");
            assertEquals(0, Cqe.find(onT1, 5).status(), "the early capsule was answered");
            assertEquals(0, Capsules.send(onT0, Capsules.command(FakeCore.OP_FLUSH, 6, 0), 0));
            t.pump();
            assertEquals(0, Cqe.find(onT0, 6).status());
        }
    }
}
