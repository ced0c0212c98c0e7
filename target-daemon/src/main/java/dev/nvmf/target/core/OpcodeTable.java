package dev.nvmf.target.core;

import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

/**
 * The parse step of a command set whose opcode alone chooses the handler and the data direction (the admin and
 * discovery command sets; kernel admin-cmd.c {@code nvmet_parse_admin_cmd}, discovery.c
 * {@code nvmet_parse_discovery_cmd}): one array read per command. Filled once, when the command set is built; an
 * opcode not in the table is Invalid Opcode.
 */
public final class OpcodeTable implements CommandParser {
    private final CommandHandler[] handlers = new CommandHandler[256];
    private final int[] directions = new int[256];

    /** Adds an opcode: its handler and which way its data moves ({@code NvmeRequest.DIRECTION_*}). */
    public OpcodeTable add(int opcode, int direction, CommandHandler handler) {
        if (handlers[opcode & 0xFF] != null) {
            throw new IllegalArgumentException("opcode " + opcode + " is in the table already");
        }
        handlers[opcode & 0xFF] = handler;
        directions[opcode & 0xFF] = direction;
        return this;
    }

    @Override
    public CommandHandler parse(CommandContext ctx, Controller c) {
        int opcode = ctx.opcode & 0xFF;
        CommandHandler handler = handlers[opcode];
        if (handler == null) {
            ctx.fail(Status.INVALID_OPCODE, SubmissionQueueEntry.OPCODE);
            return null;
        }
        ctx.request.dataDirection(directions[opcode]);
        return handler;
    }
}
