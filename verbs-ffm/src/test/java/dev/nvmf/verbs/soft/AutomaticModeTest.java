package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AutomaticModeTest {

    /** Waits (bounded) until the thread is parked, then checks it stays parked rather than spinning. */
    private static void assertBlocked(Thread t) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (t.getState() != Thread.State.TIMED_WAITING && t.getState() != Thread.State.WAITING) {
            assertTrue(System.nanoTime() < deadline, "thread never blocked: " + t.getState());
            Thread.onSpinWait();
        }
        for (int i = 0; i < 1000; i++) {
            Thread.State s = t.getState();
            assertTrue(s == Thread.State.TIMED_WAITING || s == Thread.State.WAITING || s == Thread.State.BLOCKED,
                    "a blocked caller must not spin: " + s);
        }
    }

    @Test
    void pollEventBlocksWithoutSpinningAndHonoursWakeup() throws Exception {
        SoftFabric f = SoftFabric.automatic();
        CmEventChannel ch = f.createEventChannel();
        AtomicReference<Object> got = new AtomicReference<>("unset");
        Thread t = Thread.ofPlatform().start(() -> got.set(ch.pollEvent(60_000)));
        assertBlocked(t);
        ch.wakeup();
        t.join(5_000);
        assertFalse(t.isAlive());
        assertNull(got.get(), "woken up: null");
        ch.close();
        f.close();
    }

    @Test
    void awaitEventBlocksWithoutSpinningAndHonoursWakeup() throws Exception {
        SoftFabric f = SoftFabric.automatic();
        SoftDevice d = f.addDevice("soft0", "10.0.0.1");
        CompletionChannel ch = d.createCompletionChannel();
        CompletionQueue cq = d.createCompletionQueue(8, ch);
        AtomicReference<Object> got = new AtomicReference<>("unset");
        Thread t = Thread.ofPlatform().start(() -> got.set(ch.awaitEvent(60_000)));
        assertBlocked(t);
        ch.wakeup();
        t.join(5_000);
        assertFalse(t.isAlive());
        assertNull(got.get());
        cq.close();
        ch.close();
        f.close();
    }

    @Test
    void ordinaryPollLoopsRunUnchanged() throws Exception {
        SoftFabric f = SoftFabric.automatic();
        // The same harness as the manual tests; here deliverAll is never needed: events and completions come
        // to blocking waits and polls by themselves.
        Pair.Setup s = new Pair.Setup();
        Pair p = Pair.connected(f, s);
        p.client.fill(0, 64, 1);
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 64));
        // The poller protocol: poll, arm, poll again, wait on the channel.
        List<Pair.Wc> got = p.server.poll();
        if (got.isEmpty()) {
            assertEquals(0, p.server.cq.requestNotify(false));
            got = p.server.poll();
            if (got.isEmpty()) {
                assertSame(p.server.cq, p.server.channel.awaitEvent(5_000), "woken through the channel");
                got = p.server.poll();
            }
        }
        assertEquals(1, got.size());
        assertEquals(WcStatus.SUCCESS, got.getFirst().status());
        assertEquals(-1L, p.server.at(0, 64).mismatch(p.client.at(0, 64)));
        p.client.id.disconnect();
        CmEvent d = p.serverEvents.pollEvent(5_000);
        assertNotNull(d);
        assertEquals(CmEventType.DISCONNECTED, d.type());
        d.ack();
        p.server.id.disconnect();
        // Timers run on their own in automatic mode: TIMEWAIT_EXIT arrives without anyone stepping.
        CmEvent tw = p.serverEvents.pollEvent(5_000);
        assertEquals(CmEventType.TIMEWAIT_EXIT, tw.type());
        tw.ack();
        p.client.poll();
        p.server.poll();
        p.close();
        assertTrue(f.resources().nothingLeaked(), f.resources().toString());
        f.close();
    }
}
