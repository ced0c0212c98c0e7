package dev.nvmf.target.core.discovery;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.CommandHandler;
import dev.nvmf.target.core.CommandParser;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.OpcodeTable;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.admin.AdminCommands;
import dev.nvmf.target.core.admin.DataOut;
import dev.nvmf.target.core.admin.IdentifyCommand;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Identify;
import dev.nvmf.target.nvme.IdentifyController;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import org.agrona.concurrent.NanoClock;

import java.lang.foreign.MemorySegment;

/**
 * Admin commands of a discovery controller (NVMe-oF 1.1, 5; kernel discovery.c, {@code nvmet_parse_discovery_cmd}):
 * Identify Controller only, Get Log Page 70h only, Set/Get Features Keep Alive Timer and Asynchronous Event
 * Configuration (discovery log change notices), Asynchronous Event Request and Keep Alive. Everything else: Invalid
 * Opcode / Invalid Field. {@link #parse} finds the handler bound here in an {@link OpcodeTable}.
 */
public final class DiscoveryCommands implements CommandParser {
    private final DiscoveryLogSource logs;
    private final TargetOptions options;
    private final NanoClock clock;
    private final OpcodeTable table;

    /**
     * @param logs  where the discovery log page comes from
     * @param clock keep-alive reads it
     */
    public DiscoveryCommands(DiscoveryLogSource logs, TargetOptions options, NanoClock clock) {
        this.logs = logs;
        this.options = options;
        this.clock = clock;
        this.table = new OpcodeTable()
                .add(Opcodes.ADMIN_IDENTIFY, NvmeRequest.DIRECTION_CONTROLLER_TO_HOST, this::identify)
                .add(Opcodes.ADMIN_GET_LOG_PAGE, NvmeRequest.DIRECTION_CONTROLLER_TO_HOST, this::getLogPage)
                .add(Opcodes.ADMIN_GET_FEATURES, NvmeRequest.DIRECTION_CONTROLLER_TO_HOST,
                        DiscoveryCommands::getFeatures)
                .add(Opcodes.ADMIN_SET_FEATURES, NvmeRequest.DIRECTION_HOST_TO_CONTROLLER, this::setFeatures)
                .add(Opcodes.ADMIN_ASYNC_EVENT_REQUEST, NvmeRequest.DIRECTION_NONE, AdminCommands::asyncEventRequest)
                .add(Opcodes.ADMIN_KEEP_ALIVE, NvmeRequest.DIRECTION_NONE, AdminCommands.keepAliveCommand(clock));
    }

    @Override
    public CommandHandler parse(CommandContext ctx, Controller c) {
        return table.parse(ctx, c);
    }

    private void identify(CommandContext ctx, Controller c) {
        if (Identify.cns(ctx.sqe.cdw10()) != Identify.CNS_CONTROLLER) {
            ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW10);
            return;
        }
        MemorySegment out = DataOut.prepare(ctx, Identify.DATA_SIZE);
        if (out == null) {
            return;
        }
        controller(out, c, options);
        ctx.complete(Status.SUCCESS);
    }

    /** Identify Controller of a discovery controller (CNTRLTYPE 2; kernel: {@code nvmet_execute_disc_identify}). */
    public static void controller(MemorySegment out, Controller c, TargetOptions options) {
        Le.asciiSpacePadded(out, IdentifyController.SN, IdentifyController.SN_LENGTH,
                c.subsystem().config().serialNumber());
        Le.asciiSpacePadded(out, IdentifyController.MN, IdentifyController.MN_LENGTH,
                c.subsystem().config().modelNumber());
        Le.asciiSpacePadded(out, IdentifyController.FR, IdentifyController.FR_LENGTH,
                c.subsystem().config().firmware());
        // The transport refuses a keyed SGL longer than the largest transfer on every queue, the discovery
        // controller's too, so say so (the kernel reports 0, "no limit", and refuses such SGLs all the same).
        Le.u8(out, IdentifyController.MDTS, options.mdts());
        Le.u16(out, IdentifyController.CNTLID, c.cntlid());
        Le.u32(out, IdentifyController.VER, c.subsystem().config().version());
        Le.u32(out, IdentifyController.OAES, IdentifyController.OAES_DISCOVERY_LOG_CHANGE);
        Le.u8(out, IdentifyController.CNTRLTYPE, IdentifyController.CNTRLTYPE_DISCOVERY);
        Le.u8(out, IdentifyController.AERL, options.asyncEventLimit() - 1);
        Le.u8(out, IdentifyController.LPA, IdentifyController.LPA_EXTENDED_DATA);
        Le.u8(out, IdentifyController.ELPE, options.errorLogEntries() - 1);
        Le.u16(out, IdentifyController.KAS, options.keepAliveGranularity());
        Le.u16(out, IdentifyController.MAXCMD, options.adminQueueDepth());
        Le.u32(out, IdentifyController.SGLS, IdentifyCommand.sgls(c.port()));
        Le.utf8NulPadded(out, IdentifyController.SUBNQN, IdentifyController.SUBNQN_LENGTH, c.subsystem().nqn());
    }

    private void getLogPage(CommandContext ctx, Controller c) {
        int cdw10 = ctx.sqe.cdw10();
        if (LogPages.lid(cdw10) != LogPages.LID_DISCOVERY) {
            ctx.fail(Status.INVALID_LOG_PAGE, SubmissionQueueEntry.CDW10);
            return;
        }
        long length = LogPages.numberOfDwords(cdw10, ctx.sqe.cdw11()) * 4;
        long offset = LogPages.offset(ctx.sqe.cdw12(), ctx.sqe.cdw13());
        boolean portLocal = (LogPages.lsp(cdw10) & LogPages.DISCOVERY_LSP_PORT_LOCAL) != 0;
        byte[] page = logs.discoveryLog(c.hostNqn(), c.port().id(), ctx.queue.transport().localAddress(), portLocal);
        MemorySegment out = DataOut.prepare(ctx, length);
        if (out == null || !DataOut.copyPage(ctx, page, offset, out)) {
            return;
        }
        if (!LogPages.rae(cdw10)) {
            c.acknowledgeDiscoveryEvent();
        }
        ctx.complete(Status.SUCCESS);
    }

    private void setFeatures(CommandContext ctx, Controller c) {
        int cdw10 = ctx.sqe.cdw10();
        int cdw11 = ctx.sqe.cdw11();
        if (Features.save(cdw10)) {
            ctx.fail(Status.FEATURE_NOT_SAVEABLE, SubmissionQueueEntry.CDW10 + 3);
            return;
        }
        switch (Features.fid(cdw10)) {
            case Features.FID_KEEP_ALIVE_TIMER ->
                    c.keepAlive().timeoutMillis(cdw11 & 0xFFFF_FFFFL, clock.nanoTime());
            case Features.FID_ASYNC_EVENT_CONFIGURATION -> {
                if ((cdw11 & ~AsyncEvents.CONFIG_DISCOVERY_LOG_CHANGE) != 0) {
                    ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11);
                    return;
                }
                c.asyncEventConfig(cdw11);
            }
            default -> {
                ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW10);
                return;
            }
        }
        ctx.complete(Status.SUCCESS);
    }

    private static void getFeatures(CommandContext ctx, Controller c) {
        switch (Features.fid(ctx.sqe.cdw10())) {
            case Features.FID_KEEP_ALIVE_TIMER -> ctx.result0 = (int) c.keepAlive().timeoutMillis();
            case Features.FID_ASYNC_EVENT_CONFIGURATION -> ctx.result0 = c.asyncEventConfig();
            default -> {
                ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW10);
                return;
            }
        }
        ctx.complete(Status.SUCCESS);
    }
}
