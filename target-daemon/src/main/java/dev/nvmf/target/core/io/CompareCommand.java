package dev.nvmf.target.core.io;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.Status;

import java.lang.foreign.MemorySegment;

/**
 * Compare (NVM Command Set 1.0, 3): the medium is read into a scratch buffer borrowed from the target's
 * {@link CompareBuffers} and compared with the host's data; any difference is Compare Failure. When every scratch
 * buffer is in use the command fails with Internal Error without DNR, which a host retries (as for a backend's
 * EAGAIN, see {@link BackendStatus}).
 */
final class CompareCommand extends TransferCommand {
    private final CompareBuffers buffers;

    CompareCommand(int maxTransferBytes, CompareBuffers buffers) {
        super(maxTransferBytes, false, NvmeRequest.DIRECTION_HOST_TO_CONTROLLER, false);
        this.buffers = buffers;
    }

    @Override
    public void execute(CommandContext ctx, Controller c) {
        if (!dataFits(ctx)) {
            return;
        }
        MemorySegment scratch = buffers.take();
        if (scratch == null) {
            ctx.complete(Status.SC_INTERNAL_ERROR); // transient: no DNR, the host retries
            return;
        }
        ctx.scratch = scratch;
        ctx.namespace.backend().read(ctx.byteOffset, scratch, (int) ctx.byteLength, ctx.request, ctx);
    }

    @Override
    public void backendDone(CommandContext ctx, int result) {
        MemorySegment scratch = ctx.scratch;
        ctx.scratch = MemorySegment.NULL;
        if (result != 0) {
            buffers.give(scratch);
            completeFailed(ctx, result);
            return;
        }
        ctx.namespace.statistics().read(ctx.byteLength);
        long mismatch = MemorySegment.mismatch(scratch, 0, ctx.byteLength, ctx.request.data(), 0, ctx.byteLength);
        buffers.give(scratch); // before the completion hands the request (and its context) back
        ctx.complete(mismatch >= 0 ? Status.COMPARE_FAILURE : Status.SUCCESS);
    }
}
