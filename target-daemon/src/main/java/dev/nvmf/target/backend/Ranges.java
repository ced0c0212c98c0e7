package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;

import java.lang.foreign.MemorySegment;

/**
 * The checks every backend makes before touching its medium, with the results {@link Errno} documents: nothing
 * throws, a bad request gets a negative errno that the caller completes inline.
 */
public final class Ranges {
    private Ranges() {
    }

    /** 0, {@code -EINVAL} for a negative offset or length, {@code -ERANGE} for a range not inside {@code [0, size)}. */
    public static int check(long offset, long length, long size) {
        if (offset < 0 || length < 0) {
            return -Errno.EINVAL;
        }
        if (offset > size || length > size - offset) {
            return -Errno.ERANGE;
        }
        return 0;
    }

    /** {@link #check} of the range, and the buffer: {@code -EINVAL} if null, {@code -ERANGE} if shorter than length. */
    public static int checkTransfer(long offset, MemorySegment buffer, int length, long size) {
        if (buffer == null) {
            return -Errno.EINVAL;
        }
        int status = check(offset, length, size);
        if (status == 0 && length > buffer.byteSize()) {
            return -Errno.ERANGE;
        }
        return status;
    }
}
