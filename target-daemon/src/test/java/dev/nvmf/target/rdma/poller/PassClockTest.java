package dev.nvmf.target.rdma.poller;

import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The poller reads its clock once per pass: the commands of a pass share its time, the busy-poll check of an empty
 * pass reads it once, and a completion on another thread reads the clock itself.
 */
class PassClockTest {
    private static final long US = 1_000;

    /** A source that counts its reads. */
    private static final class CountingClock implements LongSupplier {
        final LongSupplier source;
        final AtomicLong reads = new AtomicLong();

        CountingClock(LongSupplier source) { this.source = source; }

        @Override
        public long getAsLong() {
            reads.incrementAndGet();
            return source.getAsLong();
        }
    }

    @Test
    void theOwnerReadsTheSourceOncePerPassAndOtherThreadsReadItThemselves() throws Exception {
        AtomicLong time = new AtomicLong(1_000);
        CountingClock source = new CountingClock(time::get);
        PassClock clock = new PassClock(source);
        // Before its poller starts, nothing is cached.
        assertEquals(1_000, clock.nanoTime());
        time.addAndGet(5);
        assertEquals(1_005, clock.nanoTime());
        assertEquals(2, source.reads.get());

        clock.ownedByCurrentThread();
        clock.newPass();
        assertEquals(1_005, clock.nanoTime());
        time.addAndGet(10);
        assertEquals(1_005, clock.nanoTime(), "the same pass: the time it was first read");
        assertEquals(3, source.reads.get());
        long[] seen = new long[1];
        Thread other = new Thread(() -> seen[0] = clock.nanoTime());
        other.start();
        other.join();
        assertEquals(1_015, seen[0], "another thread reads the source, not the poller's pass");
        assertEquals(4, source.reads.get());

        clock.newPass();
        assertEquals(4, source.reads.get(), "a pass that does not ask reads nothing");
        assertEquals(1_015, clock.nanoTime());
        assertEquals(5, source.reads.get());
    }

    @Test
    void theCommandsOfOnePassShareOneReadAndADeferredCompletionIsTimedOnTheSource() {
        SoftFabric fabric = SoftFabric.manual();
        fabric.addDevice("t0", SoftTarget.TARGET_IP);
        fabric.addDevice("h0", SoftTarget.HOST_IP);
        FakeCore core = new FakeCore();
        CountingClock clock = new CountingClock(fabric::nanoTime);
        RdmaTransport transport = new RdmaTransport(fabric, RdmaTransportConfig.of(List.of(
                RdmaPortConfig.of(1, SoftTarget.TARGET_IP, SoftTarget.PORT))), core, clock);
        transport.open();
        ScriptedInitiator host = new ScriptedInitiator(fabric, Capsules.queueOptions(
                new InetSocketAddress(SoftTarget.HOST_IP, 0), new InetSocketAddress(SoftTarget.TARGET_IP,
                        SoftTarget.PORT), 1, 8, 16));
        try {
            host.startConnect();
            SoftTarget.pump(fabric, transport, List.of(host));
            assertEquals(ScriptedInitiator.State.CONNECTED, host.state());
            FakeCore.Queue q = core.queue(core.queues.size() - 1);
            q.recordTimes = true;

            // Four commands in one pass: one clock read stamps them all, and their inline completions (in the
            // same pass) are timed against it.
            fabric.advanceTime(1_000 * US);
            for (int cid = 1; cid <= 4; cid++) {
                assertEquals(0, Capsules.send(host, Capsules.command(FakeCore.OP_FLUSH, cid, 0), 0));
            }
            fabric.deliverAll();
            long t1 = fabric.nanoTime();
            clock.reads.set(0);
            assertTrue(transport.pollerInvoker(0).invoke() > 0);
            assertEquals(1, clock.reads.get(), "clock reads in a pass of four commands");
            assertEquals(List.of(t1, t1, t1, t1), q.startNanos);
            assertEquals(List.of(0L, 0L, 0L, 0L), q.elapsedNanos, "completed in the pass that received them");
            SoftTarget.pump(fabric, transport, List.of(host));
            for (int cid = 1; cid <= 4; cid++) assertNotNull(Cqe.find(host, cid), "response " + cid);

            // A command the core completes later, on another thread: the next pass has its own time, and the
            // completion reads the source (the poller's pass is not its to read).
            core.deferred = true;
            fabric.advanceTime(20 * US);
            assertEquals(0, Capsules.send(host, Capsules.command(FakeCore.OP_FLUSH, 5, 0), 0));
            fabric.deliverAll();
            long t2 = fabric.nanoTime();
            transport.pollerInvoker(0).invoke();
            assertEquals(t2, q.startNanos.get(4));
            fabric.advanceTime(7 * US);
            Thread backend = new Thread(core::releaseDeferred);
            backend.start();
            backend.join();
            assertEquals(7 * US, q.elapsedNanos.get(4), "latency of a completion on a backend thread");
            SoftTarget.pump(fabric, transport, List.of(host));
            assertNotNull(Cqe.find(host, 5), "response 5");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        } finally {
            transport.stop(5000);
            host.close();
            fabric.deliverAll();
            assertTrue(fabric.resources().nothingLeaked(), "left after stop: " + fabric.resources());
        }
    }
}
