package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A file or device could not be opened as a namespace backend. The message names the path, what was tried and, when
 * a system call failed, the errno's name and text, e.g.
 * {@code "/dev/sdz: open(O_RDWR|O_DIRECT|O_EXCL): ENOENT (No such file or directory)"}.
 */
public final class BackendOpenException extends IOException {
    private final Path path;
    private final int errno;

    BackendOpenException(Path path, String what, int errno) {
        super(path + ": " + what + ": " + Errno.describe(errno));
        this.path = path;
        this.errno = Math.abs(errno);
    }

    BackendOpenException(Path path, String message) {
        this(path, message, 0, null);
    }

    /** A message already complete after the path, with the errno it names (0 if none) and its cause. */
    BackendOpenException(Path path, String message, int errno, Throwable cause) {
        super(path + ": " + message, cause);
        this.path = path;
        this.errno = Math.abs(errno);
    }

    /** The path that could not be opened. */
    public Path path() {
        return path;
    }

    /** The errno of the failing system call (positive), or 0 when the refusal was ours (size, type). */
    public int errno() {
        return errno;
    }
}
