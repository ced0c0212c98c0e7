package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.ffm.Libc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/** Control-path system calls for opening backends; each failure becomes a {@link BackendOpenException}. */
final class Fds {
    private Fds() {
    }

    /** open(2); returns the descriptor, or minus the errno (so the caller can choose a fallback). */
    static int open(Path path, int flags, int mode) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Libc.allocateCapture(a);
            int fd = Libc.open(errno, a.allocateFrom(path.toString()), flags, mode);
            return fd >= 0 ? fd : -Libc.errno(errno);
        }
    }

    static void closeQuietly(int fd) {
        try (Arena a = Arena.ofConfined()) {
            Libc.close(Libc.allocateCapture(a), fd);
        }
    }

    /** The size of what fd refers to, by seeking to its end (files and block devices alike). */
    static long seekEnd(Path path, int fd) throws BackendOpenException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Libc.allocateCapture(a);
            long size = Libc.lseek(errno, fd, 0, Libc.SEEK_END);
            if (size < 0) {
                throw new BackendOpenException(path, "lseek(SEEK_END)", Libc.errno(errno));
            }
            return size;
        }
    }

    static void truncate(Path path, int fd, long size) throws BackendOpenException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Libc.allocateCapture(a);
            if (Libc.ftruncate(errno, fd, size) != 0) {
                throw new BackendOpenException(path, "ftruncate(" + size + ")", Libc.errno(errno));
            }
        }
    }

    /** An ioctl that fills a 64-bit value; returns it, or throws naming the request. */
    static long ioctlLong(Path path, int fd, long request, String name) throws BackendOpenException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Libc.allocateCapture(a);
            MemorySegment value = a.allocate(ValueLayout.JAVA_LONG);
            if (Libc.ioctl(errno, fd, request, value.address()) != 0) {
                throw new BackendOpenException(path, "ioctl(" + name + ")", Libc.errno(errno));
            }
            return value.get(ValueLayout.JAVA_LONG, 0);
        }
    }

    /** An ioctl that fills a C int; returns it, or throws naming the request. */
    static int ioctlInt(Path path, int fd, long request, String name) throws BackendOpenException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Libc.allocateCapture(a);
            MemorySegment value = a.allocate(ValueLayout.JAVA_LONG); // room to spare; the kernel writes 4 bytes
            if (Libc.ioctl(errno, fd, request, value.address()) != 0) {
                throw new BackendOpenException(path, "ioctl(" + name + ")", Libc.errno(errno));
            }
            return value.get(ValueLayout.JAVA_INT, 0);
        }
    }

    /**
     * The alignment O_DIRECT needs on an open file: file offsets, lengths and buffer addresses must be multiples of
     * it. From statx(STATX_DIOALIGN) where the kernel reports it (Linux 6.1, ext4, xfs, f2fs, btrfs...), else found
     * by trying a 512-byte read at offset 0 (the file is not empty), else 4096. Returns 0 when statx says the file
     * cannot do direct I/O at all.
     */
    static int directIoAlignment(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Libc.allocateCapture(a);
            MemorySegment stx = a.allocate(Libc.STATX_SIZE, 8);
            if (Libc.fstatx(errno, fd, Libc.STATX_DIOALIGN, stx) == 0
                    && (stx.get(ValueLayout.JAVA_INT, Libc.STATX_MASK_OFFSET) & Libc.STATX_DIOALIGN) != 0) {
                int memory = stx.get(ValueLayout.JAVA_INT, Libc.STATX_DIO_MEM_ALIGN_OFFSET);
                int offset = stx.get(ValueLayout.JAVA_INT, Libc.STATX_DIO_OFFSET_ALIGN_OFFSET);
                return offset == 0 ? 0 : Math.max(offset, memory);
            }
            MemorySegment probe = a.allocate(4096, 4096);
            for (int unit = 512; unit <= 4096; unit <<= 3) {
                long r = Libc.pread(errno, fd, probe.address(), unit, 0);
                if (r >= 0) {
                    return unit;
                }
                if (Libc.errno(errno) != Errno.EINVAL) {
                    break;
                }
            }
            return 4096;
        }
    }

    static boolean permissionDenied(int errno) {
        return errno == Errno.EACCES || errno == Errno.EROFS || errno == Errno.EPERM;
    }

    static String flagNames(int flags) {
        StringBuilder b = new StringBuilder((flags & 3) == Libc.O_RDWR ? "O_RDWR" : "O_RDONLY");
        if ((flags & Libc.O_CREAT) != 0) {
            b.append("|O_CREAT");
        }
        if ((flags & Libc.O_DIRECT) != 0) {
            b.append("|O_DIRECT");
        }
        if ((flags & Libc.O_EXCL) != 0) {
            b.append("|O_EXCL");
        }
        return b.toString();
    }
}
