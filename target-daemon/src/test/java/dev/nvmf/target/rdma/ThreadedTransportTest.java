package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
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
    private static void await(BooleanSupplier condition, ScriptedInitiator h, String what) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (h != null) h.doWork();
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
        ScriptedInitiator[] hosts = new ScriptedInitiator[2];
        try {
            for (int q = 0; q < 2; q++) {
                ScriptedInitiator h = new ScriptedInitiator(fabric, Capsules.queueOptions(
                        new InetSocketAddress("10.0.0.2", 0), new InetSocketAddress("10.0.0.1", 4420), q + 1, 16, 16));
                hosts[q] = h;
                assertEquals(ScriptedInitiator.State.CONNECTED, h.connect(10_000));
            }
            // The two queues went to different pollers.
            assertEquals(1, t.poller(0).openQueues());
            assertEquals(1, t.poller(1).openQueues());
            Thread.sleep(300); // let the pollers go idle and block on their channels: completions must wake them
            for (int round = 0; round < 50; round++) {
                for (int q = 0; q < 2; q++) {
                    ScriptedInitiator h = hosts[q];
                    ScriptedInitiator.HostBuffer r = h.exposeBuffer(8192);
                    MemorySegment c = Capsules.command(FakeCore.OP_WRITE, round, q * 65536L + round * 8L);
                    Capsules.keyed(c, r.address(), 8192, r.rkey(), true);
                    assertEquals(0, Capsules.send(h, c, 0));
                    int cid = round;
                    await(() -> Cqe.find(h, cid) != null, h, "response " + round);
                    assertEquals(0, Cqe.take(h, cid).status());
                }
            }
            assertEquals(100, t.metrics().responsesSent.sum());
            core.deferred = false;
            t.stop(10_000);
            assertEquals(0, t.openQueues());
            for (ScriptedInitiator h : hosts) await(() -> h.sawEvent(CmEventType.DISCONNECTED), h, "host DISCONNECTED");
            assertTrue(core.queue(0).closed && core.queue(1).closed);
        } finally {
            backend.interrupt();
            t.stop(1000);
            for (ScriptedInitiator h : hosts) if (h != null) h.close();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }
}
