package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftResources;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Per-queue native memory is freed when the queue is released, not when the collector runs: a daemon whose I/O path
 * allocates nothing can go hours without a GC while hosts connect and disconnect (in the lab, 100 cycles of the Linux
 * host grew NMT's native "Other" by 17 MB with no GC). The JDK's "direct" buffer pool counts exactly the native
 * memory that waits for the collector (segments of {@code Arena.ofAuto()}; an arena the code closes is not in it),
 * so it must not move from one cycle to the next.
 */
class QueueNativeMemoryTest {
    private static final BufferPoolMXBean COLLECTED_NATIVE = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)
            .stream().filter(b -> b.getName().equals("direct")).findFirst().orElseThrow();
    private static final MemoryMXBean HEAP = ManagementFactory.getMemoryMXBean();

    /** One connect/disconnect cycle of an admin and an I/O queue, with a write and a read on the I/O queue. */
    private static void cycle(SoftTarget t, int i) {
        ScriptedInitiator admin = t.connect(0, 32);
        ScriptedInitiator io = t.connect(1, 128);
        assertEquals(ScriptedInitiator.State.CONNECTED, admin.state());
        assertEquals(ScriptedInitiator.State.CONNECTED, io.state());
        MemorySegment c = Capsules.command(FakeCore.OP_WRITE, 1, 0);
        Capsules.inCapsule(c, 0, 512);
        Capsules.send(io, c, 512);
        ScriptedInitiator.HostBuffer b = io.exposeBuffer(4096, Access.LOCAL_WRITE | Access.REMOTE_WRITE,
                ScriptedInitiator.HostKey.REGION);
        c = Capsules.command(FakeCore.OP_READ, 2, 0);
        Capsules.keyed(c, b.address(), 4096, b.rkey(), false);
        Capsules.send(io, c, 0);
        Capsules.send(admin, Capsules.command(FakeCore.OP_FLUSH, 3, 0), 0);
        t.pump();
        assertEquals(0, Cqe.find(io, 1).status());
        assertEquals(0, Cqe.find(io, 2).status());
        assertEquals(0, Cqe.find(admin, 3).status());
        (i % 2 == 0 ? admin : io).disconnect(); // the host ends one queue, the target the other (as on keep-alive expiry)
        t.core.queue(i % 2 == 0 ? 1 : 0).transport.requestDisconnect("cycle " + i);
        t.pump();
        assertEquals(0, t.transport.openQueues(), "cycle " + i);
        for (ScriptedInitiator h : t.hosts) h.close();
        t.hosts.clear();
        t.core.queues.clear();
        t.fabric.deliverAll();
    }

    /**
     * Collects until the collector's cleaner has freed every unreachable auto-arena segment (two collections in a
     * row leave the count unchanged), so that the baseline holds only live segments.
     */
    private static void settle() throws InterruptedException {
        long previous = -1;
        for (int i = 0; i < 200; i++) {
            System.gc();
            Thread.sleep(10); // the cleaner thread frees after the collection
            long now = COLLECTED_NATIVE.getCount();
            if (now == previous) return;
            previous = now;
        }
        throw new AssertionError("the collector kept freeing for 2 s");
    }

    @Test
    void aThousandConnectDisconnectCyclesLeaveNoResourceAndNoNativeMemoryToTheCollector() throws Exception {
        try (SoftTarget t = new SoftTarget()) {
            for (int i = 0; i < 20; i++) cycle(t, i); // warm: slabs registered, regions pooled by size
            SoftResources idle = t.fabric.resources();
            settle(); // once, before counting: what earlier tests left goes first; no collection is asked for later
            long count0 = COLLECTED_NATIVE.getCount();
            long bytes0 = COLLECTED_NATIVE.getMemoryUsed();
            long heap0 = HEAP.getHeapMemoryUsage().getUsed();
            for (int i = 0; i < 1000; i++) {
                cycle(t, i);
                // At most what was there: garbage of earlier tests in this JVM may still be collected meanwhile.
                long count = COLLECTED_NATIVE.getCount();
                assertTrue(count <= count0, "cycle " + i + ": native memory left to the collector: " + count
                        + " segments, " + count0 + " before");
                assertTrue(COLLECTED_NATIVE.getMemoryUsed() <= bytes0, "cycle " + i);
            }
            SoftResources after = t.fabric.resources();
            assertEquals(0, after.qps(), after.toString());
            assertEquals(idle.cmIds(), after.cmIds(), "only the listener: " + after);
            assertEquals(idle.mrs(), after.mrs(), "only the slabs registered at the start: " + after);
            assertEquals(idle.cqs(), after.cqs(), "only the poller's CQ: " + after);
            assertEquals(0, after.undrainedQpDestroys());
            for (var d : t.transport.cm().deviceResources().values()) {
                assertEquals(2, d.slabs().regionsOutstanding(), "only the pollers' data pools");
            }
            System.gc();
            long heapGrowth = HEAP.getHeapMemoryUsage().getUsed() - heap0;
            System.out.println("QueueNativeMemoryTest: heap after 1000 cycles, after a GC, grew by " + heapGrowth
                    + " bytes; native memory waiting for the collector changed by " + (COLLECTED_NATIVE.getMemoryUsed() - bytes0)
                    + " bytes");
            assertTrue(heapGrowth < 8 << 20, "heap stays flat: grew " + heapGrowth + " bytes");
        }
    }
}
