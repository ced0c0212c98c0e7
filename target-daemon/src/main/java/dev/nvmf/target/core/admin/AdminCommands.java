package dev.nvmf.target.core.admin;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.CommandHandler;
import dev.nvmf.target.core.CommandParser;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.OpcodeTable;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.controller.AsyncEventQueue;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import org.agrona.concurrent.NanoClock;

/**
 * Admin commands of an I/O controller (NVMe Base 2.0, 5; kernel admin-cmd.c, {@code nvmet_parse_admin_cmd}): the
 * parse step, plus the small ones — Asynchronous Event Request (5.2), Keep Alive (5.24) and Abort (5.1). Identify is
 * built by {@link IdentifyCommand}, log pages by {@link GetLogPageCommand}, features by {@link FeaturesCommands}.
 * Opcodes a fabrics controller does not implement (queue creation, firmware, format, namespace management, ...)
 * get Invalid Opcode. {@link #parse} finds the handler bound here in an {@link OpcodeTable}.
 */
public final class AdminCommands implements CommandParser {
    private final OpcodeTable table;

    /**
     * @param clock      keep-alive and SMART power-on hours read it
     * @param startNanos clock time when the target started (SMART power-on hours)
     * @param ana        the target-wide part of the ANA log page
     */
    public AdminCommands(TargetOptions options, NanoClock clock, long startNanos, AnaLogSource ana) {
        FeaturesCommands features = new FeaturesCommands(clock);
        this.table = new OpcodeTable()
                .add(Opcodes.ADMIN_IDENTIFY, NvmeRequest.DIRECTION_CONTROLLER_TO_HOST,
                        new IdentifyCommand(options)::execute)
                .add(Opcodes.ADMIN_GET_LOG_PAGE, NvmeRequest.DIRECTION_CONTROLLER_TO_HOST,
                        new GetLogPageCommand(clock, startNanos, ana)::execute)
                .add(Opcodes.ADMIN_GET_FEATURES, NvmeRequest.DIRECTION_CONTROLLER_TO_HOST, features::get)
                .add(Opcodes.ADMIN_SET_FEATURES, NvmeRequest.DIRECTION_HOST_TO_CONTROLLER, features::set)
                .add(Opcodes.ADMIN_ASYNC_EVENT_REQUEST, NvmeRequest.DIRECTION_NONE, AdminCommands::asyncEventRequest)
                .add(Opcodes.ADMIN_KEEP_ALIVE, NvmeRequest.DIRECTION_NONE, keepAliveCommand(clock))
                .add(Opcodes.ADMIN_ABORT, NvmeRequest.DIRECTION_NONE, AdminCommands::abort);
    }

    @Override
    public CommandHandler parse(CommandContext ctx, Controller c) {
        return table.parse(ctx, c);
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

    /**
     * Keep Alive: re-arms the timer (any command does, with TBKAS; this one exists for that alone). On a controller
     * whose KATO is 0 there is no timer to re-arm: Keep Alive Timeout Invalid, as the kernel target answers
     * (admin-cmd.c, {@code nvmet_execute_keep_alive}; NVMe Base 2.0, 5.24). One handler per command set that has the
     * command (admin and discovery), bound to the target's clock.
     */
    public static CommandHandler keepAliveCommand(NanoClock clock) {
        return (ctx, c) -> {
            if (c.keepAlive().timeoutMillis() == 0) {
                ctx.complete(Status.KEEP_ALIVE_TIMEOUT_INVALID);
                return;
            }
            c.keepAlive().rearm(clock.nanoTime());
            ctx.complete(Status.SUCCESS);
        };
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
