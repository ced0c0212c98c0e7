package dev.nvmf.target.core.fabrics;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.CommandHandler;
import dev.nvmf.target.core.CommandParser;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.controller.ControllerProperties;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.Status;
import org.agrona.concurrent.NanoClock;

import java.lang.foreign.MemorySegment;

/**
 * Fabrics commands, opcode 7Fh (NVMe-oF 1.1, 3.3-3.5; kernel fabrics-cmd.c, {@code nvmet_parse_connect_cmd} and
 * {@code nvmet_parse_fabrics_admin_cmd}): Connect (see {@link ConnectCommand}), Property Get, Property Set (the
 * CC/CSTS state machine lives in {@link ControllerProperties}) and Disconnect. Authentication is not supported
 * (Invalid Opcode, as for any unknown FCTYPE). Disconnect on the admin queue is Invalid Queue Type. {@link #parse}
 * decodes FCTYPE once and returns the handler.
 */
public final class FabricsCommands implements CommandParser {
    private final CommandHandler connect;
    private final CommandHandler propertyGet = FabricsCommands::propertyGet;
    private final CommandHandler propertySet = this::propertySet;
    private final CommandHandler disconnect = FabricsCommands::disconnect;
    private final NanoClock clock;

    /**
     * @param model   what Connect finds and creates controllers in
     * @param clock   keep-alive starts when CC.EN is set
     */
    public FabricsCommands(ConnectModel model, TargetOptions options, NanoClock clock) {
        this.connect = new ConnectCommand(model, options)::execute;
        this.clock = clock;
    }

    /** @param c the queue's controller, null before Connect */
    @Override
    public CommandHandler parse(CommandContext ctx, Controller c) {
        MemorySegment sqe = ctx.sqe.segment();
        int fctype = Le.u8(sqe, FabricsCommand.FCTYPE);
        if (c == null) {
            if (fctype != Opcodes.FCTYPE_CONNECT) {
                ctx.fail(Status.COMMAND_SEQUENCE_ERROR, FabricsCommand.FCTYPE);
                return null;
            }
            ctx.request.dataDirection(NvmeRequest.DIRECTION_HOST_TO_CONTROLLER);
            return connect;
        }
        switch (fctype) {
            case Opcodes.FCTYPE_CONNECT -> {
                // This queue is connected already (NVMe-oF 1.1 figure 31: Controller Busy).
                ctx.fail(Status.CONNECT_CONTROLLER_BUSY, FabricsCommand.FCTYPE);
                return null;
            }
            case Opcodes.FCTYPE_PROPERTY_GET, Opcodes.FCTYPE_PROPERTY_SET -> {
                if (ctx.queue.qid() != 0) {
                    ctx.fail(Status.INVALID_OPCODE, FabricsCommand.FCTYPE);
                    return null;
                }
                return fctype == Opcodes.FCTYPE_PROPERTY_GET ? propertyGet : propertySet;
            }
            case Opcodes.FCTYPE_DISCONNECT -> {
                if (ctx.queue.qid() == 0) {
                    // Disconnect deletes an I/O queue; the association ends when the host tears down the admin
                    // queue's transport connection (NVMe-oF 1.1, 3.4: on the admin queue, Invalid Queue Type).
                    ctx.fail(Status.INVALID_QUEUE_TYPE, FabricsCommand.FCTYPE);
                    return null;
                }
                return disconnect;
            }
            default -> {
                ctx.fail(Status.INVALID_OPCODE, FabricsCommand.FCTYPE);
                return null;
            }
        }
    }

    /**
     * Property Get: CAP as 8 bytes; VS, CC, CSTS as 4 bytes (kernel: {@code nvmet_execute_prop_get}); anything else,
     * or a size that does not match the property, is Invalid Field.
     */
    private static void propertyGet(CommandContext ctx, Controller c) {
        MemorySegment sqe = ctx.sqe.segment();
        int attrib = Le.u8(sqe, FabricsCommand.PROPERTY_ATTRIB) & 0x7;
        int offset = Le.u32(sqe, FabricsCommand.PROPERTY_OFFSET);
        ControllerProperties p = c.properties();
        if (attrib == FabricsCommand.ATTRIB_SIZE_8) {
            if (offset != Properties.CAP) {
                ctx.fail(Status.INVALID_FIELD, FabricsCommand.PROPERTY_OFFSET);
                return;
            }
            long cap = p.cap();
            ctx.result0 = (int) cap;
            ctx.result1 = (int) (cap >>> 32);
            ctx.complete(Status.SUCCESS);
            return;
        }
        if (attrib != FabricsCommand.ATTRIB_SIZE_4) {
            ctx.fail(Status.INVALID_FIELD, FabricsCommand.PROPERTY_ATTRIB);
            return;
        }
        switch (offset) {
            case Properties.VS -> ctx.result0 = p.vs();
            case Properties.CC -> ctx.result0 = p.cc();
            case Properties.CSTS -> ctx.result0 = p.csts();
            default -> {
                ctx.fail(Status.INVALID_FIELD, FabricsCommand.PROPERTY_OFFSET);
                return;
            }
        }
        ctx.complete(Status.SUCCESS);
    }

    /** Property Set: only CC (4 bytes) is writable; everything else is Invalid Field. */
    private void propertySet(CommandContext ctx, Controller c) {
        MemorySegment sqe = ctx.sqe.segment();
        int attrib = Le.u8(sqe, FabricsCommand.PROPERTY_ATTRIB) & 0x7;
        int offset = Le.u32(sqe, FabricsCommand.PROPERTY_OFFSET);
        if (attrib != FabricsCommand.ATTRIB_SIZE_4) {
            ctx.fail(Status.INVALID_FIELD, FabricsCommand.PROPERTY_ATTRIB);
            return;
        }
        if (offset != Properties.CC) {
            ctx.fail(Status.INVALID_FIELD, FabricsCommand.PROPERTY_OFFSET);
            return;
        }
        int action = c.properties().writeCc(Le.u32(sqe, FabricsCommand.PROPERTY_VALUE));
        ctx.complete(Status.SUCCESS);
        switch (action) {
            case ControllerProperties.CC_RESET -> c.disconnectIoQueues("controller reset (CC.EN cleared)");
            case ControllerProperties.CC_SHUTDOWN -> c.shutdown();
            case ControllerProperties.CC_ENABLED -> c.keepAlive().rearm(clock.nanoTime());
            default -> {
            }
        }
    }

    /**
     * Disconnect (NVMe-oF 1.1, 3.4), on an I/O queue only ({@link #parse} refuses it on the admin queue): deletes
     * that queue. The response goes first; the transport drains the queue after it.
     */
    private static void disconnect(CommandContext ctx, Controller c) {
        int recfmt = Le.u16(ctx.sqe.segment(), FabricsCommand.DISCONNECT_RECFMT);
        if (recfmt != 0) {
            ctx.fail(Status.CONNECT_INCOMPATIBLE_FORMAT, FabricsCommand.DISCONNECT_RECFMT);
            return;
        }
        var queue = ctx.queue;
        ctx.complete(Status.SUCCESS);
        queue.disconnect("host Disconnect");
    }
}
