package dev.nvmf.target.core.io;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.CommandHandler;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

/**
 * One I/O command of the NVM command set: its parse-time checks ({@link #prepare}), its execution and its backend
 * completion, in one object that {@link IoCommands} creates once per target and every request of that opcode uses.
 */
abstract class IoCommand implements CommandHandler {
    /**
     * Checks what the host controls before any data moves, records the command's range in the context, and sets
     * the data direction; false after completing the command with an error.
     */
    abstract boolean prepare(CommandContext ctx, Controller c, Namespace ns);

    /**
     * The backend operation finished: a failure completes the command with the errno's status, a success with
     * what {@link #succeeded} says. Commands with more to do after the backend override this.
     */
    @Override
    public void backendDone(CommandContext ctx, int result) {
        if (result != 0) {
            completeFailed(ctx, result);
            return;
        }
        ctx.complete(succeeded(ctx));
    }

    /** The backend operation succeeded: account for it and return the command's status. */
    int succeeded(CommandContext ctx) {
        return Status.SUCCESS;
    }

    /** slba + blocks within the namespace, with slba taken as unsigned. */
    static boolean inRange(Namespace ns, long slba, long blocks) {
        long size = ns.sizeBlocks();
        return Long.compareUnsigned(slba, size) < 0 && blocks <= size - slba;
    }

    /**
     * The SGL the transport mapped must hold the whole transfer (kernel core.c, {@code nvmet_check_transfer_len});
     * false after completing the command with Data SGL Length Invalid.
     */
    static boolean dataFits(CommandContext ctx) {
        NvmeRequest r = ctx.request;
        if (r.dataLength() < ctx.byteLength || r.data().byteSize() < ctx.byteLength) {
            ctx.fail(Status.DATA_SGL_LENGTH_INVALID, SubmissionQueueEntry.SGL1);
            return false;
        }
        return true;
    }

    /**
     * Completes a command whose backend operation failed with {@code result} (a negative errno): the observer
     * counts it, the errno becomes the command's status, and media errors count in SMART.
     */
    static void completeFailed(CommandContext ctx, int result) {
        ctx.reportBackendFailure(result);
        int status = BackendStatus.of(ctx.opcode, result);
        if (BackendStatus.isMediaError(status)) {
            ctx.namespace.statistics().mediaError();
        }
        ctx.complete(status);
    }
}
