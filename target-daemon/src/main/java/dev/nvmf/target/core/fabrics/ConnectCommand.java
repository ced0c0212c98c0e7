package dev.nvmf.target.core.fabrics;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeQueue;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.Status;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * Fabrics Connect (NVMe-oF 1.1, 3.3; kernel: {@code nvmet_execute_admin_connect}, {@code nvmet_execute_io_connect}).
 *
 * <p>An admin queue Connect with CNTLID FFFFh creates a controller of the dynamic model; an I/O queue Connect
 * attaches to the controller named by CNTLID, which must belong to the same host. Every failure answers with the
 * Connect status codes and, for Invalid Parameters, DW0 = IPO (byte offset of the offending field) | IATTR (bit
 * 16: 0 = in the SQE, 1 = in the Connect data):
 * <ul>
 *   <li>data shorter than 1024 bytes: Data SGL Length Invalid;</li>
 *   <li>RECFMT not 0: Incompatible Format;</li>
 *   <li>QID not the transport's queue id, or above the queues granted: Invalid Parameters, SQE 42;</li>
 *   <li>SQSIZE 0, above MQES (admin: above the admin depth), or above what the transport queue holds: Invalid
 *       Parameters, SQE 44;</li>
 *   <li>SUBNQN unterminated, unknown, or not exposed on this port: Invalid Parameters, data 256;</li>
 *   <li>HOSTNQN unterminated: Invalid Parameters, data 512; host not allowed: Invalid Host, data 512;</li>
 *   <li>admin CNTLID not FFFFh, or an I/O CNTLID naming no controller of this host: Invalid Parameters, data 16;
 *       HOSTID not that of the controller: Invalid Parameters, data 0;</li>
 *   <li>controller ids used up, or the queue id already connected: Controller Busy.</li>
 * </ul>
 */
final class ConnectCommand {
    private final ConnectModel model;
    private final TargetOptions options;

    ConnectCommand(ConnectModel model, TargetOptions options) {
        this.model = model;
        this.options = options;
    }

    /** @param unbound the queue's controller: always null, Connect is what binds one */
    void execute(CommandContext ctx, Controller unbound) {
        NvmeRequest request = ctx.request;
        NvmeQueue queue = ctx.queue;
        MemorySegment sqe = ctx.sqe.segment();
        MemorySegment data = request.data();
        if (request.dataLength() < FabricsCommand.CONNECT_DATA_SIZE
                || data.byteSize() < FabricsCommand.CONNECT_DATA_SIZE) {
            ctx.fail(Status.DATA_SGL_LENGTH_INVALID, 24);
            return;
        }
        int recfmt = Le.u16(sqe, FabricsCommand.CONNECT_RECFMT);
        int qid = Le.u16(sqe, FabricsCommand.CONNECT_QID);
        int sqsize = Le.u16(sqe, FabricsCommand.CONNECT_SQSIZE);
        int cattr = Le.u8(sqe, FabricsCommand.CONNECT_CATTR);
        long kato = Le.u32(sqe, FabricsCommand.CONNECT_KATO) & 0xFFFF_FFFFL;
        if (recfmt != 0) {
            ctx.fail(Status.CONNECT_INCOMPATIBLE_FORMAT, FabricsCommand.CONNECT_RECFMT);
            return;
        }
        if (qid != queue.qid()) {
            invalidSqe(ctx, FabricsCommand.CONNECT_QID);
            return;
        }
        if (sqsize == 0 || sqsize + 1 > queue.size()) {
            invalidSqe(ctx, FabricsCommand.CONNECT_SQSIZE);
            return;
        }
        String subnqn = Le.utf8NulTerminated(data, FabricsCommand.DATA_SUBNQN, FabricsCommand.NQN_FIELD_LENGTH);
        if (subnqn == null) {
            invalidData(ctx, FabricsCommand.DATA_SUBNQN);
            return;
        }
        String hostnqn = Le.utf8NulTerminated(data, FabricsCommand.DATA_HOSTNQN, FabricsCommand.NQN_FIELD_LENGTH);
        if (hostnqn == null || hostnqn.isEmpty()) {
            invalidData(ctx, FabricsCommand.DATA_HOSTNQN);
            return;
        }
        byte[] hostId = new byte[FabricsCommand.DATA_HOSTID_LENGTH];
        MemorySegment.copy(data, ValueLayout.JAVA_BYTE, FabricsCommand.DATA_HOSTID, hostId, 0, hostId.length);
        int cntlid = Le.u16(data, FabricsCommand.DATA_CNTLID);
        boolean disableSqFlow = (cattr & FabricsCommand.CATTR_DISABLE_SQ_FLOW_CONTROL) != 0;

        Subsystem subsystem = model.subsystemOnPort(subnqn, queue.portId());
        Port port = model.port(queue.portId());
        if (subsystem == null || port == null) {
            invalidData(ctx, FabricsCommand.DATA_SUBNQN);
            return;
        }
        if (qid == 0) {
            admin(ctx, queue, subsystem, port, sqsize, cntlid, hostnqn, hostId, kato, disableSqFlow);
        } else {
            io(ctx, queue, subsystem, qid, sqsize, cntlid, hostnqn, hostId, disableSqFlow);
        }
    }

    private void admin(CommandContext ctx, NvmeQueue queue, Subsystem subsystem, Port port, int sqsize, int cntlid,
                       String hostnqn, byte[] hostId, long kato, boolean disableSqFlow) {
        if (sqsize + 1 > options.adminQueueDepth()) {
            invalidSqe(ctx, FabricsCommand.CONNECT_SQSIZE);
            return;
        }
        if (cntlid != FabricsCommand.CNTLID_DYNAMIC) {
            invalidData(ctx, FabricsCommand.DATA_CNTLID);
            return;
        }
        if (!subsystem.isHostAllowed(hostnqn)) {
            ctx.result0 = FabricsCommand.invalidParameterData(FabricsCommand.DATA_HOSTNQN);
            ctx.fail(Status.CONNECT_INVALID_HOST, FabricsCommand.invalidParameterData(FabricsCommand.DATA_HOSTNQN));
            return;
        }
        if (subsystem.isDiscovery() && kato == 0) {
            // Discovery controllers get a keep-alive even when the host asks for none, so stale sessions end.
            kato = options.discoveryKatoMillis();
        }
        Controller c = model.createController(subsystem, port, hostnqn, hostId, kato);
        if (c == null || !c.attach(queue)) {
            ctx.fail(Status.CONNECT_CONTROLLER_BUSY, FabricsCommand.invalidParameterData(FabricsCommand.DATA_CNTLID));
            return;
        }
        queue.bind(c, sqsize + 1, disableSqFlow);
        ctx.result0 = c.cntlid();
        ctx.complete(Status.SUCCESS);
    }

    private void io(CommandContext ctx, NvmeQueue queue, Subsystem subsystem, int qid, int sqsize, int cntlid,
                    String hostnqn, byte[] hostId, boolean disableSqFlow) {
        Controller c = subsystem.controller(cntlid);
        if (c == null || c.isEnded() || !c.hostNqn().equals(hostnqn)) {
            invalidData(ctx, FabricsCommand.DATA_CNTLID);
            return;
        }
        if (!Arrays.equals(c.hostId(), hostId)) {
            invalidData(ctx, FabricsCommand.DATA_HOSTID);
            return;
        }
        if (qid > c.grantedIoQueues()) {
            invalidSqe(ctx, FabricsCommand.CONNECT_QID);
            return;
        }
        if (sqsize > (int) (c.properties().cap() & Properties.CAP_MQES_MASK)) {
            invalidSqe(ctx, FabricsCommand.CONNECT_SQSIZE);
            return;
        }
        if (!c.properties().ready()) {
            ctx.fail(Status.COMMAND_SEQUENCE_ERROR, FabricsCommand.CONNECT_QID);
            return;
        }
        if (!c.attach(queue)) {
            ctx.fail(Status.CONNECT_CONTROLLER_BUSY, FabricsCommand.CONNECT_QID);
            return;
        }
        queue.bind(c, sqsize + 1, disableSqFlow);
        ctx.result0 = c.cntlid();
        ctx.complete(Status.SUCCESS);
    }

    private static void invalidSqe(CommandContext ctx, int offset) {
        ctx.result0 = FabricsCommand.invalidParameterSqe(offset);
        ctx.fail(Status.CONNECT_INVALID_PARAMETERS, offset);
    }

    private static void invalidData(CommandContext ctx, int offset) {
        ctx.result0 = FabricsCommand.invalidParameterData(offset);
        ctx.fail(Status.CONNECT_INVALID_PARAMETERS, FabricsCommand.invalidParameterData(offset));
    }
}
