package dev.nvmf.target.backend;

import dev.nvmf.target.backend.rbd.RbdBackend;
import dev.nvmf.target.backend.rbd.RbdSpec;

import java.nio.file.Path;
import java.util.Objects;

/**
 * What the config layer asks {@link BlockBackends#open} for: a RAM, file, block-device or Ceph RBD namespace backend.
 *
 * @param kind        the medium
 * @param path        the file or device (null for RAM and RBD)
 * @param sizeBytes   RAM: the capacity; file: the capacity (the file is extended to it when shorter and writable),
 *                    or {@link #SIZE_FROM_MEDIUM} to use the file's size; device: always {@link #SIZE_FROM_MEDIUM}
 * @param create      file: create it when missing (then a size is needed)
 * @param readOnly    open read-only and refuse writes
 * @param ioWorkers   file/device: I/O worker threads
 * @param maxInFlight file/device/RBD: operation descriptors; size it to the sum of the queue depths that can reach
 *                    the namespace (beyond it, operations complete with -EAGAIN, see {@link AsyncFdBackend})
 * @param fuaMode     file/device: how FUA writes are made durable
 * @param bufferedIo  file: go through the page cache; false (the default, as the kernel target's io-cmd-file.c)
 *                    opens the file O_DIRECT (see {@link FileBackend} for file systems that refuse it)
 * @param rbd         RBD: the image and its cluster (null for the other kinds); its size always comes from the image
 */
public record BackendSpec(Kind kind, Path path, long sizeBytes, boolean create, boolean readOnly, int ioWorkers,
                          int maxInFlight, AsyncFdBackend.FuaMode fuaMode, boolean bufferedIo,
                          RbdSpec rbd) {
    public enum Kind { RAM, FILE, DEVICE, RBD }

    public static final long SIZE_FROM_MEDIUM = -1;

    public BackendSpec {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(fuaMode, "fuaMode");
        if ((kind == Kind.RBD) != (rbd != null)) {
            throw new IllegalArgumentException("an RBD spec goes with kind RBD only");
        }
        if (kind == Kind.RBD) {
            if (path != null || sizeBytes != SIZE_FROM_MEDIUM || create) {
                throw new IllegalArgumentException(rbd.describe() + ": an RBD image has no path, and its size is "
                        + "the image's");
            }
        } else if (kind == Kind.RAM) {
            if (sizeBytes <= 0) {
                throw new IllegalArgumentException("a RAM backend needs a positive size, not " + sizeBytes);
            }
        } else {
            Objects.requireNonNull(path, "path");
            if (sizeBytes != SIZE_FROM_MEDIUM && sizeBytes <= 0) {
                throw new IllegalArgumentException(path + ": size must be positive, not " + sizeBytes);
            }
            if (kind == Kind.DEVICE && sizeBytes != SIZE_FROM_MEDIUM) {
                throw new IllegalArgumentException(path + ": a device's size is read from the device");
            }
            if (create && sizeBytes == SIZE_FROM_MEDIUM) {
                throw new IllegalArgumentException(path + ": creating a file needs a size");
            }
        }
        if (ioWorkers < 1 || maxInFlight < 1) {
            throw new IllegalArgumentException("ioWorkers and maxInFlight must be at least 1");
        }
        if (bufferedIo && kind != Kind.FILE) {
            throw new IllegalArgumentException("buffered I/O applies to files only, not to " + kind);
        }
    }

    /** A RAM namespace of {@code sizeBytes}. */
    public static BackendSpec ram(long sizeBytes) {
        return new BackendSpec(Kind.RAM, null, sizeBytes, false, false, AsyncFdBackend.DEFAULT_IO_WORKERS,
                AsyncFdBackend.DEFAULT_MAX_IN_FLIGHT, AsyncFdBackend.FuaMode.RWF_DSYNC, false, null);
    }

    /** An existing file, its size taken from the file. */
    public static BackendSpec file(Path path) {
        return file(path, SIZE_FROM_MEDIUM, false);
    }

    /** A file of {@code sizeBytes} (or {@link #SIZE_FROM_MEDIUM}), created when missing if {@code create}. */
    public static BackendSpec file(Path path, long sizeBytes, boolean create) {
        return new BackendSpec(Kind.FILE, path, sizeBytes, create, false, AsyncFdBackend.DEFAULT_IO_WORKERS,
                AsyncFdBackend.DEFAULT_MAX_IN_FLIGHT, AsyncFdBackend.FuaMode.RWF_DSYNC, false, null);
    }

    /** A block device; its size and logical block size come from the device. */
    public static BackendSpec device(Path path) {
        return new BackendSpec(Kind.DEVICE, path, SIZE_FROM_MEDIUM, false, false, AsyncFdBackend.DEFAULT_IO_WORKERS,
                AsyncFdBackend.DEFAULT_MAX_IN_FLIGHT, AsyncFdBackend.FuaMode.RWF_DSYNC, false, null);
    }

    /** File: through the page cache (true) or O_DIRECT (false, the default). */
    public BackendSpec withBufferedIo(boolean buffered) {
        return new BackendSpec(kind, path, sizeBytes, create, readOnly, ioWorkers, maxInFlight, fuaMode, buffered, rbd);
    }

    /** An RBD image; its size and layout come from the image. */
    public static BackendSpec rbd(RbdSpec rbd) {
        return new BackendSpec(Kind.RBD, null, SIZE_FROM_MEDIUM, false, false, 1, RbdBackend.DEFAULT_MAX_IN_FLIGHT,
                AsyncFdBackend.FuaMode.RWF_DSYNC, false, Objects.requireNonNull(rbd, "rbd"));
    }

    public BackendSpec withReadOnly(boolean readOnly) {
        return new BackendSpec(kind, path, sizeBytes, create, readOnly, ioWorkers, maxInFlight, fuaMode, bufferedIo, rbd);
    }

    public BackendSpec withIoWorkers(int ioWorkers) {
        return new BackendSpec(kind, path, sizeBytes, create, readOnly, ioWorkers, maxInFlight, fuaMode, bufferedIo, rbd);
    }

    public BackendSpec withMaxInFlight(int maxInFlight) {
        return new BackendSpec(kind, path, sizeBytes, create, readOnly, ioWorkers, maxInFlight, fuaMode, bufferedIo, rbd);
    }

    public BackendSpec withFuaMode(AsyncFdBackend.FuaMode fuaMode) {
        return new BackendSpec(kind, path, sizeBytes, create, readOnly, ioWorkers, maxInFlight, fuaMode, bufferedIo, rbd);
    }
}
