package dev.nvmf.target.core.io;

import dev.nvmf.verbs.Errno;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;

/**
 * Maps a backend's negative errno to the NVMe status of the one command it failed (kernel:
 * {@code errno_to_nvme_status}, {@code blk_to_nvme_status}). Media errors are counted in SMART.
 */
public final class BackendStatus {
    private BackendStatus() {
    }

    public static int of(int opcode, int result) {
        switch (-result) {
            case Errno.ERANGE:
                return Status.LBA_OUT_OF_RANGE;
            case Errno.EROFS:
                return Status.NAMESPACE_WRITE_PROTECTED;
            case Errno.EPERM:
            case Errno.EACCES:
                return Status.sct(Status.SCT_MEDIA, Status.SC_ACCESS_DENIED) | Status.DNR;
            case Errno.ENOSPC:
            case Errno.EDQUOT:
                return Status.CAPACITY_EXCEEDED;
            case Errno.EAGAIN:
            case Errno.ENOMEM:
            case Errno.EBUSY:
            case Errno.EINTR:
                return Status.SC_INTERNAL_ERROR; // transient: no DNR, the host retries
            case Errno.EIO:
                return isMediaRead(opcode) ? Status.UNRECOVERED_READ_ERROR : Status.WRITE_FAULT;
            default:
                return Status.SC_INTERNAL_ERROR | Status.DNR;
        }
    }

    /** True for the statuses SMART counts as media and data integrity errors. */
    public static boolean isMediaError(int status) {
        return Status.typeOf(status) == Status.SCT_MEDIA;
    }

    private static boolean isMediaRead(int opcode) {
        return opcode == Opcodes.IO_READ || opcode == Opcodes.IO_COMPARE;
    }
}
