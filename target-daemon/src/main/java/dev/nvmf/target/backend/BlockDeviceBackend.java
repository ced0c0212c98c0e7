package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.ffm.Libc;

import java.nio.file.Path;

/**
 * A namespace on a block device (kernel: io-cmd-bdev.c), opened O_DIRECT (falling back to buffered I/O when the
 * device refuses O_DIRECT, which {@link #describe()} then says) and exclusively when writable (O_EXCL: refused
 * while the device is mounted), served by an {@link AsyncFdBackend} worker pool.
 *
 * <p>The size comes from ioctl(BLKGETSIZE64) and the logical block size from ioctl(BLKSSZGET): the core must refuse
 * a namespace LBA size that is not a multiple of {@link #logicalBlockSize()}, since O_DIRECT cannot address less.
 * Write Zeroes is fallocate(ZERO_RANGE), then ioctl(BLKZEROOUT), then writes of zeroes; Deallocate is
 * fallocate(PUNCH_HOLE), an unmapping write-zeroes that guarantees zeroes on later reads, else Write Zeroes.
 */
public final class BlockDeviceBackend extends AsyncFdBackend {
    private final int physicalBlockSize;

    private BlockDeviceBackend(String description, int fd, long sizeBytes, boolean readOnly, boolean direct,
                               int logicalBlockSize, int physicalBlockSize, BackendSpec spec) {
        super(description, fd, sizeBytes, readOnly, true, direct, logicalBlockSize, spec.fuaMode(),
                spec.ioWorkers(), spec.maxInFlight());
        this.physicalBlockSize = physicalBlockSize;
    }

    /** The device's physical block size (BLKPBSZGET): LBA sizes below it work but cost read-modify-write. */
    public int physicalBlockSize() {
        return physicalBlockSize;
    }

    /** Opens the device a {@link BackendSpec.Kind#DEVICE} spec names. */
    public static BlockDeviceBackend open(BackendSpec spec) throws BackendOpenException {
        if (spec.kind() != BackendSpec.Kind.DEVICE) {
            throw new IllegalArgumentException("not a device spec: " + spec);
        }
        Path path = spec.path();
        boolean readOnly = spec.readOnly();
        boolean direct = true;
        StringBuilder note = new StringBuilder();
        int flags = Libc.O_CLOEXEC | Libc.O_DIRECT | (readOnly ? Libc.O_RDONLY : Libc.O_RDWR | Libc.O_EXCL);
        int fd = Fds.open(path, flags, 0);
        int firstFlags = flags;
        int firstError = fd;
        if (fd == -Errno.EINVAL) {
            // The device (or the file system under a non-device path) does not do O_DIRECT.
            flags &= ~Libc.O_DIRECT;
            fd = Fds.open(path, flags, 0);
            if (fd >= 0) {
                direct = false;
                note.append(" (buffered: O_DIRECT refused: EINVAL)");
            }
        }
        if (fd < 0 && !readOnly && Fds.permissionDenied(-fd)) {
            int roFlags = (flags & ~(Libc.O_RDWR | Libc.O_EXCL)) | Libc.O_RDONLY;
            int retry = Fds.open(path, roFlags, 0);
            if (retry >= 0) {
                note.append(" (read-only: ").append(Errno.name(fd)).append(" for writing)");
                readOnly = true;
                fd = retry;
            }
        }
        if (fd < 0) {
            int errno = firstError < 0 && firstError != -Errno.EINVAL ? firstError : fd;
            throw new BackendOpenException(path, "open(" + Fds.flagNames(errno == firstError ? firstFlags : flags)
                    + ")", -errno);
        }
        try {
            long size;
            try {
                size = Fds.ioctlLong(path, fd, Libc.BLKGETSIZE64, "BLKGETSIZE64");
            } catch (BackendOpenException e) {
                if (e.errno() == Errno.ENOTTY) {
                    throw new BackendOpenException(path, "is not a block device: ioctl(BLKGETSIZE64)", e.errno());
                }
                throw e;
            }
            if (size <= 0) {
                throw new BackendOpenException(path, "the device has no capacity (size " + size + ")");
            }
            int logical = Fds.ioctlInt(path, fd, Libc.BLKSSZGET, "BLKSSZGET");
            int physical = Fds.ioctlInt(path, fd, Libc.BLKPBSZGET, "BLKPBSZGET");
            if (logical <= 0 || Integer.bitCount(logical) != 1) {
                throw new BackendOpenException(path, "the device reports a logical block size of " + logical);
            }
            if (!readOnly && Fds.ioctlInt(path, fd, Libc.BLKROGET, "BLKROGET") != 0) {
                note.append(" (read-only: the device is read-only)");
                readOnly = true;
            }
            return new BlockDeviceBackend("bdev:" + path + note, fd, size, readOnly, direct, direct ? logical : 1,
                    physical, spec);
        } catch (BackendOpenException | RuntimeException e) {
            Fds.closeQuietly(fd);
            throw e;
        }
    }
}
