package dev.nvmf.verbs.soft;

import com.sun.management.ThreadMXBean;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.WrOpcode;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The provider itself must not spoil the target's zero-allocation I/O path: post, step and poll allocate nothing once warm. */
class AllocationTest {

    private static long cycle(Pair p, int n) {
        long moved = 0;
        for (int i = 0; i < n; i++) {
            if (p.server.recv(200, 0, 1024) != 0) throw new AssertionError("recv");
            p.client.sends[1].wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED);
            if (p.client.qp.postSend(p.client.sends[1]) != 0) throw new AssertionError("send");
            p.fabric.deliverAll();
            moved += p.server.cq.poll(p.server.wc) + p.client.cq.poll(p.client.wc);
        }
        return moved;
    }

    @Test
    void steadyStateDataPathAllocatesNothing() {
        Pair.Setup s = new Pair.Setup();
        s.serverRecvs = 0;
        Pair p = Pair.connected(SoftFabric.manual(), s);
        p.client.wr(1, 0, WrOpcode.SEND, SendFlags.SIGNALED, 0, 64);
        ThreadMXBean mx = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        cycle(p, 20_000);   // warm up: pools fill, JIT compiles
        mx.getCurrentThreadAllocatedBytes();
        // A one-off JIT recompilation can show up as a few bytes once; systematic allocation shows in every round.
        long best = Long.MAX_VALUE;
        for (int round = 0; round < 3 && best != 0; round++) {
            long before = mx.getCurrentThreadAllocatedBytes();
            long moved = cycle(p, 10_000);
            long allocated = mx.getCurrentThreadAllocatedBytes() - before;
            assertEquals(20_000, moved);
            best = Math.min(best, allocated);
        }
        assertEquals(0, best, "bytes allocated by 10,000 post/step/poll cycles");
        p.close();
    }
}
