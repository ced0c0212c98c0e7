package dev.nvmf.target.rdma.support;

import dev.nvmf.target.core.CommandQueue;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.QueueAcceptor;
import dev.nvmf.target.core.QueueTransport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

/**
 * A tiny stand-in for the NVMe core, for transport tests: opcode 0x01 writes (host-to-controller) into a RAM
 * disk at byte offset SQE[40..47], 0x02 reads from it, 0x00 moves no data, 0x0C is held until abortHeld (like an
 * Asynchronous Event Request). Completions are inline by default; with {@link #deferred} they wait until the test
 * calls {@link #releaseDeferred} (optionally from another thread), like a backend. Allocation-free per command
 * (for the zero-allocation test) when not deferred.
 */
public final class FakeCore implements QueueAcceptor {
    public static final int OP_FLUSH = 0x00;
    public static final int OP_WRITE = 0x01;
    public static final int OP_READ = 0x02;
    public static final int OP_HELD = 0x0C;
    /** begin() throws (a core bug): the transport must contain it to the queue. */
    public static final int OP_THROW_IN_BEGIN = 0x7D;
    /** execute() throws. */
    public static final int OP_THROW_IN_EXECUTE = 0x7E;
    /** execute() throws a StackOverflowError: an Error ends the poller thread. */
    public static final int OP_ERROR_IN_EXECUTE = 0x7C;
    /** Generic status "Commands Aborted due to SQ Deletion". */
    public static final int SC_ABORTED_SQ_DELETION = 0x08;

    public final MemorySegment disk = Arena.ofAuto().allocate(4 << 20, 4096);
    public final List<Queue> queues = new ArrayList<>();
    public volatile boolean deferred;
    public volatile boolean refuse;
    /** Runs when the transport closes a queue of the core (what a test checks the moment the controller closes). */
    public volatile Runnable onClose = () -> { };
    private final ArrayDeque<Runnable> deferredWork = new ArrayDeque<>();

    @Override
    public synchronized CommandQueue openQueue(int portId, int qid, int sqSize, QueueTransport transport) {
        if (refuse) throw new IllegalStateException("refused by test");
        Queue q = new Queue(portId, qid, sqSize, transport);
        queues.add(q);
        return q;
    }

    public synchronized Queue queue(int i) { return queues.get(i); }

    /** Runs every deferred completion now (any thread). */
    public int releaseDeferred() {
        int n = 0;
        while (true) {
            Runnable r;
            synchronized (deferredWork) {
                r = deferredWork.poll();
            }
            if (r == null) return n;
            r.run();
            n++;
        }
    }

    public int deferredCount() {
        synchronized (deferredWork) {
            return deferredWork.size();
        }
    }

    public final class Queue implements CommandQueue {
        public final int portId;
        public final int qid;
        public final int sqSize;
        public final QueueTransport transport;
        public volatile int begun;
        public volatile int executed;
        public volatile int completed;
        public volatile boolean aborted;
        public volatile boolean closed;
        /** The reason the transport gave in transportFailed, or null. */
        public volatile String transportFailure;
        public volatile int lastTransportStatus;
        /** Whether {@link #startNanos} and {@link #elapsedNanos} are kept (they allocate: off for allocation tests). */
        public volatile boolean recordTimes;
        /** Each begun command's {@link NvmeRequest#startNanos()}, in order (the transport's clock). */
        public final List<Long> startNanos = java.util.Collections.synchronizedList(new ArrayList<>());
        /** Each finished command's {@link NvmeRequest#elapsedNanos()} when the core completed it, in order. */
        public final List<Long> elapsedNanos = java.util.Collections.synchronizedList(new ArrayList<>());
        private final ArrayDeque<NvmeRequest> held = new ArrayDeque<>();
        private int sqhd;

        Queue(int portId, int qid, int sqSize, QueueTransport transport) {
            this.portId = portId;
            this.qid = qid;
            this.sqSize = sqSize;
            this.transport = transport;
        }

        @Override
        public boolean begin(NvmeRequest r) {
            begun++;
            if (recordTimes) startNanos.add(r.startNanos());
            sqhd = (sqhd + 1) % sqSize;
            if (r.transportStatus() != 0) {
                lastTransportStatus = r.transportStatus();
                finish(r, r.transportStatus());
                return false;
            }
            int op = r.command().get(JAVA_BYTE, 0) & 0xFF;
            if (op == OP_THROW_IN_BEGIN) throw new IllegalStateException("test: the core failed in begin()");
            r.dataDirection(switch (op) {
                case OP_WRITE -> NvmeRequest.DIRECTION_HOST_TO_CONTROLLER;
                case OP_READ -> NvmeRequest.DIRECTION_CONTROLLER_TO_HOST;
                default -> NvmeRequest.DIRECTION_NONE;
            });
            return true;
        }

        @Override
        public void execute(NvmeRequest r) {
            executed++;
            int op = r.command().get(JAVA_BYTE, 0) & 0xFF;
            if (op == OP_THROW_IN_EXECUTE) throw new IllegalStateException("test: the core failed in execute()");
            if (op == OP_ERROR_IN_EXECUTE) throw new StackOverflowError("test: an Error in the core");
            long offset = r.command().get(JAVA_LONG_UNALIGNED, 40);
            switch (op) {
                case OP_WRITE -> MemorySegment.copy(r.data(), 0, disk, offset, r.dataLength());
                case OP_READ -> MemorySegment.copy(disk, offset, r.data(), 0, r.dataLength());
                case OP_HELD -> {
                    synchronized (held) {
                        held.add(r);
                    }
                    return;
                }
                default -> { }
            }
            if (deferred) {
                synchronized (deferredWork) {
                    deferredWork.add(() -> finish(r, 0));
                }
            } else {
                finish(r, 0);
            }
        }

        private void finish(NvmeRequest r, int status) {
            MemorySegment cqe = r.response();
            cqe.set(JAVA_LONG_UNALIGNED, 0, 0L);
            cqe.set(JAVA_SHORT_UNALIGNED, 8, (short) sqhd);
            cqe.set(JAVA_SHORT_UNALIGNED, 10, (short) qid);
            cqe.set(JAVA_SHORT_UNALIGNED, 12, r.command().get(JAVA_SHORT_UNALIGNED, 2));
            cqe.set(JAVA_SHORT_UNALIGNED, 14, (short) (status << 1));
            completed++;
            if (recordTimes) elapsedNanos.add(r.elapsedNanos());
            transport.complete(r);
        }

        @Override
        public void abortHeld() {
            aborted = true;
            while (true) {
                NvmeRequest r;
                synchronized (held) {
                    r = held.poll();
                }
                if (r == null) return;
                finish(r, SC_ABORTED_SQ_DELETION);
            }
        }

        @Override
        public void transportFailed(String reason) {
            transportFailure = reason;
        }

        @Override
        public void close() {
            onClose.run();
            closed = true;
        }

        @Override
        public int qid() { return qid; }

        public int heldCount() {
            synchronized (held) {
                return held.size();
            }
        }
    }
}
