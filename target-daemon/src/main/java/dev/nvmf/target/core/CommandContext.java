package dev.nvmf.target.core;

import dev.nvmf.target.backend.BackendCallback;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The core's per-command state (kernel: the core half of {@code struct nvmet_req}). Every {@link NvmeRequest}
 * carries one, created with the transport's pooled request and reused for every later command, so nothing is
 * allocated per command. It holds the {@link CommandHandler} chosen when the command was parsed, and it is the
 * backend callback of its I/O (no lambda, no capture): a backend completion goes straight to that handler.
 */
public final class CommandContext implements BackendCallback {
    /** The command, as a flyweight over the request's SQE. */
    public final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    /** Outstanding backend operations of a multi-part command (Dataset Management). */
    public final AtomicInteger pending = new AtomicInteger();

    public NvmeRequest request;
    public NvmeQueue queue;
    public int opcode;
    public int cid;
    public int nsid;
    /** The namespace an I/O command addresses (set when it is parsed). */
    public Namespace namespace;
    /** Byte offset and length of an I/O command on its namespace. */
    public long byteOffset;
    public long byteLength;
    /** Starting LBA of an I/O command (for the error log). */
    public long lba;
    public boolean forceUnitAccess;
    /** First failure of a multi-part command (0 = none). */
    public volatile int deferredStatus;
    /** Completion DW0 and DW1. */
    public int result0;
    public int result1;
    /** Byte offset in the SQE (or Connect data, bit 16) of the field a failure is about, for the error log. */
    public int errorLocation;
    /** A buffer the command borrowed until it completes (Compare reads the medium into it), or NULL. */
    public MemorySegment scratch = MemorySegment.NULL;
    /** What executes this command (kernel: {@code req->execute}); set once, when the command is parsed. */
    CommandHandler handler;

    void reset(NvmeRequest r, NvmeQueue q) {
        request = r;
        queue = q;
        sqe.wrap(r.command());
        opcode = sqe.opcode();
        cid = sqe.cid();
        nsid = sqe.nsid();
        namespace = null;
        byteOffset = 0;
        byteLength = 0;
        lba = 0;
        forceUnitAccess = false;
        deferredStatus = 0;
        result0 = 0;
        result1 = 0;
        errorLocation = 0xFFFF;
        scratch = MemorySegment.NULL;
        handler = null;
    }

    /** Writes the completion and hands the request back to the transport. Any thread; exactly once. */
    public void complete(int status) {
        queue.complete(this, status);
    }

    /** Completes with a failure whose cause is the SQE field at {@code sqeOffset} (recorded in the error log). */
    public void fail(int status, int sqeOffset) {
        errorLocation = sqeOffset;
        queue.complete(this, status);
    }

    /** Tells the target's observer that a backend operation of this command failed with {@code result}. Any thread. */
    public void reportBackendFailure(int result) {
        queue.reportBackendFailure(this, result);
    }

    @Override
    public void backendDone(Object attachment, int result) {
        handler.backendDone(this, result);
    }
}
