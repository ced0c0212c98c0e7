package dev.nvmf.target.core.io;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.Status;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Compare (NVM Command Set 1.0, 3): the medium is read into a scratch buffer and compared with the host's data;
 * any difference is Compare Failure.
 */
final class CompareCommand extends TransferCommand {
    CompareCommand(int maxTransferBytes) {
        super(maxTransferBytes, false, NvmeRequest.DIRECTION_HOST_TO_CONTROLLER);
    }

    @Override
    public void execute(CommandContext ctx, Controller c) {
        if (!dataFits(ctx)) {
            return;
        }
        int len = (int) ctx.byteLength;
        if (ctx.scratch.byteSize() < len) {
            ctx.scratch = Arena.ofAuto().allocate(len, 4096);
        }
        ctx.namespace.backend().read(ctx.byteOffset, ctx.scratch, len, ctx.request, ctx);
    }

    @Override
    public void backendDone(CommandContext ctx, int result) {
        if (result != 0) {
            completeFailed(ctx, result);
            return;
        }
        ctx.namespace.statistics().read(ctx.byteLength);
        long mismatch = MemorySegment.mismatch(ctx.scratch, 0, ctx.byteLength, ctx.request.data(), 0, ctx.byteLength);
        ctx.complete(mismatch >= 0 ? Status.COMPARE_FAILURE : Status.SUCCESS);
    }
}
