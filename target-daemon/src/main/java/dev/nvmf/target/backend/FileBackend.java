package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.ffm.Libc;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A namespace in a regular file (kernel: io-cmd-file.c), through the page cache, served by an
 * {@link AsyncFdBackend} worker pool. Write Zeroes is fallocate(ZERO_RANGE), Deallocate fallocate(PUNCH_HOLE), each
 * falling back to writing zeroes on file systems that lack them.
 */
public final class FileBackend extends AsyncFdBackend {
    private FileBackend(String description, int fd, long sizeBytes, boolean readOnly, BackendSpec spec) {
        super(description, fd, sizeBytes, readOnly, false, false, 1, spec.fuaMode(), spec.ioWorkers(),
                spec.maxInFlight());
    }

    /**
     * Opens (and if asked creates or extends) the file a {@link BackendSpec.Kind#FILE} spec names. A writable spec on
     * a file that cannot be opened for writing falls back to read-only, which {@link #describe()} says.
     */
    public static FileBackend open(BackendSpec spec) throws BackendOpenException {
        if (spec.kind() != BackendSpec.Kind.FILE) {
            throw new IllegalArgumentException("not a file spec: " + spec);
        }
        Path path = spec.path();
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            throw new BackendOpenException(path, "is not a regular file"
                    + (Files.isDirectory(path) ? " but a directory" : " (use a device namespace for block devices)"));
        }
        boolean readOnly = spec.readOnly();
        String note = "";
        int flags = Libc.O_CLOEXEC | (readOnly ? Libc.O_RDONLY
                : Libc.O_RDWR | (spec.create() ? Libc.O_CREAT : 0));
        int fd = Fds.open(path, flags, 0644);
        if (fd < 0 && !readOnly && Fds.permissionDenied(-fd) && Files.exists(path)) {
            int retry = Fds.open(path, Libc.O_CLOEXEC | Libc.O_RDONLY, 0);
            if (retry >= 0) {
                note = " (read-only: " + Errno.name(fd) + " for writing)";
                readOnly = true;
            }
            fd = retry >= 0 ? retry : fd;
        }
        if (fd < 0) {
            throw new BackendOpenException(path, "open(" + Fds.flagNames(flags) + ")", -fd);
        }
        try {
            long fileSize = Fds.seekEnd(path, fd);
            long size = spec.sizeBytes();
            if (size == BackendSpec.SIZE_FROM_MEDIUM) {
                if (fileSize == 0) {
                    throw new BackendOpenException(path, "the file is empty; give the namespace a size");
                }
                size = fileSize;
            } else if (fileSize < size) {
                if (readOnly) {
                    throw new BackendOpenException(path, "the file has " + fileSize + " bytes, fewer than the size "
                            + size + ", and cannot be extended: it is open read-only");
                }
                Fds.truncate(path, fd, size); // sparse: blocks are allocated when written
            }
            return new FileBackend("file:" + path + note, fd, size, readOnly, spec);
        } catch (BackendOpenException | RuntimeException e) {
            Fds.closeQuietly(fd);
            throw e;
        }
    }
}
