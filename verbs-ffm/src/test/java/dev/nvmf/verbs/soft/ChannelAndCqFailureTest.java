package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WorkCompletion;
import org.junit.jupiter.api.Test;

import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A completion channel whose get-event fails, and a CQ that fails, reported as return codes. */
class ChannelAndCqFailureTest {

    @Test
    void nextEventReportsAnEventItsQueueTimeoutsAndWakeupsAsCodes() {
        Pair p = Pair.connected();
        CompletionChannel ch = p.server.channel;
        assertEquals(0, ch.nextEvent(0), "nothing yet");
        assertEquals(0, p.server.cq.requestNotify(false));
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(CompletionChannel.EVENT, ch.nextEvent(0));
        assertSame(p.server.cq, ch.eventQueue());
        assertEquals(0, ch.nextEvent(0), "one event per arming");
        ch.wakeup();
        assertEquals(0, ch.nextEvent(-1), "a wakeup ends even an unbounded wait");
        p.close();
    }

    @Test
    void aFailedChannelReturnsMinusErrnoForEverAndTheOldCallThrows() {
        Pair p = Pair.connected();
        CompletionChannel ch = p.server.channel;
        assertEquals(0, p.server.cq.requestNotify(false));
        p.fabric.faults().failCompletionChannel(ch, Errno.EIO);
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(-Errno.EIO, ch.nextEvent(0), "failure wins over the pending event");
        assertEquals(-Errno.EIO, ch.nextEvent(-1), "and does not block");
        VerbsException e = assertThrows(VerbsException.class, () -> ch.awaitEvent(0));
        assertEquals("ibv_get_cq_event", e.call());
        assertEquals(Errno.EIO, e.errno());
        p.close();
    }

    @Test
    void aThreadBlockedOnTheChannelWakesWhenItFails() throws InterruptedException {
        SoftFabric f = SoftFabric.automatic();
        Pair p = Pair.connected(f, new Pair.Setup());
        AtomicInteger result = new AtomicInteger(1);
        Thread waiter = Thread.ofPlatform().start(() -> result.set(p.server.channel.nextEvent(-1)));
        f.faults().failCompletionChannel(p.server.channel, Errno.ENODEV);
        waiter.join(60_000);
        assertFalse(waiter.isAlive(), "the waiter is still blocked");
        assertEquals(-Errno.ENODEV, result.get());
        p.close();
    }

    @Test
    void aFailedCqPollsNegativeRaisesCqErrNamingItAndPutsItsQpsInError() {
        Pair p = Pair.connected();
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        p.fabric.faults().failCompletionQueue(p.server.cq, Errno.EIO);
        WorkCompletion wc = p.server.wc;
        assertEquals(-Errno.EIO, p.server.cq.poll(wc), "even with a completion queued");
        assertEquals(-Errno.EIO, p.server.cq.poll(wc), "for ever");
        AsyncEvent cqErr = p.server.device.pollAsyncEvent(0);
        assertEquals(AsyncEvent.Type.CQ_ERR, cqErr.type());
        assertEquals(AsyncEvent.Affiliation.CQ, cqErr.type().affiliation());
        assertSame(p.server.cq, cqErr.cq());
        AsyncEvent qpFatal = p.server.device.pollAsyncEvent(0);
        assertEquals(AsyncEvent.Type.QP_FATAL, qpFatal.type());
        assertEquals(p.server.qp.qpNum(), qpFatal.qpNum());
        assertEquals(QpState.ERR, p.server.qp.state());
        p.close();
    }
}
