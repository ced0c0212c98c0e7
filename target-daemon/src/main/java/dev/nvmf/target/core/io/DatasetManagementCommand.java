package dev.nvmf.target.core.io;

import dev.nvmf.verbs.Errno;
import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.NvmCommand;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

import java.lang.foreign.MemorySegment;

/**
 * Dataset Management (NVM Command Set 1.0, 3.2.3; kernel io-cmd-bdev.c / io-cmd-file.c, {@code nvmet_*_execute_dsm}):
 * without the deallocate attribute a hint, done at once; with it every range is checked first (one out of range
 * fails the command and nothing is deallocated), then each non-empty range goes to the backend's advisory
 * {@code deallocate}, which discards or punches holes and never writes zeroes (a mkfs or fstrim discard of a whole
 * disk must finish inside the host's 30 s I/O timeout), and the last completion completes the command with the
 * first failure, if any. A backend that cannot deallocate ({@code -EOPNOTSUPP}) has done nothing wrong; what a read
 * of a deallocated block returns is the backend's to say (Identify Namespace DLFEAT).
 */
final class DatasetManagementCommand extends IoCommand {
    @Override
    boolean prepare(CommandContext ctx, Controller c, Namespace ns) {
        int ranges = (ctx.sqe.cdw10() & 0xFF) + 1;
        boolean deallocate = (ctx.sqe.cdw11() & NvmCommand.DSM_ATTRIBUTE_DEALLOCATE) != 0;
        if (deallocate && ns.readOnly()) {
            ctx.fail(Status.NAMESPACE_WRITE_PROTECTED, SubmissionQueueEntry.CDW11);
            return false;
        }
        ctx.byteLength = (long) ranges * NvmCommand.DSM_RANGE_SIZE;
        ctx.request.dataDirection(NvmeRequest.DIRECTION_HOST_TO_CONTROLLER);
        return true;
    }

    @Override
    public void execute(CommandContext ctx, Controller c) {
        if (!dataFits(ctx)) {
            return;
        }
        if ((ctx.sqe.cdw11() & NvmCommand.DSM_ATTRIBUTE_DEALLOCATE) == 0) {
            ctx.complete(Status.SUCCESS);
            return;
        }
        Namespace ns = ctx.namespace;
        MemorySegment data = ctx.request.data();
        int ranges = (int) (ctx.byteLength / NvmCommand.DSM_RANGE_SIZE);
        for (int i = 0; i < ranges; i++) {
            long base = (long) i * NvmCommand.DSM_RANGE_SIZE;
            long blocks = Le.u32(data, base + NvmCommand.DSM_RANGE_LENGTH) & 0xFFFF_FFFFL;
            long slba = Le.u64(data, base + NvmCommand.DSM_RANGE_SLBA);
            if (blocks != 0 && !inRange(ns, slba, blocks)) {
                ctx.lba = slba;
                ctx.fail(Status.LBA_OUT_OF_RANGE, SubmissionQueueEntry.CDW10);
                return;
            }
        }
        ctx.pending.set(1); // held by this loop until every range is issued
        int shift = ns.blockShift();
        for (int i = 0; i < ranges; i++) {
            long base = (long) i * NvmCommand.DSM_RANGE_SIZE;
            long blocks = Le.u32(data, base + NvmCommand.DSM_RANGE_LENGTH) & 0xFFFF_FFFFL;
            if (blocks == 0) {
                continue;
            }
            long slba = Le.u64(data, base + NvmCommand.DSM_RANGE_SLBA);
            ctx.pending.incrementAndGet();
            ns.backend().deallocate(slba << shift, blocks << shift, ctx.request, ctx);
        }
        if (ctx.pending.decrementAndGet() == 0) {
            ctx.complete(ctx.deferredStatus);
        }
    }

    @Override
    public void backendDone(CommandContext ctx, int result) {
        if (result != 0 && result != -Errno.EOPNOTSUPP) {
            ctx.reportBackendFailure(result);
            if (ctx.deferredStatus == 0) {
                ctx.deferredStatus = BackendStatus.of(ctx.opcode, result);
            }
        }
        if (ctx.pending.decrementAndGet() == 0) {
            ctx.complete(ctx.deferredStatus);
        }
    }
}
