package dev.nvmf.target.core.io;

import dev.nvmf.verbs.Errno;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;

/**
 * Maps a backend's negative errno to the NVMe status of the one command it failed (kernel:
 * {@code errno_to_nvme_status}, {@code blk_to_nvme_status}). Media errors are counted in SMART.
 */
public final class BackendStatus {
    /**
     * Internal Path Error (Path Related Status, SCT 3h, SC 00h; NVMe Base 2.0, "Path Related Status Values"), DNR
     * clear: the command failed for a reason specific to the controller that processed it, and another controller
     * (another path) may succeed. What a networked backend's lost cluster gives (see {@link #of}).
     */
    public static final int INTERNAL_PATH_ERROR = Status.sct(Status.SCT_PATH, 0x00);

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
            case Errno.ETIMEDOUT:
            case Errno.ESHUTDOWN:
            case Errno.ENOTCONN:
            case Errno.ECONNREFUSED:
            case Errno.ECANCELED:
                // A networked backend (Ceph RBD) lost its cluster: no OSD answered in time, this client was
                // blocklisted, the connection went, or the operation was cancelled with it. The medium is not at
                // fault and another target daemon on the same cluster may still reach it. The kernel target has
                // no such backend and answers BLK_STS_TIMEOUT/TRANSPORT with Internal Error and DNR (kernel
                // io-cmd-bdev.c, blk_to_nvme_status), which fails the I/O at once. A path error without DNR is
                // what the Linux host fails over on: a multipath host requeues the I/O on the best path left
                // (kernel host multipath.c, nvme_failover_req), a host with one path retries it up to
                // nvme_max_retries times (kernel host core.c, nvme_decide_disposition). Namespace Not Ready would
                // only ever be retried on this same controller.
                return INTERNAL_PATH_ERROR;
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
