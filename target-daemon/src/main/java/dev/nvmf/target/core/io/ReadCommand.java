package dev.nvmf.target.core.io;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.Status;

/**
 * Read (kernel io-cmd-bdev.c / io-cmd-file.c, {@code nvmet_*_execute_rw}): the blocks go to the host after the
 * completion.
 */
final class ReadCommand extends TransferCommand {
    ReadCommand(int maxTransferBytes) {
        super(maxTransferBytes, false, NvmeRequest.DIRECTION_CONTROLLER_TO_HOST, true);
    }

    @Override
    public void execute(CommandContext ctx, Controller c) {
        if (!dataFits(ctx)) {
            return;
        }
        NvmeRequest r = ctx.request;
        int len = (int) ctx.byteLength;
        r.data(r.data(), len); // send exactly the blocks read, whatever the host's buffer
        ctx.namespace.backend().read(ctx.byteOffset, r.data(), len, r, ctx);
    }

    @Override
    int succeeded(CommandContext ctx) {
        ctx.namespace.statistics().read(ctx.byteLength);
        return Status.SUCCESS;
    }
}
