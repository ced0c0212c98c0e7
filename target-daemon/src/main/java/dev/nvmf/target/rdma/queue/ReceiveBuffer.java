package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;

import java.lang.foreign.MemorySegment;

/**
 * One receive buffer: where a command capsule lands (the 64-byte SQE, then any in-capsule data), with its slices made
 * once. A queue without a shared receive queue gives each command context one of its own for good; with one, the
 * buffers belong to the {@link SharedReceives} of the poller and device, and a context holds the buffer its capsule
 * arrived in from the receive completion until the context is COMPLETED (kernel rdma.c: {@code nvmet_rdma_cmd}, which
 * with an SRQ is paired with a response, {@code nvmet_rdma_rsp}, only when it arrives).
 */
final class ReceiveBuffer {
    /** Its number in its {@link SharedReceives} (the {@code wr_id}'s index), -1 for a context's own buffer. */
    final int index;
    final MemorySegment buffer;
    final MemorySegment command;
    final MemorySegment inCapsuleData;
    /** The prebuilt receive of an SRQ buffer (null for a context's own buffer: the context posts its own WR). */
    final RecvWorkRequest recvWr;
    final ScatterGatherEntry recvSge;
    /** Intrusive link in its SRQ's repost chain. */
    ReceiveBuffer next;
    /**
     * The in-capsule data from the last non-zero SGL offset a capsule in this buffer named, and that offset: a slice is
     * an object, so it is made once per buffer and offset, not once per command.
     */
    private MemorySegment inCapsuleAtOffset;
    private int inCapsuleOffset = -1;

    ReceiveBuffer(int index, MemorySegment buffer, RecvWorkRequest recvWr, ScatterGatherEntry recvSge) {
        this.index = index;
        this.buffer = buffer;
        this.command = buffer.asSlice(0, SubmissionQueueEntry.SIZE);
        this.inCapsuleData = buffer.asSlice(SubmissionQueueEntry.SIZE);
        this.recvWr = recvWr;
        this.recvSge = recvSge;
    }

    /** The in-capsule data from {@code offset} on (0: all of it); allocation-free while the offset repeats. */
    MemorySegment inCapsuleData(int offset) {
        if (offset == 0) return inCapsuleData;
        if (offset != inCapsuleOffset) {
            inCapsuleAtOffset = inCapsuleData.asSlice(offset);
            inCapsuleOffset = offset;
        }
        return inCapsuleAtOffset;
    }
}
