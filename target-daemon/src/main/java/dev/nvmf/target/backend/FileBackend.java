package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.ffm.Libc;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A namespace in a regular file (kernel: io-cmd-file.c), served by an {@link AsyncFdBackend} worker pool. Write
 * Zeroes is fallocate(ZERO_RANGE), falling back to writing zeroes on file systems that lack it. Deallocate is
 * fallocate(PUNCH_HOLE) and never writes: on a file system that cannot punch holes it does nothing, and
 * {@link #deallocatedReadsZeroes()} (probed at open) says so. A namespace sized from the file follows the file's
 * size when revalidated ({@link #revalidateSize()}).
 *
 * <h2>O_DIRECT by default</h2>
 * As the kernel target does (nvmet_file_ns_enable opens O_DIRECT unless the namespace's buffered_io is set), the file
 * is opened O_DIRECT: the page cache is bypassed, so the target's memory holds no second copy of the namespace and a
 * completed write has reached the file system's device (Flush still makes it durable on a device with a volatile
 * cache). Offsets, lengths and buffer addresses must then be multiples of the file system's direct I/O alignment
 * ({@link #logicalBlockSize()}, from statx); a misaligned buffer, such as in-capsule data behind a 64-byte command,
 * goes through the worker's bounce buffer. {@link BackendSpec#bufferedIo()} chooses the page cache instead.
 *
 * <h2>File systems that refuse O_DIRECT</h2>
 * tmpfs (before Linux 6.6) and some FUSE and network file systems refuse {@code open(O_DIRECT)} with EINVAL. The file
 * is then opened through the page cache, {@link #directIoRefused()} is true and {@link #describe()} says so, and the
 * daemon logs a warning naming the remedy (set buffered_io: true, which is what the file system gives anyway). The
 * kernel target refuses to enable such a namespace instead; serving it is what an operator who put a scratch
 * namespace on tmpfs expects, and nothing durable is lost, since such a file system has no device to bypass the cache
 * for.
 */
public final class FileBackend extends AsyncFdBackend {
    private final boolean directIoRefused;

    private FileBackend(String description, int fd, long sizeBytes, boolean readOnly, boolean direct,
                        int alignment, boolean directIoRefused, BackendSpec spec) {
        super(description, fd, sizeBytes, readOnly, false, direct, alignment, spec.fuaMode(), spec.ioWorkers(),
                spec.maxInFlight());
        this.directIoRefused = directIoRefused;
    }

    /** True if O_DIRECT was asked for and the file system refused it: the file is served through the page cache. */
    public boolean directIoRefused() {
        return directIoRefused;
    }

    /**
     * Opens (and if asked creates or extends) the file a {@link BackendSpec.Kind#FILE} spec names. A writable spec on
     * a file that cannot be opened for writing falls back to read-only, which {@link #describe()} says.
     */
    public static FileBackend open(BackendSpec spec) throws BackendOpenException {
        return open(spec, Fds::open);
    }

    /** open(2) as {@link Fds#open} does it: the descriptor, or minus the errno. A seam for tests. */
    interface Opener {
        int open(Path path, int flags, int mode);
    }

    static FileBackend open(BackendSpec spec, Opener opener) throws BackendOpenException {
        if (spec.kind() != BackendSpec.Kind.FILE) {
            throw new IllegalArgumentException("not a file spec: " + spec);
        }
        Path path = spec.path();
        if (Files.exists(path) && !Files.isRegularFile(path)) {
            throw new BackendOpenException(path, "is not a regular file"
                    + (Files.isDirectory(path) ? " but a directory" : " (use a device namespace for block devices)"));
        }
        boolean readOnly = spec.readOnly();
        boolean direct = !spec.bufferedIo();
        boolean refused = false;
        StringBuilder note = new StringBuilder();
        int access = readOnly ? Libc.O_RDONLY : Libc.O_RDWR | (spec.create() ? Libc.O_CREAT : 0);
        int flags = Libc.O_CLOEXEC | access | (direct ? Libc.O_DIRECT : 0);
        int fd = opener.open(path, flags, 0644);
        if (fd == -Errno.EINVAL && direct) {
            flags &= ~Libc.O_DIRECT;
            fd = opener.open(path, flags, 0644);
            if (fd >= 0) {
                direct = false;
                refused = true;
            }
        }
        if (fd < 0 && !readOnly && Fds.permissionDenied(-fd) && Files.exists(path)) {
            int retry = opener.open(path, Libc.O_CLOEXEC | Libc.O_RDONLY | (flags & Libc.O_DIRECT), 0);
            if (retry >= 0) {
                note.append(" (read-only: ").append(Errno.name(fd)).append(" for writing)");
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
            int alignment = 1;
            if (direct) {
                alignment = Fds.directIoAlignment(fd);
                if (alignment == 0) {
                    // statx says this file cannot do direct I/O although open() took the flag: use the page cache.
                    Fds.closeQuietly(fd);
                    fd = -1;
                    fd = opener.open(path, flags & ~Libc.O_DIRECT & ~Libc.O_CREAT, 0);
                    if (fd < 0) {
                        throw new BackendOpenException(path, "open(" + Fds.flagNames(flags & ~Libc.O_DIRECT) + ")",
                                -fd);
                    }
                    direct = false;
                    refused = true;
                    alignment = 1;
                }
            }
            if (refused) {
                note.append(" (buffered: the file system refuses O_DIRECT)");
            } else if (!direct) {
                note.append(" (buffered)");
            }
            FileBackend file = new FileBackend("file:" + path + note, fd, size, readOnly, direct, alignment, refused,
                    spec);
            if (spec.sizeBytes() == BackendSpec.SIZE_FROM_MEDIUM) {
                file.followMediumSize();
            }
            return file;
        } catch (BackendOpenException | RuntimeException e) {
            if (fd >= 0) {
                Fds.closeQuietly(fd);
            }
            throw e;
        }
    }
}
