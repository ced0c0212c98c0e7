package dev.nvmf.target.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.Test;

/** The I/O path records into pre-resolved meters without allocating (the team rule: nothing per I/O once warm). */
class NamespaceIoMetricsAllocationTest {
    @Test
    void recordingAllocatesNothingOnceWarm() {
        TargetMetrics metrics = new TargetMetrics();
        NamespaceIoMetrics io = metrics.namespaceIo("nqn.2024-01.dev.nvmf:a", 1, IoOpcode.READ);
        PollerMetrics poller = metrics.poller(0);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        run(io, poller, 300_000); // warm: first-touch allocations, class loading, JIT
        // A recording that allocated would allocate in every round; a one-off (a late JIT transition) would
        // not. The quietest of five rounds must be exactly zero.
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long before = mx.getThreadAllocatedBytes(tid);
            run(io, poller, 100_000);
            least = Math.min(least, mx.getThreadAllocatedBytes(tid) - before);
        }
        assertEquals(0, least, "bytes allocated by 100000 recordings");
    }

    private static void run(NamespaceIoMetrics io, PollerMetrics poller, int n) {
        for (int i = 0; i < n; i++) {
            poller.commandStarted();
            io.record(1_000 + (i % 1000) * 997L, 4096);
            if ((i & 1023) == 0) {
                io.recordError(5_000);
                io.recordBackendError();
                poller.sendBudgetWait();
            }
            poller.workRequestsPosted(2, 1);
            poller.commandCompleted();
        }
    }
}
