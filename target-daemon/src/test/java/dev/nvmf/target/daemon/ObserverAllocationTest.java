package dev.nvmf.target.daemon;

import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.CommandQueue;
import dev.nvmf.target.core.NvmeQueue;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.NvmeTarget;
import dev.nvmf.target.core.QueueTransport;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.Opcodes;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Recording an I/O completion (latency histogram, bytes, errors) allocates nothing once warm. */
class ObserverAllocationTest {
    @Test
    void ioCompletionsRecordWithoutAllocating() {
        TargetMetrics metrics = new TargetMetrics();
        DaemonObserver observer = new DaemonObserver(metrics);
        NvmeTarget target = new NvmeTarget();
        CommandQueue q = target.openQueue(1, 1, 16, new QueueTransport() {
            public void complete(NvmeRequest request) { }
            public void requestDisconnect(String reason) { }
            public String peer() { return "test"; }
        });
        try (RamBackend ram = new RamBackend(1 << 20)) {
            Namespace ns = new Namespace(NamespaceConfig.of(1, 512), ram);
            ns.observer(new NamespaceMeters("nqn.test", metrics.namespaceIo("nqn.test", 1)));
            NvmeRequest request = new NvmeRequest(0);
            CommandContext ctx = new CommandContext();
            ctx.request = request;
            ctx.queue = (NvmeQueue) q;
            ctx.namespace = ns;
            ctx.byteLength = 4096;
            int[] opcodes = {Opcodes.IO_READ, Opcodes.IO_WRITE, Opcodes.IO_FLUSH};
            for (int i = 0; i < 200_000; i++) { // warm up (JIT, LongAdder cells)
                ctx.opcode = opcodes[i % 3];
                request.startNanos(System.nanoTime() - (i % 1000) * 1000L);
                observer.commandCompleted(ctx, i % 7 == 0 ? 0x0281 : 0);
                observer.backendFailed(ctx, -5);
            }
            com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
            long tid = Thread.currentThread().threadId();
            // Recording that allocated would allocate in every round; a one-off (a late JIT transition) would not:
            // the quietest of five rounds must be exactly zero.
            long least = Long.MAX_VALUE;
            for (int round = 0; round < 5; round++) {
                long before = mx.getThreadAllocatedBytes(tid);
                for (int i = 0; i < 100_000; i++) {
                    ctx.opcode = opcodes[i % 3];
                    request.startNanos(System.nanoTime() - (i % 1000) * 1000L);
                    observer.commandCompleted(ctx, i % 7 == 0 ? 0x0281 : 0);
                    observer.backendFailed(ctx, -5);
                }
                least = Math.min(least, mx.getThreadAllocatedBytes(tid) - before);
            }
            assertEquals(0, least, "bytes allocated recording 100000 completions");
        }
    }
}
