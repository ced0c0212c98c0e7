package dev.nvmf.target.core;

import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.Status;

/**
 * What one command does once its data is in place: the core's {@code req->execute} (kernel core.c, set by the parse
 * functions that {@code nvmet_req_init} calls). A command set's {@link CommandParser} chooses the handler once, when
 * the command is parsed; {@link NvmeQueue} keeps it in the command's {@link CommandContext} and calls it from
 * {@link CommandQueue#execute}, and a backend's completion comes back to {@link #backendDone} of the same handler.
 * No opcode is decoded twice.
 *
 * <p>Handlers are created with the target (one object per command, or a method reference bound once), never per
 * command: choosing one allocates nothing.
 */
@FunctionalInterface
public interface CommandHandler {
    /**
     * Executes the command; its host data (if any) is in the request's data buffer. Completes it, now or later,
     * through {@code ctx}. Runs on the queue's poller.
     *
     * @param c the queue's controller; null for Connect, which creates or finds it
     */
    void execute(CommandContext ctx, Controller c);

    /**
     * A backend operation that {@link #execute} started finished with {@code result} (0 or a negative errno). Any
     * thread. Only I/O handlers start backend operations; reaching this default is a bug in the core, answered with
     * an internal error so the request still completes and its queue can drain.
     */
    default void backendDone(CommandContext ctx, int result) {
        ctx.complete(Status.SC_INTERNAL_ERROR | Status.DNR);
    }
}
