package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.queue.QueueState;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.RequestState;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Posts that fail part-way (issue "Faults and teardown", defect 5): the work requests before {@code bad_wr} are on
 * the queue and complete like any other, so nothing they use is released before their completions; the post
 * failure is fatal for the controller. And a SEND that fails after its unsignaled WRITE succeeded.
 */
class PostFailureTest {

    private static RdmaQueue onlyQueue(SoftTarget t) {
        assertEquals(1, t.transport.cm().queues().size());
        return t.transport.cm().queues().get(0);
    }

    private static ScriptedInitiator.HostBuffer region(ScriptedInitiator h, int size) {
        return h.exposeBuffer(size, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE,
                ScriptedInitiator.HostKey.REGION);
    }

    private static void keyedRead(ScriptedInitiator h, int cid, ScriptedInitiator.HostBuffer b, int length) {
        MemorySegment c = Capsules.command(FakeCore.OP_READ, cid, 0);
        Capsules.keyed(c, b.address(), length, b.rkey(), false);
        assertEquals(0, Capsules.send(h, c, 0));
    }

    /**
     * The response chain of a read is WRITE (unsignaled) then SEND; the provider accepts the WRITE and refuses the
     * SEND (bad_wr = the SEND). The WRITE is queued and may still read the data buffer: before, the budget and the
     * buffer went back at once, and the buffer could go to another host's RDMA READ. Now the buffer stays out until
     * the WRITE's completion (its flush in the drain), the controller is failed, and then everything comes back.
     */
    @Test
    void aWriteAcceptedBeforeARefusedSendKeepsItsBufferUntilTheHardwareIsDone() {
        try (SoftTarget t = new SoftTarget(c -> c.withBuffers(1, 1), SoftFabric.defaultAttributes())) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            BufferPool small = t.transport.poller(0).devices()[0].pools()[0];
            t.fabric.faults().failPostSendAt(q.queuePair(), 1, Errno.ENOMEM);
            keyedRead(h, 1, region(h, 4096), 4096);
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke(); // capsule, core, then the chain: WRITE posted, SEND refused
            assertEquals(small.capacity() - 1, small.available(), "the buffer the queued WRITE reads is still out");
            assertEquals(QueueState.DRAINING, q.state());
            assertNotNull(t.core.queue(0).transportFailure, "the post failure is fatal for the controller");
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            assertNull(Cqe.find(h, 1), "no response: its SEND was never posted");
            t.assertEverythingReturned();
        }
    }

    /**
     * Four capsules in one batch: their four receives are reposted in one chain, and the provider refuses the third.
     * The first two are posted and must be counted: before, none was, so the drain's count was short by two, the
     * queue was released (its QP destroyed) while two receives were still on it, and their flushes found contexts
     * already free.
     */
    @Test
    void aPartialReceivePostCountsWhatWasPosted() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            t.fabric.faults().failPostRecvAt(q.queuePair(), 2, Errno.ENOMEM);
            for (int cid = 1; cid <= 4; cid++) {
                assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, cid, 0), 0));
            }
            t.fabric.deliverAll();
            t.transport.pollerInvoker(0).invoke();
            assertEquals(8 - 4 + 2, q.postedReceives(), "the two receives before bad_wr are posted");
            assertEquals(QueueState.DRAINING, q.state());
            assertNotNull(t.core.queue(0).transportFailure, "the post failure is fatal for the controller");
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            t.assertEverythingReturned(); // no QP destroyed with receives still on it
        }
    }

    /**
     * The data WRITE succeeds (unsignaled: no completion), then its SEND fails (the host's receive failed, so the
     * target's SEND ends REM_OP_ERR). The SEND's completion is the chain's: the data reached the host, the buffer
     * comes back with it, the error is counted, and the queue ends, fatal for its controller.
     */
    @Test
    void aSendThatFailsAfterItsUnsignaledWriteSucceeded() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            byte[] pattern = new byte[4096];
            for (int i = 0; i < pattern.length; i++) pattern[i] = (byte) (i * 7 + 3);
            MemorySegment.copy(MemorySegment.ofArray(pattern), 0, t.core.disk, 0, pattern.length);
            ScriptedInitiator.HostBuffer b = region(h, 4096);
            t.fabric.faults().completeNextRecvWith(h.queuePair(), WcStatus.LOC_LEN_ERR);
            keyedRead(h, 1, b, 4096);
            t.pump();
            assertArrayEquals(pattern, b.read(), "the WRITE succeeded");
            assertEquals(1, t.transport.metrics().errorCompletions(WcStatus.REM_OP_ERR), "the SEND failed");
            assertEquals(QueueState.CLOSED, q.state());
            assertNotNull(t.core.queue(0).transportFailure);
            assertEquals(0, t.core.disk.get(ValueLayout.JAVA_BYTE, 4096), "nothing else written");
            t.assertEverythingReturned();
        }
    }

    /** Four keyed 4 KiB reads on a fresh depth-8 queue, arriving together, so that one pass chains their responses. */
    private static void fourKeyedReads(SoftTarget t, ScriptedInitiator h) {
        for (int cid = 1; cid <= 4; cid++) keyedRead(h, cid, region(h, 4096), 4096);
        t.fabric.deliverAll();
    }

    /**
     * One pass chains the responses of four reads, WRITE + SEND each, and posts them in one ibv_post_send; the
     * provider takes three work requests and refuses the fourth (bad_wr = the second SEND). Each request gets the
     * outcome of its own part, once: the first was posted whole and ends with its SEND's completion (flushed in the
     * drain); the second's WRITE is on the queue, so its buffer and slots stay out until that WRITE's flush; the last
     * two were not posted at all and end at once, their buffers and slots back. Fatal for the controller, once.
     * Before, each response was a post of its own, two work requests long, and none failed.
     */
    @Test
    void aPostOfAChainOfResponsesFailingInsideTheSecondGivesEachRequestItsOwnOutcome() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            BufferPool small = t.transport.poller(0).devices()[0].pools()[0];
            long postSends = t.transport.poller(0).verbsCalls().count(VerbsCalls.Call.POST_SEND);
            t.fabric.faults().failPostSendAt(q.queuePair(), 3, Errno.ENOMEM);
            fourKeyedReads(t, h);
            t.transport.pollerInvoker(0).invoke();
            assertEquals(postSends + 1, t.transport.poller(0).verbsCalls().count(VerbsCalls.Call.POST_SEND),
                    "the four responses in one post");
            assertEquals(3, t.transport.metrics().sendWorkRequestsPosted.sum(), "WRITE, SEND, WRITE");
            assertEquals(1, t.transport.metrics().responsesSent.sum(), "only the first response was posted whole");
            assertEquals(QueueState.DRAINING, q.state());
            assertEquals(2, q.count(RequestState.SENDING), "the first and the second wait for the hardware");
            assertEquals(small.capacity() - 2, small.available(), "the buffers the posted WRITEs read are still out");
            assertEquals(q.budget().capacity() - 4, q.budget().available(), "the slots of the two posted chains");
            assertNotNull(t.core.queue(0).transportFailure, "the post failure is fatal for the controller");
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            for (int cid = 2; cid <= 4; cid++) assertNull(Cqe.find(h, cid), "no response " + cid + ": its SEND was not posted");
            assertTrue(q.budget().idle(), "every slot and READ credit back, none twice");
            assertEquals(q.contextCount(), q.count(RequestState.FREE), "every context ended, once");
            t.assertEverythingReturned();
        }
    }

    /**
     * A drain starting in the pass that chained responses and READs, before the chain was posted (here a teardown
     * command the inbox runs after the core's completions): nothing of the chain is on the hardware, so its requests
     * end with the drain, without a response, their buffers and slots back, and nothing is posted. Before, every
     * response and READ was posted at once, before the drain.
     */
    @Test
    void aDrainWithAChainNotYetPostedEndsItsRequestsAndPostsNothing() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            RdmaQueue q = onlyQueue(t);
            BufferPool small = t.transport.poller(0).devices()[0].pools()[0];
            long postSends = t.transport.poller(0).verbsCalls().count(VerbsCalls.Call.POST_SEND);
            for (int cid = 1; cid <= 2; cid++) keyedRead(h, cid, region(h, 4096), 4096);
            for (int cid = 3; cid <= 4; cid++) {
                MemorySegment c = Capsules.command(FakeCore.OP_WRITE, cid, 0);
                ScriptedInitiator.HostBuffer b = region(h, 4096);
                Capsules.keyed(c, b.address(), 4096, b.rkey(), false);
                assertEquals(0, Capsules.send(h, c, 0));
            }
            t.fabric.deliverAll();
            q.requestDrain("test: teardown in the same pass");
            t.transport.pollerInvoker(0).invoke();
            assertEquals(postSends, t.transport.poller(0).verbsCalls().count(VerbsCalls.Call.POST_SEND), "nothing posted");
            assertEquals(0, t.transport.metrics().sendWorkRequestsPosted.sum());
            assertEquals(2, t.core.queue(0).completed, "the core ran the two reads");
            assertEquals(2, t.core.queue(0).executed, "the writes' data never came: they were not executed");
            assertEquals(QueueState.DRAINING, q.state());
            assertEquals(0, q.count(RequestState.SEND_CHAINED) + q.count(RequestState.READ_CHAINED));
            assertEquals(0, q.count(RequestState.SENDING) + q.count(RequestState.READING));
            assertTrue(q.budget().idle(), "the chain's slots and READ credits back");
            assertEquals(small.capacity(), small.available(), "the chain's buffers back");
            t.pump();
            assertEquals(QueueState.CLOSED, q.state());
            for (int cid = 1; cid <= 4; cid++) assertNull(Cqe.find(h, cid), "no response " + cid);
            assertEquals(q.contextCount(), q.count(RequestState.FREE), "every context ended, once");
            t.assertEverythingReturned();
        }
    }
}
