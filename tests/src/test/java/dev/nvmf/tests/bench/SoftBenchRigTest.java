package dev.nvmf.tests.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.nvmf.target.rdma.VerbsCalls.Call;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's rig does real I/O, so its numbers are of a working data path: writes (in-capsule and keyed) land
 * in the RAM namespace at the LBA asked, reads bring the bytes back into the host's buffer, every command succeeds,
 * with and without the daemon's metrics observer; and the JMH benchmark's own loop completes what it claims.
 */
class SoftBenchRigTest {

    private static void run(SoftBenchRig rig, BooleanSupplier done) {
        for (int i = 0; i < 100_000 && !done.getAsBoolean(); i++) {
            rig.step();
        }
        assertTrue(done.getAsBoolean(), "I/O did not complete");
    }

    private static byte[] pattern(int seed) {
        byte[] b = new byte[4096];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (seed * 31 + i * 7);
        }
        return b;
    }

    /** Connection q writes pattern(seed + q) at LBA lba + q with a keyed write; waits until all are done. */
    private static void writeOnEachConnection(SoftBenchRig rig, int seed, int lba) {
        for (int q = 0; q < rig.ios.size(); q++) {
            BenchQueue h = rig.ios.get(q);
            MemorySegment.copy(MemorySegment.ofArray(pattern(seed + q)), 0, h.data(0), 0, 4096);
            assertEquals(0, h.writeKeyed(0, SoftBenchRig.NSID, lba + q, 1, 4096));
        }
        run(rig, () -> rig.ios.stream().allMatch(h -> h.outstanding() == 0));
    }

    private static void dataIntegrity(boolean metrics) throws Exception {
        dataIntegrity(metrics, false);
    }

    private static void dataIntegrity(boolean metrics, boolean zeroCopy) throws Exception {
        try (SoftBenchRig rig = new SoftBenchRig(1 << 20, 128, 4096, metrics, zeroCopy)) {
            BenchQueue h = rig.io;
            MemorySegment.copy(MemorySegment.ofArray(pattern(1)), 0, h.inCapsule(0), 0, 4096);
            MemorySegment.copy(MemorySegment.ofArray(pattern(2)), 0, h.data(1), 0, 4096);
            assertEquals(0, h.writeInCapsule(0, SoftBenchRig.NSID, 5, 1, 4096));
            assertEquals(0, h.writeKeyed(1, SoftBenchRig.NSID, 9, 1, 4096));
            run(rig, () -> h.outstanding() == 0);
            assertEquals(2, h.completed);
            assertEquals(0, h.failed, () -> "status 0x" + Integer.toHexString(h.lastFailedStatus));
            // Both landed in the namespace where asked: read back through the RAM backend's own read.
            byte[] at5 = new byte[4096];
            byte[] at9 = new byte[4096];
            MemorySegment tmp = java.lang.foreign.Arena.ofAuto().allocate(4096);
            rig.ram.read(5 * 4096L, tmp, 4096, null, (a, st) -> assertEquals(0, st));
            MemorySegment.copy(tmp, ValueLayout.JAVA_BYTE, 0, at5, 0, 4096);
            rig.ram.read(9 * 4096L, tmp, 4096, null, (a, st) -> assertEquals(0, st));
            MemorySegment.copy(tmp, ValueLayout.JAVA_BYTE, 0, at9, 0, 4096);
            assertArrayEquals(pattern(1), at5);
            assertArrayEquals(pattern(2), at9);
            // Reads by keyed SGL: the target RDMA WRITEs them into the host's buffers.
            h.data(2).fill((byte) 0);
            h.data(3).fill((byte) 0);
            assertEquals(0, h.read(2, SoftBenchRig.NSID, 9, 1, 4096));
            assertEquals(0, h.read(3, SoftBenchRig.NSID, 5, 1, 4096));
            run(rig, () -> h.outstanding() == 0);
            assertEquals(0, h.failed);
            assertArrayEquals(pattern(2), h.data(2).toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(pattern(1), h.data(3).toArray(ValueLayout.JAVA_BYTE));
            // A read past the end fails with an NVMe status (LBA Out of Range), counted as failed, not lost.
            assertEquals(0, h.read(4, SoftBenchRig.NSID, 256, 1, 4096));
            run(rig, () -> h.outstanding() == 0);
            assertEquals(1, h.failed);
            assertEquals(0x80, h.lastFailedStatus & 0xFF, "LBA Out of Range");
            assertEquals(0, h.sendErrors);
        }
    }

    @Test
    void writesLandAndReadsComeBackWithoutMetrics() throws Exception {
        dataIntegrity(false);
    }

    @Test
    void writesLandAndReadsComeBackWithTheDaemonsObserver() throws Exception {
        dataIntegrity(true);
    }

    @Test
    void writesLandAndReadsComeBackZeroCopy() throws Exception {
        dataIntegrity(true, true);
    }

    /**
     * The scaling rig: five connections spread over two pollers. What one connection writes, another reads back, and
     * every connection and both pollers carried I/O.
     */
    @Test
    void manyConnectionsOnTwoPollersEachMoveTheirOwnBytes() throws Exception {
        try (SoftBenchRig rig = new SoftBenchRig(1 << 20, 128, 4096, true, true, 5, 2)) {
            assertEquals(5, rig.ios.size());
            assertEquals(2, rig.transport.pollerCount());
            writeOnEachConnection(rig, 10, 20);
            for (int q = 0; q < 5; q++) {
                BenchQueue reader = rig.ios.get((q + 1) % 5);
                reader.data(1).fill((byte) 0);
                assertEquals(0, reader.read(1, SoftBenchRig.NSID, 20 + q, 1, 4096));
                run(rig, () -> reader.outstanding() == 0);
                assertArrayEquals(pattern(10 + q), reader.data(1).toArray(ValueLayout.JAVA_BYTE), "LBA " + (20 + q));
            }
            for (BenchQueue h : rig.ios) {
                assertEquals(0, h.failed, () -> "status 0x" + Integer.toHexString(h.lastFailedStatus));
                assertEquals(2, h.completed, "connection " + rig.ios.indexOf(h) + " wrote once and read once");
            }
            // Both pollers did I/O: each took completions from its own CQ.
            for (int p = 0; p < 2; p++) {
                assertTrue(rig.transport.poller(p).verbsCalls().count(Call.POST_SEND) > 0, "poller " + p + " posted");
            }
        }
    }

    /**
     * The scaling rig with a shared receive queue ({@code srqDepth}): the bytes still land, and five reads, one on
     * each of five connections, served together, repost their receives in one {@code post_recv} (one chain to the
     * SRQ, in the pass that completes their responses) instead of one per connection: what the SRQ buys at many
     * connections (docs/performance.md, "The scaling curve").
     */
    @Test
    void aSharedReceiveQueueRepostsOncePerPassForAllConnections() throws Exception {
        assertEquals(5, postRecvsOfOneReadOnEachOfFiveConnections(0), "without an SRQ: one chain per connection");
        assertEquals(1, postRecvsOfOneReadOnEachOfFiveConnections(4096), "with an SRQ: one chain for all");
    }

    private static long postRecvsOfOneReadOnEachOfFiveConnections(int srqDepth) throws Exception {
        try (SoftBenchRig rig = new SoftBenchRig(1 << 20, 128, 4096, true, true, 5, 1, srqDepth)) {
            writeOnEachConnection(rig, 30, 40);
            for (int q = 0; q < 5; q++) {
                BenchQueue h = rig.ios.get(q);
                h.data(1).fill((byte) 0);
                assertEquals(0, h.read(1, SoftBenchRig.NSID, 40 + (q + 1) % 5, 1, 4096));
            }
            var calls = rig.transport.poller(0).verbsCalls();
            long before = calls.count(Call.POST_RECV);
            run(rig, () -> rig.ios.stream().allMatch(h -> h.outstanding() == 0));
            long posts = calls.count(Call.POST_RECV) - before;
            for (int q = 0; q < 5; q++) {
                BenchQueue h = rig.ios.get(q);
                assertEquals(0, h.failed, () -> "status 0x" + Integer.toHexString(h.lastFailedStatus));
                assertArrayEquals(pattern(30 + (q + 1) % 5), h.data(1).toArray(ValueLayout.JAVA_BYTE),
                        "connection " + q);
            }
            return posts;
        }
    }

    /** The JMH benchmark with these parameters (metrics on), set up as JMH would. */
    private static IoPathBenchmark benchmark(String op, int bytes, boolean zeroCopy, int qd, int connections,
                                             int pollers) throws Exception {
        IoPathBenchmark b = new IoPathBenchmark();
        b.op = op;
        b.bytes = bytes;
        b.zeroCopy = zeroCopy;
        b.qd = qd;
        b.connections = connections;
        b.pollers = pollers;
        b.observer = "metrics";
        b.setUp();
        return b;
    }

    /** Runs {@code n} invocations of {@code io()}; returns the I/Os completed in all. */
    private static long invocations(IoPathBenchmark b, int n) {
        long done = 0;
        for (int i = 0; i < n; i++) {
            done = b.io();
        }
        return done;
    }

    @Test
    void benchmarkLoopCompletesEveryBatchWithoutErrors() throws Exception {
        String[][] runs = {{"read", "4096", "false"}, {"write", "4096", "false"}, {"writeKeyed", "4096", "false"},
                {"read", "4096", "true"}, {"writeKeyed", "4096", "true"}, {"read", "131072", "false"},
                {"writeKeyed", "131072", "true"}};
        for (String[] run : runs) {
            String op = run[0] + " " + run[1] + " zero copy " + run[2];
            IoPathBenchmark b = benchmark(run[0], Integer.parseInt(run[1]), Boolean.parseBoolean(run[2]), 32, 1, 1);
            long done = invocations(b, 20);
            // 20 invocations of 256 I/Os each: at least that many completed (a few more may have in the last turn).
            assertTrue(done >= 20 * IoPathBenchmark.BATCH && done < 20 * IoPathBenchmark.BATCH + 32, op + ": " + done);
            IoPathBenchmark.Breakdown br = new IoPathBenchmark.Breakdown();
            br.reset();
            b.ioBreakdown(br);
            assertTrue(br.pollerNs > 0 && br.fabricNs > 0 && br.hostNs > 0, op + ": breakdown recorded");
            b.tearDown(); // throws if any command failed
        }
    }

    @Test
    void benchmarkLoopOverManyConnectionsAndTwoPollersCompletesWithoutErrors() throws Exception {
        IoPathBenchmark b = benchmark("read", 4096, true, 8, 16, 2);
        long done = invocations(b, 10);
        assertTrue(done >= 10 * IoPathBenchmark.BATCH && done < 10 * IoPathBenchmark.BATCH + 16 * 8, "" + done);
        // A one-off allocation (a late JIT transition) shows in one round; one per I/O in every round.
        double least = Double.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            IoPathBenchmark.Breakdown br = new IoPathBenchmark.Breakdown();
            br.reset();
            b.ioBreakdown(br);
            least = Math.min(least, br.pollerBytes);
        }
        assertEquals(0, least, "bytes allocated per I/O by the pollers, quietest of 5 rounds");
        b.tearDown(); // throws if any command failed
    }
}
