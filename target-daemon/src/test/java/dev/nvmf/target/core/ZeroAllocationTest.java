package dev.nvmf.target.core;

import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Once warm, the Read/Write path (begin, the handler chosen there, RAM backend, completion) allocates nothing on the
 * heap: measured with the thread's allocation counter around many commands, driven as a transport would, with pooled
 * requests. The bound is 0 bytes.
 */
class ZeroAllocationTest extends CoreFixture {
    private static final int POOL = 16;

    @Test
    void readWritePathAllocatesNothingOnceWarm() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io = h.connectIo(1, 128);
        FakeTransport transport = io.transport;
        transport.record = false;
        CommandQueue queue = io.queue;

        Arena arena = Arena.ofConfined();
        NvmeRequest[] requests = new NvmeRequest[POOL];
        MemorySegment[] sqes = new MemorySegment[POOL];
        MemorySegment[] responses = new MemorySegment[POOL];
        MemorySegment[] buffers = new MemorySegment[POOL];
        for (int i = 0; i < POOL; i++) {
            requests[i] = new NvmeRequest(i);
            sqes[i] = arena.allocate(64);
            responses[i] = arena.allocate(16);
            buffers[i] = arena.allocate(4096, 4096);
            buffers[i].fill((byte) i);
        }

        run(queue, requests, sqes, responses, buffers, 50_000); // warm: JIT, LongAdder cells
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        int n = 20_000;
        // A path that allocated would allocate in every round; a one-off (a late JIT transition) would not: the
        // quietest of five rounds must be exactly zero.
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long before = transport.completions;
            long start = mx.getThreadAllocatedBytes(tid);
            int failures = run(queue, requests, sqes, responses, buffers, n);
            least = Math.min(least, mx.getThreadAllocatedBytes(tid) - start);
            assertEquals(0, failures, "every command succeeded");
            assertEquals(n, transport.completions - before, "every command completed");
        }
        assertEquals(0, least, "bytes allocated over " + n + " commands: the I/O path allocates");
        arena.close();
    }

    /** Alternates writes and reads of 8 x 512 B on namespace 1, as a transport would; returns failed commands. */
    private static int run(CommandQueue queue, NvmeRequest[] requests, MemorySegment[] sqes,
                           MemorySegment[] responses, MemorySegment[] buffers, int count) {
        int failures = 0;
        for (int i = 0; i < count; i++) {
            int slot = i % POOL;
            MemorySegment sqe = sqes[slot];
            boolean write = (i & 1) == 0;
            Le.u8(sqe, 0, write ? Opcodes.IO_WRITE : Opcodes.IO_READ);
            Le.u8(sqe, 1, 0x40);
            Le.u16(sqe, 2, i & 0xFFFF);
            Le.u32(sqe, 4, 1);
            Le.u64(sqe, 40, (i * 8L) % 2040);
            Le.u32(sqe, 48, 7);
            NvmeRequest r = requests[slot].bind(sqe, responses[slot]);
            if (queue.begin(r)) {
                r.data(buffers[slot], 4096);
                queue.execute(r);
            }
            if (Le.u16(responses[slot], 14) != 0) {
                failures++;
            }
        }
        return failures;
    }
}
