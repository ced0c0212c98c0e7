package dev.nvmf.target.core.io;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.NvmCommand;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

/**
 * Write Zeroes (NVM Command Set 1.0, 3.2.8; kernel io-cmd-bdev.c / io-cmd-file.c,
 * {@code nvmet_*_execute_write_zeroes}): the range reads back zeroes, always; with DEAC the backend may deallocate
 * it instead, in a way that still reads back zeroes (so DLFEAT bit 3, WZDS, holds for every backend).
 */
final class WriteZeroesCommand extends IoCommand {
    @Override
    boolean prepare(CommandContext ctx, Controller c, Namespace ns) {
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

    @Override
    public void execute(CommandContext ctx, Controller c) {
        boolean mayDeallocate = (ctx.sqe.cdw12() & NvmCommand.CDW12_DEAC) != 0;
        ctx.namespace.backend().writeZeroes(ctx.byteOffset, ctx.byteLength, mayDeallocate, ctx.request, ctx);
    }
}
