package dev.nvmf.target.core.io;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.Status;

/** Write (kernel io-cmd-bdev.c / io-cmd-file.c, {@code nvmet_*_execute_rw}): the host's blocks, with FUA as asked. */
final class WriteCommand extends TransferCommand {
    WriteCommand(int maxTransferBytes) {
        super(maxTransferBytes, true, NvmeRequest.DIRECTION_HOST_TO_CONTROLLER, true);
    }

    @Override
    public void execute(CommandContext ctx, Controller c) {
        if (!dataFits(ctx)) {
            return;
        }
        NvmeRequest r = ctx.request;
        ctx.namespace.backend().write(ctx.byteOffset, r.data(), (int) ctx.byteLength, ctx.forceUnitAccess, r, ctx);
    }

    @Override
    int succeeded(CommandContext ctx) {
        ctx.namespace.statistics().written(ctx.byteLength);
        return Status.SUCCESS;
    }
}
