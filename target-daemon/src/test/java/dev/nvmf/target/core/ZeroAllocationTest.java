package dev.nvmf.target.core;

import dev.nvmf.target.nvme.AnaState;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Once warm, the I/O path (begin, the handler chosen there, RAM backend, completion) allocates nothing on the heap:
 * measured with the thread's allocation counter around many commands, driven as a transport would, with pooled
 * requests. The bound is 0 bytes.
 */
class ZeroAllocationTest extends CoreFixture {
    private static final int POOL = 16;

    private final Arena arena = Arena.ofConfined();
    private final NvmeRequest[] requests = new NvmeRequest[POOL];
    private final MemorySegment[] sqes = new MemorySegment[POOL];
    private final MemorySegment[] responses = new MemorySegment[POOL];
    private final MemorySegment[] buffers = new MemorySegment[POOL];
    private FakeTransport transport;
    private CommandQueue queue;

    /** Commands of one kind, {@code count} of them from a pool of requests; returns how many failed. */
    private interface Workload {
        int run(int count);
    }

    @BeforeEach
    void connect() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io = h.connectIo(1, 128);
        transport = io.transport;
        transport.record = false;
        queue = io.queue;
        for (int i = 0; i < POOL; i++) {
            requests[i] = new NvmeRequest(i);
            sqes[i] = arena.allocate(64);
            responses[i] = arena.allocate(16);
            buffers[i] = arena.allocate(4096, 4096);
            buffers[i].fill((byte) i);
        }
    }

    @AfterEach
    void release() {
        arena.close();
    }

    @Test
    void readWritePathAllocatesNothingOnceWarm() {
        assertAllocatesNothing(this::readsAndWrites);
    }

    @Test
    void comparePathAllocatesNothingOnceWarm() {
        for (int slot = 0; slot < POOL; slot++) {
            assertEquals(0, submit(slot, Opcodes.IO_WRITE, slot * 8L, slot), "write the blocks compared later");
        }
        assertAllocatesNothing(this::compares);
    }

    /** The ANA check of every I/O command reads the port's state of the namespace's group: no allocation either. */
    @Test
    void anaCheckedPathAllocatesNothingOnceWarm() {
        target.setAnaState(1, 2, AnaState.NON_OPTIMIZED);
        target.moveNamespaceAnaGroup(SUBNQN, 1, 2);
        assertAllocatesNothing(this::readsAndWrites);
    }

    /** A host that keeps sending I/O down an inaccessible path gets the ANA status, and the target no garbage. */
    @Test
    void commandsRefusedForAnInaccessibleGroupAllocateNothing() {
        target.setAnaState(1, 1, AnaState.INACCESSIBLE);
        assertAllocatesNothing(this::readsAndWrites, true);
    }

    private void assertAllocatesNothing(Workload workload) {
        assertAllocatesNothing(workload, false);
    }

    private void assertAllocatesNothing(Workload workload, boolean allFail) {
        workload.run(50_000); // warm: JIT, LongAdder cells, Compare's scratch buffers
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        int n = 20_000;
        // A path that allocated would allocate in every round; a one-off (a late JIT transition) would not: the
        // quietest of five rounds must be exactly zero.
        long least = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++) {
            long before = transport.completions;
            long start = mx.getThreadAllocatedBytes(tid);
            int failures = workload.run(n);
            least = Math.min(least, mx.getThreadAllocatedBytes(tid) - start);
            assertEquals(allFail ? n : 0, failures, allFail ? "every command was refused" : "every command succeeded");
            assertEquals(n, transport.completions - before, "every command completed");
        }
        assertEquals(0, least, "bytes allocated over " + n + " commands: the I/O path allocates");
    }

    /** Alternates writes and reads of 8 x 512 B on namespace 1. */
    private int readsAndWrites(int count) {
        int failures = 0;
        for (int i = 0; i < count; i++) {
            int op = (i & 1) == 0 ? Opcodes.IO_WRITE : Opcodes.IO_READ;
            if (submit(i, op, (i * 8L) % 2040, i % POOL) != 0) {
                failures++;
            }
        }
        return failures;
    }

    /** Compares 8 x 512 B on namespace 1 with what the setup wrote there from the same buffer. */
    private int compares(int count) {
        int failures = 0;
        for (int i = 0; i < count; i++) {
            int slot = i % POOL;
            if (submit(i, Opcodes.IO_COMPARE, slot * 8L, slot) != 0) {
                failures++;
            }
        }
        return failures;
    }

    /** One command of 8 blocks at {@code slba} with request {@code i % POOL} and data buffer {@code buffer}; its status. */
    private int submit(int i, int opcode, long slba, int buffer) {
        int slot = i % POOL;
        MemorySegment sqe = sqes[slot];
        Le.u8(sqe, 0, opcode);
        Le.u8(sqe, 1, 0x40);
        Le.u16(sqe, 2, i & 0xFFFF);
        Le.u32(sqe, 4, 1);
        Le.u64(sqe, 40, slba);
        Le.u32(sqe, 48, 7);
        NvmeRequest r = requests[slot].bind(sqe, responses[slot]);
        if (queue.begin(r)) {
            r.data(buffers[buffer], 4096);
            queue.execute(r);
        }
        return Le.u16(responses[slot], 14);
    }
}
