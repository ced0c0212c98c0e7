package dev.nvmf.target.core.admin;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.controller.Temperature;
import dev.nvmf.target.core.subsystem.IoStatistics;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.nvme.AnaLog;
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
 * Get Log Page of an I/O controller (NVMe Base 2.0, 5.16; kernel: {@code nvmet_execute_get_log_page*}): supported
 * log pages (00h), error information (01h), SMART / health (02h, per namespace or all; without RAE re-enables SMART
 * events), firmware slot (03h), changed namespace list (04h, cleared by a successful read; without RAE re-enables
 * namespace notices), commands supported and effects (05h) and Asymmetric Namespace Access (0Ch, {@link AnaLogPage};
 * without RAE re-enables ANA change notices).
 *
 * <p>The host's buffer and the offset are checked first; then the page is built whole and the requested window
 * (LPO, dword aligned, within the page) is copied; bytes past the end of the page read as zero. Other log
 * identifiers: Invalid Log Page.
 */
public final class GetLogPageCommand {
    private final NanoClock clock;
    private final long startNanos;
    private final AnaLogSource ana;

    /**
     * @param startNanos clock time when the target started (SMART power-on hours)
     * @param ana        the target-wide part of the ANA log page
     */
    GetLogPageCommand(NanoClock clock, long startNanos, AnaLogSource ana) {
        this.clock = clock;
        this.startNanos = startNanos;
        this.ana = ana;
    }

    void execute(CommandContext ctx, Controller c) {
        int cdw10 = ctx.sqe.cdw10();
        int lid = LogPages.lid(cdw10);
        long length = LogPages.numberOfDwords(cdw10, ctx.sqe.cdw11()) * 4;
        long offset = LogPages.offset(ctx.sqe.cdw12(), ctx.sqe.cdw13());
        int size = pageSize(lid, c);
        if (size < 0) {
            ctx.fail(Status.INVALID_LOG_PAGE, SubmissionQueueEntry.CDW10);
            return;
        }
        // The host's buffer and the offset are checked before the page is built: reading the changed namespace
        // list clears it, which must happen only for a read that succeeds.
        MemorySegment out = DataOut.prepare(ctx, length);
        if (out == null || !DataOut.offsetWithin(ctx, size, offset)) {
            return;
        }
        byte[] page = new byte[size];
        MemorySegment p = MemorySegment.ofArray(page);
        switch (lid) {
            case LogPages.LID_SUPPORTED_LOG_PAGES -> supportedLogPages(p);
            case LogPages.LID_ERROR_INFORMATION -> c.errorLog().write(p);
            case LogPages.LID_SMART_HEALTH -> {
                if (!smart(ctx, c, p)) {
                    return;
                }
                if (!LogPages.rae(cdw10)) {
                    c.acknowledgeSmartEvent();
                }
            }
            case LogPages.LID_FIRMWARE_SLOT -> {
                Le.u8(p, LogPages.FIRMWARE_AFI, 1);
                Le.asciiSpacePadded(p, LogPages.FIRMWARE_FRS1, 8, c.subsystem().config().firmware());
            }
            case LogPages.LID_CHANGED_NAMESPACE_LIST -> {
                c.changedNamespaces().writeAndClear(p);
                if (!LogPages.rae(cdw10)) {
                    c.acknowledgeNamespaceEvent();
                }
            }
            case LogPages.LID_COMMANDS_SUPPORTED_EFFECTS -> commandEffects(p);
            case LogPages.LID_ASYMMETRIC_NAMESPACE_ACCESS -> {
                AnaLogPage.write(p, c, ana, (LogPages.lsp(cdw10) & AnaLog.LSP_RGO) != 0);
                if (!LogPages.rae(cdw10)) {
                    c.acknowledgeAnaEvent();
                }
            }
            default -> throw new IllegalStateException("log page " + lid + " has a size but no content");
        }
        DataOut.copyWindow(page, offset, out);
        ctx.complete(Status.SUCCESS);
    }

    /** The size of a log page this controller has, or -1 (Invalid Log Page). */
    private static int pageSize(int lid, Controller c) {
        return switch (lid) {
            case LogPages.LID_SUPPORTED_LOG_PAGES -> LogPages.SUPPORTED_LOG_PAGES_SIZE;
            case LogPages.LID_ERROR_INFORMATION -> c.errorLog().capacity() * LogPages.ERROR_ENTRY_SIZE;
            case LogPages.LID_SMART_HEALTH -> LogPages.SMART_SIZE;
            case LogPages.LID_FIRMWARE_SLOT -> LogPages.FIRMWARE_SLOT_SIZE;
            case LogPages.LID_CHANGED_NAMESPACE_LIST -> LogPages.CHANGED_NAMESPACE_LIST_SIZE;
            case LogPages.LID_COMMANDS_SUPPORTED_EFFECTS -> LogPages.EFFECTS_SIZE;
            // The largest the page can be; what follows its last descriptor reads as zero.
            case LogPages.LID_ASYMMETRIC_NAMESPACE_ACCESS -> AnaLog.maxSize(NamespaceConfig.MAX_NSID);
            default -> -1;
        };
    }

    /** The log pages this controller has (LID 00h, mandatory with VER 2.0; NVMe Base 2.0, 5.16.1.1). */
    private static final int[] SUPPORTED = {LogPages.LID_SUPPORTED_LOG_PAGES, LogPages.LID_ERROR_INFORMATION,
            LogPages.LID_SMART_HEALTH, LogPages.LID_FIRMWARE_SLOT, LogPages.LID_CHANGED_NAMESPACE_LIST,
            LogPages.LID_COMMANDS_SUPPORTED_EFFECTS, LogPages.LID_ASYMMETRIC_NAMESPACE_ACCESS};

    /** Supported Log Pages: LSUPP for each page {@link #pageSize} knows (kernel admin-cmd.c does the same). */
    static void supportedLogPages(MemorySegment p) {
        for (int lid : SUPPORTED) {
            Le.u32(p, lid * 4L, LogPages.LIDS_SUPPORTED);
        }
    }

    /**
     * SMART / Health Information with the namespaces' real counters (NSID 0 or FFFFFFFFh: the whole subsystem), the
     * reported temperature and its warning; false after failing an unknown NSID.
     */
    private boolean smart(CommandContext ctx, Controller c, MemorySegment p) {
        int nsid = ctx.nsid;
        List<Namespace> namespaces;
        if (nsid == 0 || nsid == Identify.NSID_ALL) {
            namespaces = c.subsystem().namespaces();
        } else {
            Namespace ns = c.subsystem().namespace(nsid);
            if (ns == null) {
                ctx.fail(Status.INVALID_NAMESPACE, SubmissionQueueEntry.NSID);
                return false;
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
        if (c.temperature().warning()) {
            Le.u8(p, LogPages.SMART_CRITICAL_WARNING, LogPages.SMART_WARNING_TEMPERATURE);
        }
        Le.u16(p, LogPages.SMART_COMPOSITE_TEMPERATURE, Temperature.COMPOSITE_KELVIN);
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
        return true;
    }

    /** Thousands of 512-byte units, rounded up (NVMe Base 2.0 figure 207). */
    static long dataUnits(long bytes) {
        long units = (bytes + 511) / 512;
        return (units + 999) / 1000;
    }

    /** Commands Supported and Effects: what this controller implements; writes change logical block content. */
    static void commandEffects(MemorySegment p) {
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
    }
}
