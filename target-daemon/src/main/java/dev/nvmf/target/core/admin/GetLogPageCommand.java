package dev.nvmf.target.core.admin;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.IoStatistics;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.Identify;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import org.agrona.concurrent.NanoClock;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Get Log Page of an I/O controller (NVMe Base 2.0, 5.16; kernel: {@code nvmet_execute_get_log_page*}): error
 * information (01h), SMART / health (02h, per namespace or all), firmware slot (03h), changed namespace list (04h,
 * cleared by reading; without RAE re-enables namespace notices) and commands supported and effects (05h).
 *
 * <p>The page is built whole, then the requested window (LPO, dword aligned, within the page) is copied; bytes
 * past the end of the page read as zero. Other log identifiers: Invalid Log Page.
 */
public final class GetLogPageCommand {
    private final NanoClock clock;
    private final long startNanos;

    /** @param startNanos clock time when the target started (SMART power-on hours) */
    GetLogPageCommand(NanoClock clock, long startNanos) {
        this.clock = clock;
        this.startNanos = startNanos;
    }

    void execute(CommandContext ctx, Controller c) {
        int cdw10 = ctx.sqe.cdw10();
        int lid = LogPages.lid(cdw10);
        long length = LogPages.numberOfDwords(cdw10, ctx.sqe.cdw11()) * 4;
        long offset = LogPages.offset(ctx.sqe.cdw12(), ctx.sqe.cdw13());
        byte[] page;
        switch (lid) {
            case LogPages.LID_ERROR_INFORMATION -> {
                page = new byte[c.errorLog().capacity() * LogPages.ERROR_ENTRY_SIZE];
                c.errorLog().write(MemorySegment.ofArray(page));
            }
            case LogPages.LID_SMART_HEALTH -> {
                page = smart(ctx, c);
                if (page == null) {
                    return;
                }
            }
            case LogPages.LID_FIRMWARE_SLOT -> {
                page = new byte[LogPages.FIRMWARE_SLOT_SIZE];
                MemorySegment p = MemorySegment.ofArray(page);
                Le.u8(p, LogPages.FIRMWARE_AFI, 1);
                Le.asciiSpacePadded(p, LogPages.FIRMWARE_FRS1, 8, c.subsystem().config().firmware());
            }
            case LogPages.LID_CHANGED_NAMESPACE_LIST -> {
                page = new byte[LogPages.CHANGED_NAMESPACE_LIST_SIZE];
                c.changedNamespaces().writeAndClear(MemorySegment.ofArray(page));
                if (!LogPages.rae(cdw10)) {
                    c.acknowledgeNamespaceEvent();
                }
            }
            case LogPages.LID_COMMANDS_SUPPORTED_EFFECTS -> page = commandEffects();
            default -> {
                ctx.fail(Status.INVALID_LOG_PAGE, SubmissionQueueEntry.CDW10);
                return;
            }
        }
        MemorySegment out = DataOut.prepare(ctx, length);
        if (out == null || !DataOut.copyPage(ctx, page, offset, out)) {
            return;
        }
        ctx.complete(Status.SUCCESS);
    }

    /** SMART / Health Information with the namespaces' real counters; NSID 0 or FFFFFFFFh: the whole subsystem. */
    private byte[] smart(CommandContext ctx, Controller c) {
        int nsid = ctx.nsid;
        List<Namespace> namespaces;
        if (nsid == 0 || nsid == Identify.NSID_ALL) {
            namespaces = c.subsystem().namespaces();
        } else {
            Namespace ns = c.subsystem().namespace(nsid);
            if (ns == null) {
                ctx.fail(Status.INVALID_NAMESPACE, SubmissionQueueEntry.NSID);
                return null;
            }
            namespaces = List.of(ns);
        }
        long bytesRead = 0, bytesWritten = 0, reads = 0, writes = 0, mediaErrors = 0;
        for (Namespace ns : namespaces) {
            IoStatistics st = ns.statistics();
            bytesRead += st.bytesRead();
            bytesWritten += st.bytesWritten();
            reads += st.readCommands();
            writes += st.writeCommands();
            mediaErrors += st.mediaErrors();
        }
        byte[] page = new byte[LogPages.SMART_SIZE];
        MemorySegment p = MemorySegment.ofArray(page);
        Le.u16(p, LogPages.SMART_COMPOSITE_TEMPERATURE, 273 + 25); // Kelvin: no sensor, report a room temperature
        Le.u8(p, LogPages.SMART_AVAILABLE_SPARE, 100);
        Le.u8(p, LogPages.SMART_AVAILABLE_SPARE_THRESHOLD, 10);
        Le.u64(p, LogPages.SMART_DATA_UNITS_READ, dataUnits(bytesRead));
        Le.u64(p, LogPages.SMART_DATA_UNITS_WRITTEN, dataUnits(bytesWritten));
        Le.u64(p, LogPages.SMART_HOST_READ_COMMANDS, reads);
        Le.u64(p, LogPages.SMART_HOST_WRITE_COMMANDS, writes);
        Le.u64(p, LogPages.SMART_POWER_CYCLES, 1);
        long hours = (clock.nanoTime() - startNanos) / 3_600_000_000_000L;
        Le.u64(p, LogPages.SMART_POWER_ON_HOURS, Math.max(0, hours));
        Le.u64(p, LogPages.SMART_MEDIA_ERRORS, mediaErrors);
        Le.u64(p, LogPages.SMART_ERROR_LOG_ENTRIES, c.errorLog().errorCount());
        return page;
    }

    /** Thousands of 512-byte units, rounded up (NVMe Base 2.0 figure 207). */
    static long dataUnits(long bytes) {
        long units = (bytes + 511) / 512;
        return (units + 999) / 1000;
    }

    /** Commands Supported and Effects: what this controller implements; writes change logical block content. */
    static byte[] commandEffects() {
        byte[] page = new byte[LogPages.EFFECTS_SIZE];
        MemorySegment p = MemorySegment.ofArray(page);
        int[] admin = {Opcodes.ADMIN_GET_LOG_PAGE, Opcodes.ADMIN_IDENTIFY, Opcodes.ADMIN_ABORT,
                Opcodes.ADMIN_SET_FEATURES, Opcodes.ADMIN_GET_FEATURES, Opcodes.ADMIN_ASYNC_EVENT_REQUEST,
                Opcodes.ADMIN_KEEP_ALIVE};
        for (int op : admin) {
            Le.u32(p, LogPages.EFFECTS_ADMIN + op * 4L, LogPages.EFFECT_CSUPP);
        }
        for (int op : new int[] {Opcodes.IO_READ, Opcodes.IO_FLUSH, Opcodes.IO_COMPARE}) {
            Le.u32(p, LogPages.EFFECTS_IO + op * 4L, LogPages.EFFECT_CSUPP);
        }
        for (int op : new int[] {Opcodes.IO_WRITE, Opcodes.IO_WRITE_ZEROES, Opcodes.IO_DATASET_MANAGEMENT}) {
            Le.u32(p, LogPages.EFFECTS_IO + op * 4L, LogPages.EFFECT_CSUPP | LogPages.EFFECT_LBCC);
        }
        return page;
    }
}
