package dev.nvmf.target.core;

import dev.nvmf.target.core.controller.Controller;

/**
 * The parse step of one command set (kernel core.c {@code nvmet_req_init} and the functions it calls:
 * {@code nvmet_parse_connect_cmd}, {@code nvmet_parse_fabrics_admin_cmd}, {@code nvmet_parse_admin_cmd},
 * {@code nvmet_parse_discovery_cmd}, {@code nvmet_parse_io_cmd}): it checks what can be checked before any data
 * moves, sets {@link NvmeRequest#dataDirection}, and returns the {@link CommandHandler} that will execute the command.
 * Runs on the queue's poller; allocates nothing for I/O commands.
 */
@FunctionalInterface
public interface CommandParser {
    /**
     * @param c the queue's controller; null before Connect (only the Fabrics command set sees null)
     * @return the command's handler, or null after the parser completed the command with an error status
     */
    CommandHandler parse(CommandContext ctx, Controller c);
}
