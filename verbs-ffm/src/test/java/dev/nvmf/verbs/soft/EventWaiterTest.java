package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.SendFlags;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The soft provider's channels and devices are waitable with the same epoll waiter as the ffm provider's: each
 * keeps a real eventfd readable exactly while it has events.
 */
class EventWaiterTest {
    private static final int CM = 1;
    private static final int ASYNC = 2;
    private static final int CQ = 3;

    private static Set<Integer> ready(EventWaiter w, long timeoutMillis) {
        Set<Integer> out = new HashSet<>();
        int n = w.await(timeoutMillis);
        for (int i = 0; i < n; i++) out.add(w.ready(i));
        return out;
    }

    @Test
    void cmEventsAsyncEventsAndCqEventsMakeTheirSourcesReadyUntilTaken() {
        Pair p = Pair.connected();
        try (EventWaiter w = p.fabric.createEventWaiter()) {
            w.add(p.serverEvents, CM);
            w.add(p.server.device, ASYNC);
            w.add(p.server.channel, CQ);
            assertEquals(Set.of(), ready(w, 0), "nothing pending");

            assertEquals(0, p.server.cq.requestNotify(false));
            assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
            p.fabric.deliverAll();
            assertEquals(Set.of(CQ), ready(w, -1));
            assertEquals(CompletionChannel.EVENT, p.server.channel.nextEvent(0));
            assertEquals(Set.of(), ready(w, 0), "taken");

            p.fabric.faults().fatalError(p.server.qp);
            assertEquals(Set.of(ASYNC), ready(w, -1));
            assertNotNull(p.server.device.pollAsyncEvent(0));
            assertEquals(Set.of(), ready(w, 0));

            p.client.id.disconnect();
            p.fabric.deliverAll();
            assertEquals(Set.of(CM), ready(w, -1));
            CmEvent e = p.serverEvents.pollEvent(0);
            assertEquals(CmEventType.DISCONNECTED, e.type());
            e.ack();
            assertEquals(Set.of(), ready(w, 0));

            p.fabric.faults().failCompletionChannel(p.server.channel, Errno.EIO);
            assertEquals(Set.of(CQ), ready(w, -1), "a failed channel is readable");
            assertEquals(-Errno.EIO, p.server.channel.nextEvent(0));
            assertEquals(Set.of(CQ), ready(w, 0), "and stays readable: remove it from the waiter");
            w.remove(p.server.channel);
            w.remove(p.server.device);
            w.remove(p.serverEvents);
        }
        p.close();
    }

    @Test
    void aThreadBlockedOnAnAutomaticFabricWakesForATimerDrivenCmEventWithoutPollingIt() throws InterruptedException {
        SoftFabric f = SoftFabric.automatic();
        f.timewait(java.time.Duration.ofMillis(50));
        Pair p = Pair.connected(f, new Pair.Setup());
        try (EventWaiter w = f.createEventWaiter()) {
            w.add(p.serverEvents, CM);
            Pair.drain(p.serverEvents);
            p.server.id.disconnect();
            // DISCONNECTED at once, TIMEWAIT_EXIT 50 ms later from the fabric's own thread.
            AtomicInteger woke = new AtomicInteger();
            Thread t = Thread.ofPlatform().start(() -> {
                while (true) {
                    if (w.await(-1) <= 0) continue;
                    CmEvent e;
                    while ((e = p.serverEvents.pollEvent(0)) != null) {
                        e.ack();
                        if (e.type() == CmEventType.TIMEWAIT_EXIT) {
                            woke.set(1);
                            return;
                        }
                    }
                }
            });
            t.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(t.isAlive(), "TIMEWAIT_EXIT never woke the waiter");
            assertEquals(1, woke.get());
            assertTrue(w.wakeups() <= 4, "woken for events only, not by a poll interval: " + w.wakeups());
        }
        p.close();
    }

    @Test
    void bothProvidersHandOutTheEpollWaiter() {
        try (SoftFabric f = SoftFabric.manual(); EventWaiter soft = f.createEventWaiter();
             dev.nvmf.verbs.ffm.FfmProvider ffm = new dev.nvmf.verbs.ffm.FfmProvider();
             EventWaiter real = ffm.createEventWaiter()) {
            assertEquals(soft.getClass(), real.getClass());
        }
    }

    @Test
    void closingTheFabricClosesTheEventfdsItsChannelsOpened() {
        SoftFabric f = SoftFabric.manual();
        f.addDevice("soft0", "10.0.0.1");
        var events = f.createEventChannel();
        int fd = events.readinessFd();
        assertTrue(fd >= 0);
        assertEquals(fd, events.readinessFd(), "one eventfd per channel");
        assertEquals(1, f.readinessFds.size());
        events.close();
        assertEquals(0, f.readinessFds.size(), "closed with its channel");
        f.device("soft0").readinessFd();
        f.close();
        assertEquals(0, f.readinessFds.size(), "and the rest with the fabric");
    }
}
