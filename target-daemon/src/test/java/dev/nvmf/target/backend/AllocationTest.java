package dev.nvmf.target.backend;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Once warm, submitting an operation allocates nothing on the caller's (poller's) thread: measured with
 * {@link com.sun.management.ThreadMXBean#getThreadAllocatedBytes} around many operations.
 */
// A lost operation would hang close(): fail instead, on a separate thread so the hang cannot hold the build.
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AllocationTest {
    private static final int WARM_UP = 20_000;
    private static final int MEASURED = 10_000;
    /** Slack for the measurement itself (the MXBean call); far below one object per operation. */
    private static final long SLACK_BYTES = 2048;

    @TempDir
    Path dir;

    /** A preallocated callback that only counts, as a core's would. */
    private static final class Counter implements BackendCallback {
        final AtomicInteger completions = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();

        @Override
        public void backendDone(Object attachment, int result) {
            if (result != 0) {
                failures.incrementAndGet();
            }
            completions.incrementAndGet();
        }

        void awaitCount(int n) {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (completions.get() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("only " + completions.get() + " of " + n + " completed");
                }
                Thread.onSpinWait();
            }
        }
    }

    private static long allocatedBytes() {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long bytes = mx.getThreadAllocatedBytes(Thread.currentThread().threadId());
        assertTrue(bytes >= 0, "this JVM does not measure thread allocation");
        return bytes;
    }

    @Test
    void ramBackendAllocatesNothingPerOperation() {
        try (Arena arena = Arena.ofConfined(); RamBackend ram = new RamBackend(1 << 20)) {
            MemorySegment buf = arena.allocate(4096);
            Counter counter = new Counter();
            Object attachment = new Object();
            ramOps(ram, buf, counter, attachment, WARM_UP);
            allocatedBytes();
            long before = allocatedBytes();
            ramOps(ram, buf, counter, attachment, MEASURED);
            long allocated = allocatedBytes() - before;
            assertEquals(0, counter.failures.get());
            assertTrue(allocated < SLACK_BYTES, allocated + " bytes allocated over " + MEASURED + " RAM operations");
        }
    }

    private static void ramOps(RamBackend ram, MemorySegment buf, Counter counter, Object attachment, int n) {
        for (int i = 0; i < n; i++) {
            long offset = (i * 4096L) & ((1 << 20) - 1);
            switch (i % 4) {
                case 0 -> ram.write(offset, buf, 4096, (i & 8) != 0, attachment, counter);
                case 1 -> ram.read(offset, buf, 4096, attachment, counter);
                case 2 -> ram.writeZeroes(offset, 4096, attachment, counter);
                default -> ram.flush(attachment, counter);
            }
        }
    }

    @Test
    void fileBackendSubmitPathAllocatesNothingPerOperation() throws Exception {
        try (Arena arena = Arena.ofShared();
             FileBackend file = FileBackend.open(BackendSpec.file(dir.resolve("a.img"), 1 << 20, true)
                     .withMaxInFlight(256))) {
            MemorySegment buf = arena.allocate(4096);
            Counter counter = new Counter();
            Object attachment = new Object();
            int submitted = fileOps(file, buf, counter, attachment, WARM_UP, 0);
            allocatedBytes();
            long before = allocatedBytes();
            submitted = fileOps(file, buf, counter, attachment, MEASURED, submitted);
            long allocated = allocatedBytes() - before;
            counter.awaitCount(submitted);
            assertEquals(0, counter.failures.get());
            assertTrue(allocated < SLACK_BYTES, allocated + " bytes allocated over " + MEASURED
                    + " file submissions");
        }
    }

    /** Submits n operations, keeping at most 64 in flight (waiting without allocating); returns the total. */
    private static int fileOps(FileBackend file, MemorySegment buf, Counter counter, Object attachment, int n,
                               int already) {
        int total = already;
        for (int i = 0; i < n; i++) {
            while (total - counter.completions.get() >= 64) {
                Thread.onSpinWait();
            }
            long offset = (i * 4096L) & ((1 << 20) - 1);
            switch (i % 4) {
                case 0 -> file.write(offset, buf, 4096, false, attachment, counter);
                case 1 -> file.read(offset, buf, 4096, attachment, counter);
                case 2 -> file.writeZeroes(offset, 4096, attachment, counter);
                default -> file.read(offset + 4096 < (1 << 20) ? offset : 0, buf, 4096, attachment, counter);
            }
            total++;
        }
        return total;
    }
}
