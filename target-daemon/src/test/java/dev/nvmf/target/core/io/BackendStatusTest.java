package dev.nvmf.target.core.io;

import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.verbs.Errno;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** The NVMe status a backend's errno becomes, for the errnos whose retry behaviour a host depends on. */
class BackendStatusTest {
    private static final int[] OPCODES = {Opcodes.IO_READ, Opcodes.IO_WRITE, Opcodes.IO_FLUSH,
            Opcodes.IO_WRITE_ZEROES, Opcodes.IO_DATASET_MANAGEMENT, Opcodes.IO_COMPARE};

    @Test
    void aLostClusterIsAPathErrorTheHostMayRetryOrFailOver() {
        for (int errno : new int[] {Errno.ETIMEDOUT, Errno.ESHUTDOWN, Errno.ENOTCONN, Errno.ECONNREFUSED,
                Errno.ECANCELED}) {
            for (int opcode : OPCODES) {
                int status = BackendStatus.of(opcode, -errno);
                String what = Errno.name(-errno) + " on opcode " + opcode + ": " + Status.describe(status);
                assertEquals(0x300, status, what);
                assertEquals(Status.SCT_PATH, Status.typeOf(status), what);
                assertEquals(0x00, Status.codeOf(status), what + " (Internal Path Error)");
                assertFalse(Status.dnr(status), what + " must leave DNR clear");
                assertFalse(BackendStatus.isMediaError(status), what + " is not a media error for SMART");
            }
        }
    }

    @Test
    void theOtherMappingsStayAsTheyWere() {
        assertEquals(Status.UNRECOVERED_READ_ERROR, BackendStatus.of(Opcodes.IO_READ, -Errno.EIO));
        assertEquals(Status.WRITE_FAULT, BackendStatus.of(Opcodes.IO_WRITE, -Errno.EIO));
        assertEquals(Status.SC_INTERNAL_ERROR, BackendStatus.of(Opcodes.IO_WRITE, -Errno.EAGAIN), "transient");
        assertEquals(Status.SC_INTERNAL_ERROR | Status.DNR, BackendStatus.of(Opcodes.IO_READ, -Errno.ENODEV),
                "anything else is Internal Error, not to be retried");
        assertEquals(Status.CAPACITY_EXCEEDED, BackendStatus.of(Opcodes.IO_WRITE, -Errno.ENOSPC));
        assertEquals(Status.LBA_OUT_OF_RANGE, BackendStatus.of(Opcodes.IO_READ, -Errno.ERANGE));
    }
}
