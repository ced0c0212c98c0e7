package dev.nvmf.target.core.io;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;

/** Flush (kernel io-cmd-bdev.c / io-cmd-file.c, {@code nvmet_*_execute_flush}): everything written is durable. */
final class FlushCommand extends IoCommand {
    @Override
    boolean prepare(CommandContext ctx, Controller c, Namespace ns) {
        ctx.request.dataDirection(NvmeRequest.DIRECTION_NONE);
        return true;
    }

    @Override
    public void execute(CommandContext ctx, Controller c) {
        ctx.namespace.backend().flush(ctx.request, ctx);
    }
}
