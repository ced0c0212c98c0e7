package dev.nvmf.target.core.io;

import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.verbs.Errno;
import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.NvmCommand;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * NVM command set I/O commands (NVM Command Set 1.0, 3; kernel: io-cmd-bdev.c / io-cmd-file.c): Read, Write,
 * Flush, Write Zeroes, Dataset Management (deallocate) and Compare, on the namespace's {@link BlockBackend}.
 *
 * <p>{@link #begin} checks what the host controls — namespace, write protection, transfer size against MDTS,
 * the LBA range against the namespace size — and sets the data direction; {@link #execute} checks the SGL length
 * the transport mapped and starts the backend operation. The backend calls {@link CommandContext#backendDone}
 * (any thread), which lands in {@link #backendDone}: the request completes there. A backend error fails that
 * command only.
 *
 * <p>The Read/Write path allocates nothing: the context is the callback, the request is the attachment, the
 * namespace lookup is an array read and the counters are LongAdders.
 */
public final class IoCommands {
    private final int maxTransferBytes;

    public IoCommands(int maxTransferBytes) {
        this.maxTransferBytes = maxTransferBytes;
    }

    public boolean begin(CommandContext ctx, Controller c) {
        Namespace ns = c.subsystem().namespace(ctx.nsid);
        if (ns == null) {
            ctx.fail(Status.INVALID_NAMESPACE, SubmissionQueueEntry.NSID);
            return false;
        }
        ctx.namespace = ns;
        switch (ctx.opcode) {
            case Opcodes.IO_READ:
                return beginTransfer(ctx, c, ns, false, NvmeRequest.DIRECTION_CONTROLLER_TO_HOST);
            case Opcodes.IO_WRITE:
                return beginTransfer(ctx, c, ns, true, NvmeRequest.DIRECTION_HOST_TO_CONTROLLER);
            case Opcodes.IO_COMPARE:
                return beginTransfer(ctx, c, ns, false, NvmeRequest.DIRECTION_HOST_TO_CONTROLLER);
            case Opcodes.IO_FLUSH:
                ctx.request.dataDirection(NvmeRequest.DIRECTION_NONE);
                return true;
            case Opcodes.IO_WRITE_ZEROES:
                return beginWriteZeroes(ctx, ns);
            case Opcodes.IO_DATASET_MANAGEMENT:
                return beginDatasetManagement(ctx, ns);
            default:
                ctx.fail(Status.INVALID_OPCODE, SubmissionQueueEntry.OPCODE);
                return false;
        }
    }

    private boolean beginTransfer(CommandContext ctx, Controller c, Namespace ns, boolean write, int direction) {
        if (write && ns.readOnly()) {
            ctx.fail(Status.NAMESPACE_WRITE_PROTECTED, SubmissionQueueEntry.OPCODE);
            return false;
        }
        SubmissionQueueEntry sqe = ctx.sqe;
        long slba = sqe.slba();
        int blocks = sqe.nlb() + 1;
        ctx.lba = slba;
        long bytes = (long) blocks << ns.blockShift();
        if (bytes > maxTransferBytes) {
            ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW12);
            return false;
        }
        if (!inRange(ns, slba, blocks)) {
            ctx.fail(Status.LBA_OUT_OF_RANGE, SubmissionQueueEntry.CDW10);
            return false;
        }
        ctx.byteOffset = slba << ns.blockShift();
        ctx.byteLength = bytes;
        // With the volatile write cache turned off, every write is written through (NVMe Base 2.0, 5.21.1.6).
        ctx.forceUnitAccess = (sqe.cdw12() & NvmCommand.CDW12_FUA) != 0 || !c.volatileWriteCache();
        ctx.request.dataDirection(direction);
        return true;
    }

    private static boolean beginWriteZeroes(CommandContext ctx, Namespace ns) {
        if (ns.readOnly()) {
            ctx.fail(Status.NAMESPACE_WRITE_PROTECTED, SubmissionQueueEntry.OPCODE);
            return false;
        }
        long slba = ctx.sqe.slba();
        int blocks = ctx.sqe.nlb() + 1;
        ctx.lba = slba;
        if (!inRange(ns, slba, blocks)) {
            ctx.fail(Status.LBA_OUT_OF_RANGE, SubmissionQueueEntry.CDW10);
            return false;
        }
        ctx.byteOffset = slba << ns.blockShift();
        ctx.byteLength = (long) blocks << ns.blockShift();
        ctx.request.dataDirection(NvmeRequest.DIRECTION_NONE);
        return true;
    }

    private static boolean beginDatasetManagement(CommandContext ctx, Namespace ns) {
        int ranges = (ctx.sqe.cdw10() & 0xFF) + 1;
        boolean deallocate = (ctx.sqe.cdw11() & NvmCommand.DSM_ATTRIBUTE_DEALLOCATE) != 0;
        if (deallocate && ns.readOnly()) {
            ctx.fail(Status.NAMESPACE_WRITE_PROTECTED, SubmissionQueueEntry.CDW11);
            return false;
        }
        ctx.byteLength = (long) ranges * NvmCommand.DSM_RANGE_SIZE;
        ctx.request.dataDirection(NvmeRequest.DIRECTION_HOST_TO_CONTROLLER);
        return true;
    }

    /** slba + blocks within the namespace, with slba taken as unsigned. */
    private static boolean inRange(Namespace ns, long slba, long blocks) {
        long size = ns.sizeBlocks();
        return Long.compareUnsigned(slba, size) < 0 && blocks <= size - slba;
    }

    public void execute(CommandContext ctx, Controller c) {
        NvmeRequest r = ctx.request;
        Namespace ns = ctx.namespace;
        BlockBackend backend = ns.backend();
        switch (ctx.opcode) {
            case Opcodes.IO_READ -> {
                if (!dataFits(ctx)) {
                    return;
                }
                int len = (int) ctx.byteLength;
                r.data(r.data(), len); // send exactly the blocks read, whatever the host's buffer
                backend.read(ctx.byteOffset, r.data(), len, r, ctx);
            }
            case Opcodes.IO_WRITE -> {
                if (!dataFits(ctx)) {
                    return;
                }
                backend.write(ctx.byteOffset, r.data(), (int) ctx.byteLength, ctx.forceUnitAccess, r, ctx);
            }
            case Opcodes.IO_COMPARE -> {
                if (!dataFits(ctx)) {
                    return;
                }
                int len = (int) ctx.byteLength;
                if (ctx.scratch.byteSize() < len) {
                    ctx.scratch = Arena.ofAuto().allocate(len, 4096);
                }
                backend.read(ctx.byteOffset, ctx.scratch, len, r, ctx);
            }
            case Opcodes.IO_FLUSH -> backend.flush(r, ctx);
            case Opcodes.IO_WRITE_ZEROES -> {
                if ((ctx.sqe.cdw12() & NvmCommand.CDW12_DEAC) != 0) {
                    backend.deallocate(ctx.byteOffset, ctx.byteLength, r, ctx); // reads back zeroes (DLFEAT)
                } else {
                    backend.writeZeroes(ctx.byteOffset, ctx.byteLength, r, ctx);
                }
            }
            case Opcodes.IO_DATASET_MANAGEMENT -> datasetManagement(ctx, ns);
            default -> ctx.fail(Status.INVALID_OPCODE, SubmissionQueueEntry.OPCODE);
        }
    }

    /** The SGL the transport mapped must hold the whole transfer (kernel: {@code nvmet_check_transfer_len}). */
    private static boolean dataFits(CommandContext ctx) {
        NvmeRequest r = ctx.request;
        if (r.dataLength() < ctx.byteLength || r.data().byteSize() < ctx.byteLength) {
            ctx.fail(Status.DATA_SGL_LENGTH_INVALID, SubmissionQueueEntry.SGL1);
            return false;
        }
        return true;
    }

    /**
     * Dataset Management: without the deallocate attribute a hint, done at once; with it every range is checked
     * first (one out of range fails the command and nothing is deallocated), then each non-empty range goes to
     * the backend, and the last completion completes the command with the first failure, if any.
     */
    private static void datasetManagement(CommandContext ctx, Namespace ns) {
        if (!dataFits(ctx)) {
            return;
        }
        if ((ctx.sqe.cdw11() & NvmCommand.DSM_ATTRIBUTE_DEALLOCATE) == 0) {
            ctx.complete(Status.SUCCESS);
            return;
        }
        MemorySegment data = ctx.request.data();
        int ranges = (int) (ctx.byteLength / NvmCommand.DSM_RANGE_SIZE);
        for (int i = 0; i < ranges; i++) {
            long base = (long) i * NvmCommand.DSM_RANGE_SIZE;
            long blocks = Le.u32(data, base + NvmCommand.DSM_RANGE_LENGTH) & 0xFFFF_FFFFL;
            long slba = Le.u64(data, base + NvmCommand.DSM_RANGE_SLBA);
            if (blocks != 0 && !inRange(ns, slba, blocks)) {
                ctx.lba = slba;
                ctx.fail(Status.LBA_OUT_OF_RANGE, SubmissionQueueEntry.CDW10);
                return;
            }
        }
        ctx.pending.set(1); // held by this loop until every range is issued
        int shift = ns.blockShift();
        for (int i = 0; i < ranges; i++) {
            long base = (long) i * NvmCommand.DSM_RANGE_SIZE;
            long blocks = Le.u32(data, base + NvmCommand.DSM_RANGE_LENGTH) & 0xFFFF_FFFFL;
            if (blocks == 0) {
                continue;
            }
            long slba = Le.u64(data, base + NvmCommand.DSM_RANGE_SLBA);
            ctx.pending.incrementAndGet();
            ns.backend().deallocate(slba << shift, blocks << shift, ctx.request, ctx);
        }
        if (ctx.pending.decrementAndGet() == 0) {
            ctx.complete(ctx.deferredStatus);
        }
    }

    /** A backend operation of {@code ctx} finished with {@code result} (0 or -errno). Any thread. */
    public void backendDone(CommandContext ctx, int result) {
        Namespace ns = ctx.namespace;
        int opcode = ctx.opcode;
        if (opcode == Opcodes.IO_DATASET_MANAGEMENT) {
            // Deallocation is advisory: a backend that cannot do it has done nothing wrong.
            if (result != 0 && result != -Errno.EOPNOTSUPP) {
                ctx.queue.target().observer().backendFailed(ctx, result);
            }
            if (result != 0 && result != -Errno.EOPNOTSUPP && ctx.deferredStatus == 0) {
                ctx.deferredStatus = BackendStatus.of(opcode, result);
            }
            if (ctx.pending.decrementAndGet() == 0) {
                ctx.complete(ctx.deferredStatus);
            }
            return;
        }
        if (result != 0) {
            ctx.queue.target().observer().backendFailed(ctx, result);
            int status = BackendStatus.of(opcode, result);
            if (BackendStatus.isMediaError(status)) {
                ns.statistics().mediaError();
            }
            ctx.complete(status);
            return;
        }
        switch (opcode) {
            case Opcodes.IO_READ -> ns.statistics().read(ctx.byteLength);
            case Opcodes.IO_WRITE -> ns.statistics().written(ctx.byteLength);
            case Opcodes.IO_COMPARE -> {
                ns.statistics().read(ctx.byteLength);
                long mismatch = MemorySegment.mismatch(ctx.scratch, 0, ctx.byteLength, ctx.request.data(), 0,
                        ctx.byteLength);
                if (mismatch >= 0) {
                    ctx.complete(Status.COMPARE_FAILURE);
                    return;
                }
            }
            default -> {
            }
        }
        ctx.complete(Status.SUCCESS);
    }
}
