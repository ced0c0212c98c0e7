package dev.nvmf.target.core.admin;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.NvmeRequest;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

import java.lang.foreign.MemorySegment;

/** Preparing the data of a controller-to-host admin command (Identify, Get Log Page, Get Features). Control path. */
public final class DataOut {
    private DataOut() {
    }

    /**
     * The first {@code length} bytes of the request's data buffer, zeroed, with the transfer trimmed to
     * {@code length}; or null after completing the command with Data SGL Length Invalid when the host's buffer is
     * shorter (kernel: {@code nvmet_check_transfer_len}).
     */
    public static MemorySegment prepare(CommandContext ctx, long length) {
        NvmeRequest r = ctx.request;
        MemorySegment data = r.data();
        if (length > Integer.MAX_VALUE || r.dataLength() < length || data.byteSize() < length) {
            ctx.fail(Status.DATA_SGL_LENGTH_INVALID, SubmissionQueueEntry.SGL1);
            return null;
        }
        MemorySegment out = data.asSlice(0, length);
        out.fill((byte) 0);
        r.data(data, (int) length);
        return out;
    }

    /**
     * Copies {@code [offset, offset + out.byteSize())} of a whole page into {@code out} (zero beyond its end); false
     * (after completing with Invalid Field) if the offset is not dword aligned or lies beyond the page.
     */
    public static boolean copyPage(CommandContext ctx, byte[] page, long offset, MemorySegment out) {
        if (!offsetWithin(ctx, page.length, offset)) {
            return false;
        }
        copyWindow(page, offset, out);
        return true;
    }

    /**
     * A log page offset must be dword aligned and within the page (NVMe Base 2.0, 5.16: LPO); false after completing
     * with Invalid Field.
     */
    public static boolean offsetWithin(CommandContext ctx, long pageSize, long offset) {
        if ((offset & 3) != 0 || offset < 0 || offset > pageSize) {
            ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW12);
            return false;
        }
        return true;
    }

    /** Copies the window of {@code page} at a checked {@code offset} into {@code out} (zero beyond the page). */
    public static void copyWindow(byte[] page, long offset, MemorySegment out) {
        long n = Math.min(out.byteSize(), page.length - offset);
        MemorySegment.copy(MemorySegment.ofArray(page), offset, out, 0, n);
    }
}
