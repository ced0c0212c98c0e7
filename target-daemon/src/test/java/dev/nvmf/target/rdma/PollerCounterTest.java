package dev.nvmf.target.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * The I/O path's counters lose no update: each poller writes its own slot without an atomic, everyone else the
 * shared slot atomically, and the sum is exact once the writers are done.
 */
class PollerCounterTest {
    private static final int N = 1_000_000;

    @Test
    void pollersInTheirOwnSlotsAndOtherThreadsInTheSharedOneAddUpExactly() throws InterruptedException {
        PollerCounter c = new PollerCounter();
        List<Thread> threads = new ArrayList<>();
        for (int poller = 0; poller < 2; poller++) {
            int p = poller;
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < N; i++) c.increment(p);
            }));
        }
        // Two writers that are not pollers share slot 0: only an atomic add keeps both counts.
        for (int t = 0; t < 2; t++) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < N; i++) c.add(PollerCounter.SHARED, 1);
            }));
        }
        // An index outside 0..255 is no poller's slot: it counts atomically too, with the shared writers.
        threads.add(Thread.ofPlatform().start(() -> {
            for (int i = 0; i < N; i++) c.add(PollerCounter.MAX_POLLERS, 2);
        }));
        for (Thread t : threads) t.join();
        assertEquals(2L * N + 2L * N + 2L * N, c.sum());
    }

    @Test
    void theLastPollerHasItsOwnSlot() {
        PollerCounter c = new PollerCounter();
        c.add(PollerCounter.MAX_POLLERS - 1, 5);
        c.add(0, 7);
        c.add(PollerCounter.SHARED, 1);
        assertEquals(13, c.sum());
    }
}
