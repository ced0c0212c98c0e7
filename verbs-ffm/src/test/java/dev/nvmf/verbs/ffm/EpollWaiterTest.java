package dev.nvmf.verbs.ffm;

import com.sun.management.ThreadMXBean;
import dev.nvmf.verbs.EventSource;
import dev.nvmf.verbs.EventWaiter;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** epoll + timerfd + eventfd: no wake-ups while idle, and prompt ones for an event, the timer and a wakeup. */
class EpollWaiterTest {

    /** A thread blocked in {@code await(-1)}; its first result. */
    private static final class Blocked {
        final AtomicInteger count = new AtomicInteger(Integer.MIN_VALUE);
        final AtomicInteger token = new AtomicInteger(Integer.MIN_VALUE);
        final CountDownLatch entered = new CountDownLatch(1);
        final Thread thread;

        Blocked(EventWaiter w) {
            thread = Thread.ofPlatform().start(() -> {
                entered.countDown();
                int n = w.await(-1);
                if (n > 0) token.set(w.ready(0));
                count.set(n);
            });
        }

        void join() throws InterruptedException {
            thread.join(TimeUnit.SECONDS.toMillis(60));
            assertFalse(thread.isAlive(), "the waiter did not wake");
        }
    }

    @Test
    void anIdleWaiterDoesNotWakeAndAWakeupFromAnotherThreadEndsTheWait() throws InterruptedException {
        try (EpollWaiter w = new EpollWaiter(); EventFd source = new EventFd("source")) {
            w.add(source::fd, 7);
            Blocked b = new Blocked(w);
            assertTrue(b.entered.await(60, TimeUnit.SECONDS));
            // Idle for a while: a poller with a 100 ms timeout would have woken several times by now.
            Thread.sleep(300);
            assertEquals(0, w.wakeups(), "an idle waiter made a wake-up");
            assertTrue(b.thread.isAlive());
            w.wakeup();
            b.join();
            assertEquals(1, b.count.get());
            assertEquals(EventWaiter.WAKEUP, b.token.get());
            assertEquals(1, w.wakeups());
            assertEquals(0, w.await(0), "the wakeup was consumed");
        }
    }

    @Test
    void aReadySourceWakesItWithItsTokenUntilItsEventsAreTaken() throws InterruptedException {
        try (EpollWaiter w = new EpollWaiter(); EventFd a = new EventFd("a"); EventFd b = new EventFd("b")) {
            w.add(a::fd, 1);
            EventSource sb = b::fd;
            w.add(sb, 2);
            Blocked waiting = new Blocked(w);
            assertTrue(waiting.entered.await(60, TimeUnit.SECONDS));
            b.signal();
            waiting.join();
            assertEquals(1, waiting.count.get());
            assertEquals(2, waiting.token.get());
            assertEquals(1, w.await(0), "level-triggered: still ready until taken");
            assertEquals(2, w.ready(0));
            b.clear();
            assertEquals(0, w.await(0));
            a.signal();
            b.signal();
            assertEquals(2, w.await(0));
            assertEquals(3, w.ready(0) + w.ready(1));
            w.remove(sb);
            a.clear();
            assertEquals(0, w.await(0), "a removed source is not reported");
            assertThrows(IllegalArgumentException.class, () -> w.add(() -> -1, 3));
            assertThrows(IllegalArgumentException.class, () -> w.add(a::fd, -1));
        }
    }

    @Test
    void theTimerFiresAtItsDeadlineOnceAndCanBeCancelled() throws InterruptedException {
        try (EpollWaiter w = new EpollWaiter()) {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
            w.timerAt(deadline);
            assertEquals(1, w.await(-1));
            assertTrue(System.nanoTime() >= deadline, "fired before its deadline");
            assertEquals(EventWaiter.TIMER, w.ready(0));
            assertEquals(0, w.await(0), "one-shot");
            w.timerAt(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20));
            w.cancelTimer();
            assertEquals(0, w.await(200), "a cancelled timer does not fire");
            w.timerAt(System.nanoTime() - 1_000_000);
            assertEquals(1, w.await(-1), "a deadline in the past fires at once");
            assertEquals(EventWaiter.TIMER, w.ready(0));
            // A deadline moved earlier by another thread takes effect for the thread already waiting.
            w.timerAt(System.nanoTime() + TimeUnit.HOURS.toNanos(1));
            Blocked b = new Blocked(w);
            assertTrue(b.entered.await(60, TimeUnit.SECONDS));
            w.timerAt(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10));
            b.join();
            assertEquals(EventWaiter.TIMER, b.token.get());
        }
    }

    @Test
    void waitingAllocatesNothing() {
        ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (EpollWaiter w = new EpollWaiter(); EventFd source = new EventFd("source")) {
            w.add(source::fd, 5);
            long best = Long.MAX_VALUE;
            // Until C2 has compiled the loop, downcalls box their arguments: on a loaded machine that takes many
            // rounds, so warm up for up to 40 and take the quietest (any allocation per cycle would show in every one).
            for (int round = 0; round < 40 && best != 0; round++) {
                long before = mx.getCurrentThreadAllocatedBytes();
                int seen = 0;
                for (int i = 0; i < 5_000; i++) {
                    source.signal();
                    w.wakeup();
                    w.timerAt(System.nanoTime() - 1);
                    int n = w.await(-1);
                    for (int k = 0; k < n; k++) seen += w.ready(k) == 5 ? 1 : 0;
                    source.clear();
                    w.await(0);
                    w.cancelTimer();
                }
                long allocated = mx.getCurrentThreadAllocatedBytes() - before;
                assertEquals(5_000, seen);
                if (round > 0) best = Math.min(best, allocated);   // round 0 warms up
            }
            assertEquals(0, best, "bytes allocated by 5,000 signal/await/timer cycles (quietest of 39 rounds)");
        }
    }
}
