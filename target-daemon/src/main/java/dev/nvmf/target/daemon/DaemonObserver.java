package dev.nvmf.target.daemon;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeQueue;
import dev.nvmf.target.core.TargetObserver;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.metrics.ConnectFailure;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.service.LogContext;

import java.lang.foreign.MemorySegment;
import java.util.logging.Logger;

/**
 * The daemon's view of the core: I/O metrics per (subsystem, namespace, opcode), Connect outcomes (metrics by
 * reason, one log line each), controller creation and teardown, queue disconnects.
 *
 * <p>The I/O path ({@link #commandCompleted} for I/O commands, {@link #backendFailed}) looks nothing up: the
 * namespace carries its pre-resolved meters ({@link Namespace#observer()}, a {@link NamespaceMeters}), and
 * recording into them allocates nothing. Only Fabrics Connect completions, which
 * are rare, build strings and log.
 */
final class DaemonObserver implements TargetObserver {
    private static final Logger LOG = Logger.getLogger(DaemonObserver.class.getName());

    private final TargetMetrics metrics;
    /** Told when a keep-alive timer may now end earlier than before: a controller or a new KATO. */
    private final Runnable timersChanged;

    DaemonObserver(TargetMetrics metrics) {
        this(metrics, () -> { });
    }

    /**
     * @param timersChanged run (on the queue's poller) after a successful admin Connect or Set Features Keep Alive
     *                      Timer: the daemon's timer, which sleeps until the earliest keep-alive deadline it knows,
     *                      must look again ({@link TimerAgent#wake})
     */
    DaemonObserver(TargetMetrics metrics, Runnable timersChanged) {
        this.metrics = metrics;
        this.timersChanged = timersChanged;
    }

    @Override
    public void commandCompleted(CommandContext ctx, int status) {
        if (ctx.opcode == Opcodes.FABRICS) {
            if (Le.u8(ctx.sqe.segment(), FabricsCommand.FCTYPE) == Opcodes.FCTYPE_CONNECT) {
                connectCompleted(ctx, status);
                if (status == 0 && ctx.queue.qid() == 0) {
                    timersChanged.run();
                }
            }
            return;
        }
        if (ctx.queue.qid() == 0) {
            // NVMe Base 2.0, 5.27.1.12: Set Features Keep Alive Timer restarts the timer with a new KATO.
            if (status == 0 && ctx.opcode == Opcodes.ADMIN_SET_FEATURES
                    && (ctx.sqe.cdw10() & 0xFF) == Features.FID_KEEP_ALIVE_TIMER) {
                timersChanged.run();
            }
            return;
        }
        Namespace ns = ctx.namespace;
        if (ns == null) {
            return;
        }
        long latency = ctx.request.elapsedNanos(); // on the transport's clock: the poller's pass, on its thread
        ns.observer().ioCompleted(ctx.opcode, status, latency, movesData(ctx.opcode) ? ctx.byteLength : 0);
    }

    private static boolean movesData(int opcode) {
        return opcode == Opcodes.IO_READ || opcode == Opcodes.IO_WRITE || opcode == Opcodes.IO_COMPARE;
    }

    @Override
    public void backendFailed(CommandContext ctx, int result) {
        Namespace ns = ctx.namespace;
        if (ns != null) {
            ns.observer().backendFailed(ctx.opcode, result);
        }
    }

    // ------------------------------------------------------------------------------------------- connect

    private void connectCompleted(CommandContext ctx, int status) {
        NvmeQueue q = ctx.queue;
        if (status == 0) {
            Controller c = q.controller();
            if (c == null) {
                return;
            }
            String sub = c.subsystem().nqn();
            if (q.qid() == 0) {
                if (!c.isDiscovery()) {
                    metrics.subsystem(sub).controllerCreated(c.hostNqn());
                }
                LOG.info(LogContext.format(sub, c.hostNqn(), 0, "controller " + c.cntlid() + " created ("
                        + (c.isDiscovery() ? "discovery" : "I/O") + ", port " + c.port().id() + ", from "
                        + q.transport().peer() + ", keep-alive " + c.keepAlive().timeoutMillis() + " ms)"));
            } else {
                LOG.info(LogContext.format(sub, c.hostNqn(), q.qid(), "connected I/O queue of controller "
                        + c.cntlid() + " (" + q.size() + " entries, from " + q.transport().peer() + ")"));
            }
            return;
        }
        ConnectFailure reason = classify(status, ctx.result0);
        metrics.connectFailed(reason);
        String sub = connectField(ctx, FabricsCommand.DATA_SUBNQN);
        String host = connectField(ctx, FabricsCommand.DATA_HOSTNQN);
        LOG.warning(LogContext.format(sub, host, q.qid(), "Connect refused: " + reason.label() + " ("
                + Status.describe(status) + ", port " + q.portId() + ", from " + q.transport().peer() + ")"));
    }

    /** Why a Connect failed, from its status and IPO/IATTR (the core's ConnectCommand documents the mapping). */
    static ConnectFailure classify(int status, int dw0) {
        int code = status & 0x7FF;
        if (code == (Status.CONNECT_INVALID_HOST & 0x7FF)) {
            return ConnectFailure.HOST_NOT_ALLOWED;
        }
        if (code == (Status.CONNECT_CONTROLLER_BUSY & 0x7FF) || code == (Status.COMMAND_SEQUENCE_ERROR & 0x7FF)) {
            return ConnectFailure.CONTROLLER_BUSY;
        }
        if (code == (Status.CONNECT_INVALID_PARAMETERS & 0x7FF)) {
            if (dw0 == FabricsCommand.invalidParameterData(FabricsCommand.DATA_SUBNQN)) {
                return ConnectFailure.UNKNOWN_SUBSYSTEM;
            }
            if (dw0 == FabricsCommand.invalidParameterData(FabricsCommand.DATA_CNTLID)
                    || dw0 == FabricsCommand.invalidParameterData(FabricsCommand.DATA_HOSTID)) {
                return ConnectFailure.INVALID_CONTROLLER;
            }
            if (dw0 == FabricsCommand.invalidParameterSqe(FabricsCommand.CONNECT_QID)
                    || dw0 == FabricsCommand.invalidParameterSqe(FabricsCommand.CONNECT_SQSIZE)) {
                return ConnectFailure.INVALID_QUEUE;
            }
            return ConnectFailure.INVALID_PARAMETERS;
        }
        if (code == (Status.CONNECT_INCOMPATIBLE_FORMAT & 0x7FF) || code == (Status.DATA_SGL_LENGTH_INVALID & 0x7FF)) {
            return ConnectFailure.INVALID_PARAMETERS;
        }
        return ConnectFailure.OTHER;
    }

    /** An NQN of the Connect data, or null when the data is too short or the field is not terminated. */
    private static String connectField(CommandContext ctx, int offset) {
        MemorySegment data = ctx.request.data();
        if (ctx.request.dataLength() < FabricsCommand.CONNECT_DATA_SIZE
                || data.byteSize() < FabricsCommand.CONNECT_DATA_SIZE) {
            return null;
        }
        String s = Le.utf8NulTerminated(data, offset, FabricsCommand.NQN_FIELD_LENGTH);
        return s == null || s.isEmpty() ? null : s;
    }

    // ------------------------------------------------------------------------------------------- teardown

    @Override
    public void queueClosed(NvmeQueue queue, Controller c) {
        String sub = c.subsystem().nqn();
        if (queue.qid() != 0) {
            LOG.info(LogContext.format(sub, c.hostNqn(), queue.qid(), "disconnected I/O queue of controller "
                    + c.cntlid()));
            return;
        }
        if (!c.isDiscovery() && !c.subsystem().isRemoved()) {
            metrics.subsystem(sub).controllerDestroyed(c.hostNqn());
        }
        LOG.info(LogContext.format(sub, c.hostNqn(), 0, "controller " + c.cntlid() + " torn down (admin queue "
                + "closed" + (c.keepAlive().expired() ? " after keep-alive expiry" : "") + ")"));
    }

    static boolean isDiscovery(String nqn) {
        return DiscoveryLog.DISCOVERY_NQN.equals(nqn);
    }
}
