package dev.nvmf.target.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The few libc calls the file and block-device backends need, as FFM downcalls with errno captured.
 *
 * <p>Every data-path call takes an errno-capture segment first (one per thread, see {@link #newErrnoState}); the
 * call returns what libc returns and, on -1, the errno is read with {@link #errno}. Data-path buffer pointers are
 * passed as {@code long} addresses (a {@code void*} and an {@code long} travel in the same register on the LP64
 * ABIs we run on) so no slice of the caller's segment is made per call: the caller keeps its segment alive until its
 * callback, which is the backend contract.
 *
 * <p>Linux only; flag values are those of x86_64 and aarch64 (O_DIRECT differs between them).
 */
@SuppressWarnings("restricted")
final class LibC {
    static final int O_RDONLY = 0;
    static final int O_RDWR = 2;
    static final int O_CREAT = 0100;
    /** Without O_CREAT on a block device: exclusive, refused (EBUSY) if mounted or held by another exclusive user. */
    static final int O_EXCL = 0200;
    static final int O_CLOEXEC = 02000000;
    static final int O_DIRECT = isAarch64() ? 0200000 : 040000;

    static final int SEEK_END = 2;

    static final int FALLOC_FL_KEEP_SIZE = 0x01;
    static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    static final int FALLOC_FL_ZERO_RANGE = 0x10;

    /** pwritev2 flag: this write is durable on return, as if the file were opened O_DSYNC (Linux 4.7). */
    static final int RWF_DSYNC = 0x02;

    /** linux/fs.h: _IOR(0x12, 114, size_t), the size in bytes of a block device. */
    static final long BLKGETSIZE64 = 0x80081272L;
    /** linux/fs.h: _IO(0x12, 104), the logical block size (int). */
    static final long BLKSSZGET = 0x1268L;
    /** linux/fs.h: _IO(0x12, 123), the physical block size (unsigned int). */
    static final long BLKPBSZGET = 0x127bL;
    /** linux/fs.h: _IO(0x12, 127), zero a range {start, length} (uint64_t[2]). */
    static final long BLKZEROOUT = 0x127fL;
    /** linux/fs.h: _IO(0x12, 119), discard a range {start, length} (uint64_t[2]). */
    static final long BLKDISCARD = 0x1277L;
    /** linux/fs.h: _IO(0x12, 121), the optimal I/O size in bytes (unsigned int; 0 = not reported). */
    static final long BLKIOOPT = 0x1279L;
    /** linux/fs.h: _IO(0x12, 124), do discarded blocks read back zeroes (unsigned int; 0 since Linux 4.12). */
    static final long BLKDISCARDZEROES = 0x127cL;
    /** linux/fs.h: _IO(0x12, 94), is the device read-only (int). */
    static final long BLKROGET = 0x125eL;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final long ERRNO_OFFSET =
            CAPTURE_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final MethodHandle OPEN = downcall("open",
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), CAPTURE_ERRNO, Linker.Option.firstVariadicArg(2));
    private static final MethodHandle CLOSE = downcall("close",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle PREAD = downcall("pread64",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
    private static final MethodHandle PWRITE = downcall("pwrite64",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
    private static final MethodHandle PWRITEV2 = downcallOrNull("pwritev2",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle FDATASYNC = downcall("fdatasync",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle FALLOCATE = downcall("fallocate64",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO);
    private static final MethodHandle FTRUNCATE = downcall("ftruncate64",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG), CAPTURE_ERRNO);
    private static final MethodHandle LSEEK = downcall("lseek64",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle IOCTL = downcall("ioctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), CAPTURE_ERRNO,
            Linker.Option.firstVariadicArg(2));
    private static final MethodHandle STRERROR = downcall("strerror",
            FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private LibC() {
    }

    private static boolean isAarch64() {
        String arch = System.getProperty("os.arch", "");
        return arch.equals("aarch64") || arch.equals("arm64");
    }

    private static MethodHandle downcall(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        MemorySegment symbol = LIBC.find(name)
                .orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
        return LINKER.downcallHandle(symbol, descriptor, options);
    }

    private static MethodHandle downcallOrNull(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        return LIBC.find(name).map(s -> LINKER.downcallHandle(s, descriptor, options)).orElse(null);
    }

    /** A segment for one thread's captured errno; reuse it for every call that thread makes. */
    static MemorySegment newErrnoState(Arena arena) {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    /** The errno the last failing call made with {@code state} left there. */
    static int errno(MemorySegment state) {
        return state.get(JAVA_INT, ERRNO_OFFSET);
    }

    static boolean hasPwritev2() {
        return PWRITEV2 != null;
    }

    static int open(MemorySegment state, MemorySegment path, int flags, int mode) {
        try {
            return (int) OPEN.invokeExact(state, path, flags, mode);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int close(MemorySegment state, int fd) {
        try {
            return (int) CLOSE.invokeExact(state, fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static long pread(MemorySegment state, int fd, long address, long count, long offset) {
        try {
            return (long) PREAD.invokeExact(state, fd, address, count, offset);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static long pwrite(MemorySegment state, int fd, long address, long count, long offset) {
        try {
            return (long) PWRITE.invokeExact(state, fd, address, count, offset);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** pwritev2(fd, iov, iovcnt, offset, flags); {@code iov} is the address of struct iovec[iovcnt]. */
    static long pwritev2(MemorySegment state, int fd, long iov, int iovcnt, long offset, int flags) {
        try {
            return (long) PWRITEV2.invokeExact(state, fd, iov, iovcnt, offset, flags);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int fdatasync(MemorySegment state, int fd) {
        try {
            return (int) FDATASYNC.invokeExact(state, fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int fallocate(MemorySegment state, int fd, int mode, long offset, long length) {
        try {
            return (int) FALLOCATE.invokeExact(state, fd, mode, offset, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int ftruncate(MemorySegment state, int fd, long length) {
        try {
            return (int) FTRUNCATE.invokeExact(state, fd, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static long lseek(MemorySegment state, int fd, long offset, int whence) {
        try {
            return (long) LSEEK.invokeExact(state, fd, offset, whence);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** ioctl(fd, request, argAddress): the third argument is a pointer, passed as its address. */
    static int ioctl(MemorySegment state, int fd, long request, long argAddress) {
        try {
            return (int) IOCTL.invokeExact(state, fd, request, argAddress);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The C library's message for an errno, or null if it has none. Control path only (strerror is not reentrant). */
    static synchronized String strerror(int errno) {
        try {
            MemorySegment text = (MemorySegment) STRERROR.invokeExact(errno);
            return text.equals(MemorySegment.NULL) ? null : text.reinterpret(4096).getString(0);
        } catch (Throwable t) {
            return null;
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    static final ValueLayout.OfLong U64 = JAVA_LONG;
}
