package dev.nvmf.target.backend.rbd;

import dev.nvmf.target.backend.BackendCallback;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Once warm, an RBD operation allocates nothing on the Java heap: not on the submitting (poller's) thread, and not
 * in the completion upcall on librbd's threads (which the JVM attaches once and keeps). Measured with
 * {@link com.sun.management.ThreadMXBean#getThreadAllocatedBytes} over every thread involved, around thousands of
 * reads, writes, FUA writes, write zeroes, deallocations and flushes against the real test cluster.
 */
@ExtendWith(CephTestCluster.class)
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdAllocationTest {
    private static final int WARM_UP = 3000;
    private static final int MEASURED = 1500;
    private static final int STABLE_WINDOW = 750;
    private static final int DEPTH = 16;
    private static final long IMAGE_BYTES = 16 << 20;

    /** A preallocated callback, as the core's is: counts, and notes the threads it runs on without allocating. */
    private static final class Counter implements BackendCallback {
        final AtomicInteger completions = new AtomicInteger();
        final AtomicInteger failures = new AtomicInteger();
        final AtomicInteger unknownThreads = new AtomicInteger();
        final Thread[] threads = new Thread[64];
        final AtomicInteger threadCount = new AtomicInteger();
        volatile boolean learning = true;

        @Override
        public void backendDone(Object attachment, int result) {
            if (result != 0) {
                failures.incrementAndGet();
            }
            Thread t = Thread.currentThread();
            if (!known(t)) {
                if (learning) {
                    synchronized (this) {
                        if (!known(t)) {
                            threads[threadCount.getAndIncrement()] = t;
                        }
                    }
                } else {
                    unknownThreads.incrementAndGet();
                }
            }
            completions.incrementAndGet();
        }

        private boolean known(Thread t) {
            int n = threadCount.get();
            for (int i = 0; i < n; i++) {
                if (threads[i] == t) {
                    return true;
                }
            }
            return false;
        }
    }

    @Test
    void operationsAllocateNothingOnTheSubmitterOrInTheUpcallOnceWarm() throws Exception {
        try (TestImages images = new TestImages(CephTestCluster.cluster())) {
            String name = images.create("alloc", IMAGE_BYTES);
            try (RbdBackend rbd = RbdBackend.open(CephTestCluster.cluster().spec(name), false, 64);
                 Arena arena = Arena.ofShared()) {
                MemorySegment buf = arena.allocate(4096, 4096);
                buf.fill((byte) 0x3c);
                Counter counter = new Counter();
                Object attachment = new Object();
                waitFor(counter, ops(rbd, buf, counter, attachment, WARM_UP, 0));
                counter.learning = false;

                long[] ids = threadIds(counter);
                com.sun.management.ThreadMXBean mx =
                        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
                assertTrue(mx.getThreadAllocatedBytes(ids[0]) >= 0, "this JVM does not measure thread allocation");
                // Warm means the JIT has settled. Until a call path is compiled with its downcall handles as
                // constants, each handle counts its invocations and, at the 127th, has its lambda form customized
                // (about 1 KiB of bytecode generation, once per handle); a deoptimization can resume the counting.
                // So: windows of operations until four in a row allocate nothing on any thread involved, then the
                // measured window. Reading another thread's count allocates on the reader (the MXBean builds
                // arrays): the callback threads are read outside the submitter's own interval, which uses the
                // allocation-free current-thread query.
                int quiet = 0;
                int windows = 0;
                for (int w = 0; quiet < 4; w++, windows++) {
                    assertTrue(w < 40, "no " + STABLE_WINDOW + " operations in a row without allocation after "
                            + w + " windows");
                    long[] allocated = window(mx, ids, rbd, buf, counter, attachment, STABLE_WINDOW);
                    quiet = Arrays.stream(allocated).allMatch(b -> b == 0) ? quiet + 1 : 0;
                }
                long[] allocated = window(mx, ids, rbd, buf, counter, attachment, MEASURED);

                long total = 0;
                StringBuilder per = new StringBuilder();
                for (int i = 0; i < ids.length; i++) {
                    long bytes = allocated[i];
                    total += bytes;
                    per.append(i == 0 ? "submitter" : "callback thread " + ids[i]).append(": ").append(bytes)
                            .append(" B; ");
                }
                System.out.println("RbdAllocationTest: warm after " + WARM_UP + " + " + windows + " x " + STABLE_WINDOW
                        + " operations; " + MEASURED + " operations on " + (ids.length - 1)
                        + " librbd callback thread(s): " + per);
                assertEquals(0, counter.failures.get(), "operations failed");
                assertEquals(0, counter.unknownThreads.get(),
                        "completions arrived on threads not seen while warming up (a thread attached per upcall?)");
                assertEquals(0, rbd.upcallFailures());
                assertEquals(0, total, total + " bytes allocated over " + MEASURED + " operations: " + per);
            }
        }
    }

    /**
     * Runs {@code n} operations and returns the bytes each thread of {@code ids} allocated meanwhile (the
     * submitter first). The ops counter continues from the completions already counted.
     */
    private static long[] window(com.sun.management.ThreadMXBean mx, long[] ids, RbdBackend rbd, MemorySegment buf,
                                 Counter counter, Object attachment, int n) {
        long[] before = new long[ids.length];
        long[] after = new long[ids.length];
        int already = counter.completions.get();
        readOthers(mx, ids, before);
        before[0] = mx.getThreadAllocatedBytes(ids[0]);
        int submitted = ops(rbd, buf, counter, attachment, n, already);
        waitFor(counter, submitted);
        after[0] = mx.getThreadAllocatedBytes(ids[0]);
        readOthers(mx, ids, after);
        for (int i = 0; i < ids.length; i++) {
            after[i] -= before[i];
        }
        return after;
    }

    /** The callback threads' allocated bytes (ids[1..]) into {@code into}. */
    private static void readOthers(com.sun.management.ThreadMXBean mx, long[] ids, long[] into) {
        for (int i = 1; i < ids.length; i++) {
            into[i] = mx.getThreadAllocatedBytes(ids[i]);
        }
    }

    /** The submitting thread first, then every thread a callback ran on. */
    private static long[] threadIds(Counter counter) {
        int n = counter.threadCount.get();
        long[] ids = new long[n + 1];
        ids[0] = Thread.currentThread().threadId();
        for (int i = 0; i < n; i++) {
            ids[i + 1] = counter.threads[i].threadId();
        }
        assertTrue(n >= 1 && Arrays.stream(ids).skip(1).noneMatch(id -> id == ids[0]),
                "callbacks ran on librbd's threads");
        return ids;
    }

    /** Submits n operations keeping at most DEPTH in flight (spinning, not allocating); returns the total. */
    private static int ops(RbdBackend rbd, MemorySegment buf, Counter counter, Object attachment, int n, int already) {
        int total = already;
        for (int i = 0; i < n; i++) {
            while (total - counter.completions.get() >= DEPTH) {
                Thread.onSpinWait();
            }
            long offset = (i * 4096L) & (IMAGE_BYTES - 1);
            switch (i % 8) {
                case 0, 4 -> rbd.write(offset, buf, 4096, false, attachment, counter);
                case 1, 5 -> rbd.read(offset, buf, 4096, attachment, counter);
                case 2 -> rbd.write(offset, buf, 4096, true, attachment, counter);
                case 3 -> rbd.writeZeroes(offset, 4096, attachment, counter);
                case 6 -> rbd.deallocate(offset, 4096, attachment, counter);
                default -> rbd.flush(attachment, counter);
            }
            total++;
        }
        return total;
    }

    private static void waitFor(Counter counter, int n) {
        long deadline = System.nanoTime() + 120_000_000_000L;
        while (counter.completions.get() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + counter.completions.get() + " of " + n + " completed");
            }
            Thread.onSpinWait();
        }
    }
}
