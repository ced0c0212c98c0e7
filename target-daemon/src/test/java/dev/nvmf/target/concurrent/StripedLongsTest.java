package dev.nvmf.target.concurrent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * The striped counters replace atomic adds on the I/O path, so they must count exactly what atomic adds would:
 * every add from every thread, whether it has a stripe of its own or shares the overflow stripe, and a reader
 * running alongside the writers never sees a counter go backwards.
 */
class StripedLongsTest {
    @Test
    void sumsEveryAddFromConcurrentThreadsExactly() throws Exception {
        StripedLongs c = new StripedLongs(3);
        int threads = 4;
        int adds = 100_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            writers.add(Thread.ofPlatform().start(() -> {
                await(start);
                for (int i = 0; i < adds; i++) {
                    c.add(0, 1);
                    c.add(1, id + 1, 2, 3);
                    c.add(0, 1, 1, 1, 2, 1);
                }
            }));
        }
        start.countDown();
        for (Thread w : writers) w.join();
        assertEquals(2L * threads * adds, c.sum(0));
        assertEquals((1 + 2 + 3 + 4) * (long) adds + (long) threads * adds, c.sum(1));
        assertEquals(4L * threads * adds, c.sum(2));
    }

    @Test
    void threadsPastTheStripeLimitShareOneStripeWithoutLosingAdds() throws Exception {
        StripedLongs c = new StripedLongs(1);
        // More threads than a row has stripes: 8 of these land on the shared stripe, and they all run at once.
        int threads = StripedLongs.MAX_STRIPES + 8;
        int adds = 20_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> writers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            writers.add(Thread.ofPlatform().start(() -> {
                await(start);
                for (int i = 0; i < adds; i++) c.add(0, 1);
            }));
        }
        start.countDown();
        for (Thread w : writers) w.join();
        assertEquals((long) threads * adds, c.sum(0));
    }

    @Test
    void aReaderNeverSeesACounterGoBackwards() throws Exception {
        StripedLongs c = new StripedLongs(1);
        AtomicLong backwards = new AtomicLong();
        CountDownLatch done = new CountDownLatch(2);
        for (int t = 0; t < 2; t++) {
            Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 200_000; i++) c.add(0, 1);
                done.countDown();
            });
        }
        long last = 0;
        while (done.getCount() > 0) {
            long now = c.sum(0);
            if (now < last) backwards.incrementAndGet();
            last = now;
        }
        done.await();
        assertEquals(0, backwards.get(), "reads that went below an earlier read");
        assertEquals(400_000, c.sum(0));
    }

    @Test
    void aWarmThreadAllocatesNothing() {
        StripedLongs c = new StripedLongs(4);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        addMany(c, 300_000); // the stripe, the thread-local entry, the JIT
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long before = mx.getThreadAllocatedBytes(tid);
            addMany(c, 100_000);
            least = Math.min(least, mx.getThreadAllocatedBytes(tid) - before);
        }
        assertEquals(0, least, "bytes allocated by 100000 warm adds");
        assertEquals(800_000L * 2, c.sum(3));
    }

    @Test
    void rejectsAWidthOfZeroAndAnIndexOutsideTheRow() {
        assertThrows(IllegalArgumentException.class, () -> new StripedLongs(0));
        StripedLongs c = new StripedLongs(2);
        assertThrows(IndexOutOfBoundsException.class, () -> c.sum(2));
        assertThrows(IndexOutOfBoundsException.class, () -> c.sum(-1));
    }

    private static void addMany(StripedLongs c, int n) {
        for (int i = 0; i < n; i++) {
            c.add(i & 1, 1);
            c.add(2, 1, 3, 2);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
