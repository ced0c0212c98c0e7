package dev.nvmf.target.core;

import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One submission/completion queue pair as the core sees it (kernel: {@code nvmet_sq}/{@code nvmet_cq} and
 * {@code nvmet_req_init}/{@code nvmet_req_complete} in core.c): the gate every command passes.
 *
 * <p>{@link #begin} advances the SQ head, stamps keep-alive traffic, applies the checks every command shares
 * (transport status, fused and PSDT bits, Connect first, CC.EN) and hands the command to one command set's
 * {@link CommandParser}: Fabrics for opcode 7Fh, otherwise the set chosen when Connect bound the queue (admin,
 * discovery or I/O). The parser sets the data direction and returns the {@link CommandHandler}, which the command's
 * context keeps: {@link #execute} and the backend's completion call it without decoding the opcode again.
 * {@link #complete} writes the CQE (SQHD, SQID, CID, status, result) and records failures in the controller's error
 * log, setting the CQE's More bit for each one logged.
 */
public final class NvmeQueue implements CommandQueue {
    private static final VarHandle SQHD;
    private static final VarHandle LAST_COMMAND_NANOS;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            SQHD = l.findVarHandle(NvmeQueue.class, "sqhd", int.class);
            LAST_COMMAND_NANOS = l.findVarHandle(NvmeQueue.class, "lastCommandNanos", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final QueueServices services;
    private final int portId;
    private final int qid;
    private final QueueTransport transport;

    /** Entries in the queue: the transport's size until Connect, then Connect's SQSIZE + 1. */
    private int size;
    private int head;
    /**
     * SQHD as reported: written by the queue's poller with a release store, read with an acquire load by
     * completions on any thread. A volatile store would add a full fence (a locked instruction on x86) to every
     * command; nothing here needs a store ordered before a later load.
     */
    private int sqhd;
    private volatile boolean sqFlowControlDisabled;
    /** The command set of the queue's commands other than Fabrics; chosen by {@link #bind}. */
    private CommandParser commandSet;
    private volatile Controller controller;
    /**
     * Last command seen, for traffic-based keep-alive: written by this queue's poller (and its close) with release
     * stores, read by the keep-alive timer with acquire loads, for the same reason as {@link #sqhd}.
     */
    private long lastCommandNanos;
    private volatile boolean closed;

    NvmeQueue(QueueServices services, int portId, int qid, int sqSize, QueueTransport transport) {
        this.services = services;
        this.portId = portId;
        this.qid = qid;
        this.size = Math.max(1, sqSize);
        this.transport = transport;
        LAST_COMMAND_NANOS.setRelease(this, services.clock.nanoTime());
    }

    @Override
    public boolean begin(NvmeRequest request) {
        CommandContext ctx = request.context();
        ctx.reset(request, this);
        int h = head + 1;
        if (h >= size) {
            h = 0;
        }
        head = h;
        SQHD.setRelease(this, h);
        LAST_COMMAND_NANOS.setRelease(this, services.clock.nanoTime());

        int transportStatus = request.transportStatus();
        if (transportStatus != 0) {
            ctx.complete(transportStatus);
            return false;
        }
        SubmissionQueueEntry sqe = ctx.sqe;
        if (sqe.fuse() != 0) {
            ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.FLAGS);
            return false;
        }
        if (sqe.psdt() != SubmissionQueueEntry.PSDT_SGL_MPTR_ADDRESS) {
            // Fabrics commands always describe data with SGLs (NVMe-oF 1.1, 2.1).
            ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.FLAGS);
            return false;
        }
        Controller c = controller;
        CommandParser parser;
        if (ctx.opcode == Opcodes.FABRICS) {
            parser = services.fabrics;
        } else if (c == null) {
            // Anything but Connect before Connect (NVMe-oF 1.1, 3.3).
            ctx.complete(Status.COMMAND_SEQUENCE_ERROR);
            return false;
        } else if (!c.properties().ready()) {
            // The kernel target refuses admin and I/O commands while CC.EN = 0 or CSTS.RDY = 0.
            ctx.complete(Status.COMMAND_SEQUENCE_ERROR);
            return false;
        } else {
            parser = commandSet;
        }
        CommandHandler handler = parser.parse(ctx, c);
        ctx.handler = handler;
        return handler != null;
    }

    @Override
    public void execute(NvmeRequest request) {
        CommandContext ctx = request.context();
        ctx.handler.execute(ctx, controller);
    }

    /** Writes the CQE of {@code ctx} and completes its request (any thread). */
    void complete(CommandContext ctx, int status) {
        NvmeRequest request = ctx.request;
        // Completions run on any thread: write through static accessors, not a shared flyweight.
        MemorySegment r = request.response();
        Le.u32(r, CompletionQueueEntry.DW0, ctx.result0);
        Le.u32(r, CompletionQueueEntry.DW1, ctx.result1);
        Le.u16(r, CompletionQueueEntry.SQHD, sqFlowControlDisabled ? 0xFFFF : (int) SQHD.getAcquire(this));
        Le.u16(r, CompletionQueueEntry.SQID, qid);
        Le.u16(r, CompletionQueueEntry.CID, ctx.cid);
        int field = status;
        if (status != 0) {
            Controller c = controller;
            if (c != null) {
                // Every failure of a bound queue goes to the error log, and the CQE's More bit says so (NVMe Base
                // 2.0, figure "Completion Queue Entry: Status Field": M = more status information in the Error
                // Information log page; kernel core.c, nvmet_set_error, sets it for each failure it logs).
                c.errorLog().record(qid, ctx.cid, status, ctx.errorLocation, ctx.lba, ctx.nsid);
                field |= Status.MORE;
            }
        }
        Le.u16(r, CompletionQueueEntry.STATUS, (field << 1) & 0xFFFE);
        services.observer().commandCompleted(ctx, field);
        transport.complete(request);
    }

    /** A backend operation of {@code ctx} failed (any thread): the observer counts it. */
    void reportBackendFailure(CommandContext ctx, int result) {
        services.observer().backendFailed(ctx, result);
    }

    @Override
    public void abortHeld() {
        Controller c = controller;
        if (c != null && qid == 0) {
            c.events().abortAll(Status.ABORTED_SQ_DELETION);
        }
    }

    @Override
    public void transportFailed(String reason) {
        Controller c = controller;
        if (c != null && !closed) {
            c.fatal("qid " + qid + ": " + reason);
        }
    }

    @Override
    public void close() {
        Controller c;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            c = controller;
        }
        if (c != null) {
            // The close counts as the controller's traffic: a host tears its queues down one by one without a Keep
            // Alive in between, and each drain takes time (kernel core.c, nvmet_sq_destroy, reset_tbkas).
            LAST_COMMAND_NANOS.setRelease(this, services.clock.nanoTime());
            c.queueClosed(this);
            services.observer().queueClosed(this, c);
        }
    }

    @Override
    public int qid() {
        return qid;
    }

    public int portId() { return portId; }
    public QueueTransport transport() { return transport; }
    public Controller controller() { return controller; }
    public long lastCommandNanos() { return (long) LAST_COMMAND_NANOS.getAcquire(this); }
    public int size() { return size; }
    public boolean isClosed() { return closed; }

    /**
     * Connect succeeded: bind to the controller, adopt the host's queue size and flow control choice, and choose the
     * command set of every later command but Fabrics (kernel core.c, nvmet_req_init: I/O on an I/O queue, admin or
     * discovery on the admin queue by the controller's subsystem).
     */
    public void bind(Controller c, int entries, boolean disableSqFlowControl) {
        this.commandSet = services.commandSetOf(qid, c);
        this.size = entries;
        this.sqFlowControlDisabled = disableSqFlowControl;
        this.controller = c;
    }

    /** Asks the transport to tear this queue down. */
    public void disconnect(String reason) {
        if (!closed) {
            transport.requestDisconnect(reason);
        }
    }

    @Override
    public String toString() {
        Controller c = controller;
        return "queue " + qid + (c == null ? "" : " of controller " + c.cntlid()) + " from " + transport.peer();
    }
}
