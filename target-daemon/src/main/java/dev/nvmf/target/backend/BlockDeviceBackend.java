package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.ffm.Libc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A namespace on a block device (kernel: io-cmd-bdev.c), opened O_DIRECT (falling back to buffered I/O when the
 * device refuses O_DIRECT, which {@link #describe()} then says) and exclusively when writable (O_EXCL: refused
 * while the device is mounted), served by an {@link AsyncFdBackend} worker pool.
 *
 * <p>The size comes from ioctl(BLKGETSIZE64) and the logical block size from ioctl(BLKSSZGET): the core must refuse
 * a namespace LBA size that is not a multiple of {@link #logicalBlockSize()}, since O_DIRECT cannot address less.
 * The physical block size (BLKPBSZGET), optimal I/O size (BLKIOOPT) and discard granularity ({@code
 * queue/discard_granularity} in sysfs) are what Identify Namespace reports (kernel io-cmd-bdev.c,
 * {@code nvmet_bdev_set_limits}): a 512e disk shows its 4 KiB physical blocks. Write Zeroes is
 * fallocate(ZERO_RANGE), then ioctl(BLKZEROOUT), then writes of zeroes. Deallocate is ioctl(BLKDISCARD), never a
 * write; discarded blocks read back zeroes only where the device says so (BLKDISCARDZEROES, which Linux reports 0
 * for every device since 4.12), so {@link #deallocatedReadsZeroes()} is almost always false.
 */
public final class BlockDeviceBackend extends AsyncFdBackend {
    private final int physicalBlockSize;
    private final int optimalIoSize;
    private final int discardGranularity;
    private final boolean discardZeroesData;

    private BlockDeviceBackend(String description, int fd, long sizeBytes, boolean readOnly, boolean direct,
                               int logicalBlockSize, Limits limits, BackendSpec spec) {
        super(description, fd, sizeBytes, readOnly, true, direct, logicalBlockSize, spec.fuaMode(),
                spec.ioWorkers(), spec.maxInFlight());
        this.physicalBlockSize = limits.physicalBlockSize;
        this.optimalIoSize = limits.optimalIoSize;
        this.discardGranularity = limits.discardGranularity;
        this.discardZeroesData = limits.discardZeroesData;
    }

    /** The device's physical block size (BLKPBSZGET): LBA sizes below it work but cost read-modify-write. */
    @Override
    public int physicalBlockSize() {
        return physicalBlockSize;
    }

    /** BLKIOOPT: the device's optimal I/O size (0 = not reported). */
    @Override
    public int optimalIoSize() {
        return optimalIoSize;
    }

    /** sysfs {@code queue/discard_granularity} (0 = the device does not discard, or it could not be read). */
    @Override
    public int deallocateGranularity() {
        return discardGranularity;
    }

    /** Only if the device says discarded blocks read zeroes (BLKDISCARDZEROES) and discarding works. */
    @Override
    public boolean deallocatedReadsZeroes() {
        return discardZeroesData && discardGranularity > 0 && !discardUnsupported();
    }

    /** What the device reports about itself beyond its size; 0 where it reports nothing. */
    private record Limits(int physicalBlockSize, int optimalIoSize, int discardGranularity,
                          boolean discardZeroesData) {
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
            Limits limits = new Limits(physical, optionalIoctl(path, fd, Libc.BLKIOOPT, "BLKIOOPT"),
                    (int) Math.min(Integer.MAX_VALUE, queueAttribute(path, "discard_granularity")),
                    optionalIoctl(path, fd, Libc.BLKDISCARDZEROES, "BLKDISCARDZEROES") == 1);
            if (logical <= 0 || Integer.bitCount(logical) != 1) {
                throw new BackendOpenException(path, "the device reports a logical block size of " + logical);
            }
            if (!readOnly && Fds.ioctlInt(path, fd, Libc.BLKROGET, "BLKROGET") != 0) {
                note.append(" (read-only: the device is read-only)");
                readOnly = true;
            }
            return new BlockDeviceBackend("bdev:" + path + note, fd, size, readOnly, direct, direct ? logical : 1,
                    limits, spec);
        } catch (BackendOpenException | RuntimeException e) {
            Fds.closeQuietly(fd);
            throw e;
        }
    }

    /** An ioctl that fills an unsigned int the device may not know: its value, or 0. */
    private static int optionalIoctl(Path path, int fd, long request, String name) {
        try {
            return Math.max(0, Fds.ioctlInt(path, fd, request, name));
        } catch (BackendOpenException e) {
            return 0;
        }
    }

    /**
     * A number from the device's sysfs queue directory ({@code /sys/class/block/NAME/queue}; a partition's is its
     * disk's), or 0 if there is none or it cannot be read. The device node is resolved first, so /dev/mapper and
     * /dev/disk/by-* links name the real device.
     */
    static long queueAttribute(Path device, String attribute) {
        try {
            Path block = Path.of("/sys/class/block").resolve(device.toRealPath().getFileName().toString());
            Path queue = block.resolve("queue");
            if (!Files.isDirectory(queue)) {
                queue = block.toRealPath().getParent().resolve("queue"); // a partition
            }
            return Long.parseLong(Files.readString(queue.resolve(attribute)).trim());
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
