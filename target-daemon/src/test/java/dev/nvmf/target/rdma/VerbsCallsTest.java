package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.VerbsCalls.Call;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The poller's count of verbs downcalls ({@link VerbsCalls}, {@code nvmf_rdma_verbs_calls_total}) matches what a
 * scripted exchange makes it do, call by call: the fabric delivers, then the poller runs one duty cycle through its
 * invoker, so every poll is accounted for.
 */
class VerbsCallsTest {
    /** Counts in {@link Call} order: poll_cq, poll_cq_empty, post_send, post_recv, req_notify, get_cq_event, ack, epoll. */
    private static long[] delta(long[] before, long[] after) {
        long[] d = new long[after.length];
        for (int i = 0; i < d.length; i++) d[i] = after[i] - before[i];
        return d;
    }

    private static long[] counts(SoftTarget t) {
        return t.transport.poller(0).verbsCalls().snapshot();
    }

    /** One duty cycle of the poller after the fabric delivered what was posted; returns the calls it made. */
    private static long[] dutyCycle(SoftTarget t) {
        t.fabric.deliverAll();
        long[] before = counts(t);
        t.transport.pollerInvoker(0).invoke();
        return delta(before, counts(t));
    }

    private static ScriptedInitiator.HostBuffer region(ScriptedInitiator h, int size) {
        return h.exposeBuffer(size, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE,
                ScriptedInitiator.HostKey.REGION);
    }

    private static void sendKeyed(ScriptedInitiator h, int opcode, int cid, ScriptedInitiator.HostBuffer b) {
        MemorySegment c = Capsules.command(opcode, cid, 0);
        Capsules.keyed(c, b.address(), 4096, b.rkey(), false);
        assertEquals(0, Capsules.send(h, c, 0));
    }

    @Test
    void aKeyedReadIsTwoPollsOnePostSendAndOnePostRecv() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            ScriptedInitiator.HostBuffer b = region(h, 4096);
            t.pump();
            sendKeyed(h, FakeCore.OP_READ, 1, b);
            // The RECV: polled (1 completion), the RDMA WRITE and the SEND posted in one chain, the receive reposted.
            assertArrayEquals(new long[] {1, 0, 1, 1, 0, 0, 0, 0}, dutyCycle(t));
            // The SEND's completion (the WRITE is unsignaled): one poll, nothing posted.
            assertArrayEquals(new long[] {1, 0, 0, 0, 0, 0, 0, 0}, dutyCycle(t));
            // Nothing left: one empty poll.
            assertArrayEquals(new long[] {1, 1, 0, 0, 0, 0, 0, 0}, dutyCycle(t));
            h.doWork();
            assertEquals(0, Cqe.find(h, 1).status());
        }
    }

    @Test
    void aKeyedWriteIsThreePollsTwoPostSendsAndOnePostRecv() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            ScriptedInitiator.HostBuffer b = region(h, 4096);
            t.pump();
            sendKeyed(h, FakeCore.OP_WRITE, 1, b);
            // The RECV: the RDMA READ posted, the receive reposted.
            assertArrayEquals(new long[] {1, 0, 1, 1, 0, 0, 0, 0}, dutyCycle(t));
            // The READ's completion: the core runs the write, the SEND is posted.
            assertArrayEquals(new long[] {1, 0, 1, 0, 0, 0, 0, 0}, dutyCycle(t));
            // The SEND's completion.
            assertArrayEquals(new long[] {1, 0, 0, 0, 0, 0, 0, 0}, dutyCycle(t));
            assertArrayEquals(new long[] {1, 1, 0, 0, 0, 0, 0, 0}, dutyCycle(t));
            h.doWork();
            assertEquals(0, Cqe.find(h, 1).status());
        }
    }

    /**
     * Receives freed in one duty cycle are reposted in one post_recv per queue, and the responses the cycle produced
     * go out in one post_send, whatever their number (before: one post_send per response).
     */
    @Test
    void commandsArrivingTogetherPostTheirResponsesAndReceivesInOneCallEach() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 8);
            t.pump();
            for (int cid = 1; cid <= 4; cid++) {
                assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, cid, 0), 0));
            }
            // Four RECVs in one poll; four response SENDs in one post_send; one post_recv.
            assertArrayEquals(new long[] {1, 0, 1, 1, 0, 0, 0, 0}, dutyCycle(t));
            assertArrayEquals(new long[] {1, 0, 0, 0, 0, 0, 0, 0}, dutyCycle(t));
            h.doWork();
            for (int cid = 1; cid <= 4; cid++) assertEquals(0, Cqe.find(h, cid).status());
        }
    }

    /**
     * Queue depth 32, 32 keyed 4 KiB reads arriving in one pass: their 32 RDMA WRITEs and 32 SENDs go out in one
     * ibv_post_send (before: 32), every host buffer gets its own bytes and every response comes back.
     */
    @Test
    void thirtyTwoKeyedReadsInOnePassAreOnePostSend() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 32);
            ScriptedInitiator.HostBuffer[] b = new ScriptedInitiator.HostBuffer[32];
            for (int i = 0; i < 32; i++) {
                for (int k = 0; k < 4096; k++) t.core.disk.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i * 4096L + k, (byte) (i + k));
                b[i] = region(h, 4096);
            }
            t.pump();
            for (int i = 0; i < 32; i++) {
                MemorySegment c = Capsules.command(FakeCore.OP_READ, i + 1, i * 4096L);
                Capsules.keyed(c, b[i].address(), 4096, b[i].rkey(), false);
                assertEquals(0, Capsules.send(h, c, 0));
            }
            // 32 RECVs: a full batch, so the poller looks again (empty); one post_send for 64 WRs, one post_recv.
            assertArrayEquals(new long[] {2, 1, 1, 1, 0, 0, 0, 0}, dutyCycle(t));
            assertEquals(64, t.transport.metrics().sendWorkRequestsPosted.sum());
            // The 32 SEND completions (the WRITEs are unsignaled): nothing posted.
            assertArrayEquals(new long[] {2, 1, 0, 0, 0, 0, 0, 0}, dutyCycle(t));
            h.doWork();
            for (int i = 0; i < 32; i++) {
                assertEquals(0, Cqe.find(h, i + 1).status());
                byte[] data = b[i].read();
                for (int k = 0; k < 4096; k++) assertEquals((byte) (i + k), data[k], "buffer " + i + " byte " + k);
            }
        }
    }

    /**
     * 32 keyed writes in one pass with a READ depth of 16: the 16 READs that fit go out in one post_send; their
     * completions, in one pass, give 16 SENDs and the next 16 READs, again in one post_send (before: 16, then 32).
     */
    @Test
    void keyedWritesBeyondTheReadDepthPostOneChainPerPass() {
        try (SoftTarget t = new SoftTarget()) {
            ScriptedInitiator h = t.connect(1, 32);
            assertEquals(16, t.transport.cm().queues().get(0).budget().readCapacity());
            ScriptedInitiator.HostBuffer[] b = new ScriptedInitiator.HostBuffer[32];
            for (int i = 0; i < 32; i++) {
                b[i] = region(h, 4096);
                byte[] data = new byte[4096];
                java.util.Arrays.fill(data, (byte) (i + 1));
                b[i].write(data);
            }
            t.pump();
            for (int i = 0; i < 32; i++) {
                MemorySegment c = Capsules.command(FakeCore.OP_WRITE, i + 1, i * 4096L);
                Capsules.keyed(c, b[i].address(), 4096, b[i].rkey(), false);
                assertEquals(0, Capsules.send(h, c, 0));
            }
            assertArrayEquals(new long[] {2, 1, 1, 1, 0, 0, 0, 0}, dutyCycle(t)); // 16 READs
            assertArrayEquals(new long[] {1, 0, 1, 0, 0, 0, 0, 0}, dutyCycle(t)); // 16 SENDs, 16 READs
            assertArrayEquals(new long[] {2, 1, 1, 0, 0, 0, 0, 0}, dutyCycle(t)); // 16 SENDs done, 16 READs: 16 SENDs
            assertArrayEquals(new long[] {1, 0, 0, 0, 0, 0, 0, 0}, dutyCycle(t)); // the last 16 SENDs done
            h.doWork();
            for (int i = 0; i < 32; i++) {
                assertEquals(0, Cqe.find(h, i + 1).status());
                for (int k = 0; k < 4096; k += 511) {
                    assertEquals((byte) (i + 1), t.core.disk.get(java.lang.foreign.ValueLayout.JAVA_BYTE, i * 4096L + k));
                }
            }
        }
    }
}
