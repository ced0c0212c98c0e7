package dev.nvmf.target.core.admin;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.NvmeTarget;
import dev.nvmf.target.core.controller.AsyncEventQueue;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

/**
 * Admin commands of an I/O controller (NVMe Base 2.0, 5; kernel: admin-cmd.c): dispatch, plus the small ones —
 * Asynchronous Event Request (5.2), Keep Alive (5.24) and Abort (5.1). Identify is built by
 * {@link IdentifyCommand}, log pages by {@link GetLogPageCommand}, features by {@link FeaturesCommands}. Opcodes a
 * fabrics controller does not implement (queue creation, firmware, format, namespace management, ...) get Invalid
 * Opcode.
 */
public final class AdminCommands {
    private final IdentifyCommand identify;
    private final GetLogPageCommand logPages;
    private final FeaturesCommands features;
    private final NvmeTarget target;

    public AdminCommands(NvmeTarget target) {
        this.target = target;
        this.identify = new IdentifyCommand(target);
        this.logPages = new GetLogPageCommand(target);
        this.features = new FeaturesCommands();
    }

    public IdentifyCommand identify() { return identify; }
    public GetLogPageCommand logPages() { return logPages; }
    public FeaturesCommands features() { return features; }

    public boolean begin(CommandContext ctx, Controller c) {
        switch (ctx.opcode) {
            case Opcodes.ADMIN_IDENTIFY, Opcodes.ADMIN_GET_LOG_PAGE, Opcodes.ADMIN_GET_FEATURES ->
                    ctx.request.dataDirection(NvmeRequest.DIRECTION_CONTROLLER_TO_HOST);
            case Opcodes.ADMIN_SET_FEATURES -> ctx.request.dataDirection(NvmeRequest.DIRECTION_HOST_TO_CONTROLLER);
            case Opcodes.ADMIN_ASYNC_EVENT_REQUEST, Opcodes.ADMIN_KEEP_ALIVE, Opcodes.ADMIN_ABORT ->
                    ctx.request.dataDirection(NvmeRequest.DIRECTION_NONE);
            default -> {
                ctx.fail(Status.INVALID_OPCODE, SubmissionQueueEntry.OPCODE);
                return false;
            }
        }
        return true;
    }

    public void execute(CommandContext ctx, Controller c) {
        switch (ctx.opcode) {
            case Opcodes.ADMIN_IDENTIFY -> identify.execute(ctx, c);
            case Opcodes.ADMIN_GET_LOG_PAGE -> logPages.execute(ctx, c);
            case Opcodes.ADMIN_SET_FEATURES -> features.set(ctx, c);
            case Opcodes.ADMIN_GET_FEATURES -> features.get(ctx, c);
            case Opcodes.ADMIN_ASYNC_EVENT_REQUEST -> asyncEventRequest(ctx, c);
            case Opcodes.ADMIN_KEEP_ALIVE -> keepAlive(ctx, c, target);
            case Opcodes.ADMIN_ABORT -> abort(ctx, c);
            default -> ctx.fail(Status.INVALID_OPCODE, SubmissionQueueEntry.OPCODE);
        }
    }

    /** Asynchronous Event Request: held until an event, answered at once if one waits; AERL + 1 at most. */
    public static void asyncEventRequest(CommandContext ctx, Controller c) {
        long r = c.events().submit(ctx);
        if (r == AsyncEventQueue.LIMIT_EXCEEDED) {
            ctx.complete(Status.ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED);
        } else if (r != AsyncEventQueue.HELD) {
            ctx.result0 = (int) r;
            ctx.complete(Status.SUCCESS);
        }
    }

    /** Keep Alive: re-arms the timer (any command does, with TBKAS; this one exists for that alone). */
    public static void keepAlive(CommandContext ctx, Controller c, NvmeTarget target) {
        c.keepAlive().rearm(target.clock().nanoTime());
        ctx.complete(Status.SUCCESS);
    }

    /**
     * Abort (CDW10: SQID 15:0, CID 31:16): a held Asynchronous Event Request can be aborted (it completes with
     * Command Abort Requested, and this command's DW0 bit 0 is 0); anything else is "not aborted" (DW0 bit 0 = 1),
     * as the kernel target answers: I/O in a backend cannot be recalled.
     */
    public static void abort(CommandContext ctx, Controller c) {
        int cdw10 = ctx.sqe.cdw10();
        int sqid = cdw10 & 0xFFFF;
        int cid = cdw10 >>> 16;
        boolean aborted = sqid == 0 && cid != ctx.cid && c.events().abort(cid);
        ctx.result0 = aborted ? 0 : 1;
        ctx.complete(Status.SUCCESS);
    }
}
