package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WrOpcode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A failed post of a chain is partial: the requests before bad_wr are posted and complete, the rest are not, and
 * {@code postedBeforeFailure()} says how many were posted.
 */
class BadWorkRequestTest {

    @Test
    void aSendChainRefusedAtItsThirdRequestPostsExactlyTheFirstTwo() {
        Pair p = Pair.connected();
        p.client.wr(0, 1, WrOpcode.SEND, SendFlags.SIGNALED, 0, 8).next(
                p.client.wr(1, 2, WrOpcode.SEND, SendFlags.SIGNALED, 64, 8).next(
                        p.client.wr(2, 3, WrOpcode.SEND, SendFlags.SIGNALED, 128, 8)));
        p.fabric.faults().failPostSendAt(p.client.qp, 2, Errno.ENOMEM);
        assertEquals(Errno.ENOMEM, p.client.qp.postSend(p.client.sends[0]));
        assertEquals(2, p.client.qp.postedBeforeFailure());
        assertEquals(2, p.client.softQp().outstandingSends(), "the two posted sends hold their slots");
        p.fabric.deliverAll();
        assertEquals(List.of(1L, 2L), p.client.poll().stream().map(Pair.Wc::wrId).toList());
        List<Pair.Wc> received = p.server.poll();
        assertEquals(List.of(200L, 201L), received.stream().map(Pair.Wc::wrId).toList(), "two messages arrived");
        assertTrue(received.stream().allMatch(w -> w.status() == WcStatus.SUCCESS));
        p.close();
    }

    @Test
    void anUnsignaledWriteAcceptedBeforeARefusedSendStillLandsAndHoldsItsSlot() {
        Pair p = Pair.connected();
        p.client.fill(4096, 16, 7);
        p.client.wr(0, 1, WrOpcode.RDMA_WRITE, 0, 4096, 16).remote(p.server.addr(8192), p.server.mr.rkey()).next(
                p.client.wr(1, 2, WrOpcode.SEND, SendFlags.SIGNALED, 0, 8));
        p.fabric.faults().failPostSendAt(p.client.qp, 1, Errno.ENOMEM);
        assertEquals(Errno.ENOMEM, p.client.qp.postSend(p.client.sends[0]));
        assertEquals(1, p.client.qp.postedBeforeFailure(), "the WRITE was posted, the SEND was not");
        p.fabric.deliverAll();
        for (int i = 0; i < 16; i++) {
            assertEquals(p.client.slab.get(JAVA_BYTE, 4096 + i), p.server.slab.get(JAVA_BYTE, 8192 + i),
                    "the posted WRITE read its source buffer: it must not have been reused");
        }
        assertTrue(p.client.poll().isEmpty(), "an unsignaled WRITE reports nothing");
        assertEquals(1, p.client.softQp().outstandingSends(), "its slot stays taken until a later signaled completion");
        assertTrue(p.server.poll().isEmpty(), "no SEND reached the server");
        p.close();
    }

    @Test
    void aReceiveChainRefusedAtItsSecondRequestPostsOnlyTheFirst() {
        Pair p = Pair.connected();
        RecvWorkRequest[] r = new RecvWorkRequest[3];
        ScatterGatherEntry sges = ScatterGatherEntry.allocate(p.client.arena, 3);
        for (int i = 0; i < 3; i++) {
            sges.at(i).set(p.client.addr(16384 + 1024L * i), 1024, p.client.mr.lkey());
            r[i] = RecvWorkRequest.allocate(p.client.arena).wrId(300 + i).sgList(sges.at(i), 1);
        }
        r[0].next(r[1]);
        r[1].next(r[2]);
        int before = p.client.softQp().postedRecvs();
        p.fabric.faults().failPostRecvAt(p.client.qp, 1, Errno.EINVAL);
        assertEquals(Errno.EINVAL, p.client.qp.postRecv(r[0]));
        assertEquals(1, p.client.qp.postedBeforeFailure());
        assertEquals(before + 1, p.client.softQp().postedRecvs());
        p.client.qp.moveToError();
        List<Long> flushed = p.client.poll().stream().map(Pair.Wc::wrId).toList();
        assertEquals(List.of(100L, 101L, 102L, 103L, 300L), flushed, "only the posted receive flushes, in order");
        p.close();
    }

    @Test
    void aChainLongerThanTheSendQueueIsRefusedWhereTheQueueIsFull() {
        Pair.Setup s = new Pair.Setup();
        s.sendWr = 4;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        for (int i = 0; i < 6; i++) {
            p.client.wr(i, 10 + i, WrOpcode.SEND, i == 5 ? SendFlags.SIGNALED : 0, 64L * i, 8);
            if (i > 0) p.client.sends[i - 1].next(p.client.sends[i]);
        }
        assertEquals(Errno.ENOMEM, p.client.qp.postSend(p.client.sends[0]));
        assertEquals(4, p.client.qp.postedBeforeFailure(), "bad_wr is the fifth request");
        assertEquals(4, p.client.softQp().outstandingSends());
        p.fabric.deliverAll();
        assertEquals(4, p.server.poll().size(), "the four posted sends were delivered");
        p.close();
    }

    @Test
    void aFaultAtAnIndexWaitsForAChainThatReachesIt() {
        Pair p = Pair.connected();
        p.fabric.faults().failPostSendAt(p.client.qp, 1, Errno.ENOMEM);
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8), "a one-request chain does not reach index 1");
        p.client.wr(0, 2, WrOpcode.SEND, SendFlags.SIGNALED, 0, 8).next(p.client.wr(1, 3, WrOpcode.SEND, SendFlags.SIGNALED, 64, 8));
        assertEquals(Errno.ENOMEM, p.client.qp.postSend(p.client.sends[0]));
        assertEquals(1, p.client.qp.postedBeforeFailure());
        assertEquals(0, p.client.qp.postSend(p.client.sends[0]), "one-shot");
        p.fabric.deliverAll();
        assertEquals(List.of(1L, 2L, 2L, 3L), p.client.poll().stream().map(Pair.Wc::wrId).toList());
        p.fabric.faults().failNextPostSend(p.client.qp, Errno.EINVAL);
        assertEquals(Errno.EINVAL, p.client.send(4, SendFlags.SIGNALED, 0, 8));
        assertEquals(0, p.client.qp.postedBeforeFailure(), "failNextPostSend refuses the first request");
        p.close();
    }
}
