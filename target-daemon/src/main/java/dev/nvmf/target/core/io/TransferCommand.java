package dev.nvmf.target.core.io;

import dev.nvmf.target.backend.MemoryMedium;
import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.NvmCommand;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

/**
 * The commands that move whole blocks between the host and the medium: Read, Write and Compare (NVM Command Set
 * 1.0, 3: SLBA in CDW10-11, NLB 0's based in CDW12 15:0, FUA in CDW12 bit 30).
 */
abstract class TransferCommand extends IoCommand {
    private final int maxTransferBytes;
    private final boolean writesMedium;
    private final int direction;
    /** Read and Write may move their blocks in place when the medium is memory; Compare reads into scratch. */
    private final boolean inPlace;

    /**
     * @param writesMedium true for Write: refused on a write-protected namespace
     * @param direction    which way the host's data moves ({@code NvmeRequest.DIRECTION_*})
     */
    TransferCommand(int maxTransferBytes, boolean writesMedium, int direction, boolean inPlace) {
        this.maxTransferBytes = maxTransferBytes;
        this.writesMedium = writesMedium;
        this.direction = direction;
        this.inPlace = inPlace;
    }

    @Override
    final boolean prepare(CommandContext ctx, Controller c, Namespace ns) {
        if (writesMedium && ns.readOnly()) {
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
        if (inPlace) {
            // In range (checked above): a transport may move these bytes straight to or from the medium.
            MemoryMedium medium = ns.backend().memoryMedium();
            if (medium != null) ctx.request.medium(medium, ctx.byteOffset, ctx.byteLength);
        }
        return true;
    }
}
