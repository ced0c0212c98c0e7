package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.TestHost;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transport with its own threads (CM thread, two pollers that block on their completion channels when idle)
 * on an automatic soft fabric, with core completions arriving from another thread (a backend-like executor).
 */
class ThreadedTransportTest {
    private static void await(BooleanSupplier condition, TestHost h, String what) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (h != null) h.poll();
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.onSpinWait();
        }
    }

    @Test
    void threadsServeIoAndStopDrainsEverything() throws Exception {
        SoftFabric fabric = SoftFabric.automatic();
        fabric.addDevice("t0", "10.0.0.1");
        fabric.addDevice("h0", "10.0.0.2");
        FakeCore core = new FakeCore();
        core.deferred = true;
        RdmaTransport t = new RdmaTransport(fabric,
                RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, "10.0.0.1", 4420))).withPollers(2), core);
        t.start();
        Thread backend = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                if (core.releaseDeferred() == 0) Thread.onSpinWait();
            }
        }, "fake-backend");
        backend.setDaemon(true);
        backend.start();
        TestHost[] hosts = new TestHost[2];
        try {
            for (int q = 0; q < 2; q++) {
                TestHost h = new TestHost(fabric);
                hosts[q] = h;
                h.connect(new InetSocketAddress("10.0.0.2", 0), new InetSocketAddress("10.0.0.1", 4420), q + 1, 16,
                        16, Thread::onSpinWait);
                assertEquals(CmEventType.ESTABLISHED, h.connectResult.type());
            }
            // The two queues went to different pollers.
            assertEquals(1, t.poller(0).openQueues());
            assertEquals(1, t.poller(1).openQueues());
            Thread.sleep(300); // let the pollers go idle and block on their channels: completions must wake them
            for (int round = 0; round < 50; round++) {
                for (int q = 0; q < 2; q++) {
                    TestHost h = hosts[q];
                    TestHost.HostBuffer r = h.dataWindow(8192);
                    MemorySegment c = h.capsule(FakeCore.OP_WRITE, round, q * 65536L + round * 8L);
                    TestHost.keyed(c, r.address(), 8192, r.rkey(), true);
                    assertEquals(0, h.send(0));
                    int cid = round;
                    await(() -> h.response(cid) != null, h, "response " + round);
                    assertEquals(0, h.response(cid).status());
                    h.received.clear();
                }
            }
            assertEquals(100, t.metrics().responsesSent.sum());
            core.deferred = false;
            t.stop(10_000);
            assertEquals(0, t.openQueues());
            for (TestHost h : hosts) await(() -> h.sawEvent(CmEventType.DISCONNECTED), h, "host DISCONNECTED");
            assertTrue(core.queue(0).closed && core.queue(1).closed);
        } finally {
            backend.interrupt();
            t.stop(1000);
            for (TestHost h : hosts) if (h != null) h.close();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }
}
