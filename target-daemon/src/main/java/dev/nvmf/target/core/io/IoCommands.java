package dev.nvmf.target.core.io;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.CommandHandler;
import dev.nvmf.target.core.CommandParser;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

/**
 * The parse step of NVM command set I/O commands (NVM Command Set 1.0, 3; kernel io-cmd-bdev.c
 * {@code nvmet_bdev_parse_io_cmd}, io-cmd-file.c {@code nvmet_file_parse_io_cmd}): Read, Write, Compare, Flush,
 * Write Zeroes and Dataset Management, each an {@link IoCommand} created here once.
 *
 * <p>{@link #parse} finds the namespace, checks its ANA group's state on the controller's port, decodes the opcode
 * once, and lets the command check what the host controls
 * (write protection, transfer size against MDTS, the LBA range) and set the data direction. The command is then the
 * request's handler: its {@code execute} checks the SGL length the transport mapped and starts the backend
 * operation on the namespace's {@code BlockBackend}, and the backend's completion (any thread) comes back to its
 * {@code backendDone}, which completes the request. A backend error fails that command only.
 *
 * <p>The Read/Write path allocates nothing: the command context is the backend callback, the namespace lookup and
 * the ANA check are array reads and the counters are per-thread stripes ({@code IoStatistics}).
 */
public final class IoCommands implements CommandParser, AutoCloseable {
    /** The most memory Compare's scratch buffers take per target (at least one buffer of the largest transfer). */
    public static final long COMPARE_SCRATCH_BYTES = 16L << 20;

    private final CompareBuffers compareBuffers;
    private final IoCommand read;
    private final IoCommand write;
    private final IoCommand compare;
    private final IoCommand flush = new FlushCommand();
    private final IoCommand writeZeroes = new WriteZeroesCommand();
    private final IoCommand datasetManagement = new DatasetManagementCommand();

    /** @param maxTransferBytes the most one Read, Write or Compare may move (MDTS) */
    public IoCommands(int maxTransferBytes) {
        this.read = new ReadCommand(maxTransferBytes);
        this.write = new WriteCommand(maxTransferBytes);
        this.compareBuffers = new CompareBuffers(maxTransferBytes,
                (int) Math.max(1, COMPARE_SCRATCH_BYTES / maxTransferBytes));
        this.compare = new CompareCommand(maxTransferBytes, compareBuffers);
    }

    @Override
    public CommandHandler parse(CommandContext ctx, Controller c) {
        Namespace ns = c.subsystem().namespace(ctx.nsid);
        if (ns == null) {
            ctx.fail(Status.INVALID_NAMESPACE, SubmissionQueueEntry.NSID);
            return null;
        }
        ctx.namespace = ns;
        // A namespace whose group is inaccessible, lost or changing on this port: the ANA status, which a multipath
        // host answers by trying another path (kernel core.c, nvmet_parse_io_cmd and nvmet_check_ana_state).
        int ana = c.anaStates().ioStatus(ns.anaGroupId());
        if (ana != Status.SUCCESS) {
            ctx.fail(ana, SubmissionQueueEntry.NSID);
            return null;
        }
        IoCommand command = switch (ctx.opcode) {
            case Opcodes.IO_READ -> read;
            case Opcodes.IO_WRITE -> write;
            case Opcodes.IO_COMPARE -> compare;
            case Opcodes.IO_FLUSH -> flush;
            case Opcodes.IO_WRITE_ZEROES -> writeZeroes;
            case Opcodes.IO_DATASET_MANAGEMENT -> datasetManagement;
            default -> null;
        };
        if (command == null) {
            ctx.fail(Status.INVALID_OPCODE, SubmissionQueueEntry.OPCODE);
            return null;
        }
        return command.prepare(ctx, c, ns) ? command : null;
    }

    /** Frees Compare's scratch buffers; call once no command is in flight (every queue closed). */
    @Override
    public void close() {
        compareBuffers.close();
    }
}
