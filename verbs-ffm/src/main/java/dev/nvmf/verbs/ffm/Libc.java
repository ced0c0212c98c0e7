package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.Errno;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The product's one binding of the C library: the calls the RDMA provider needs (poll, eventfd, read, write, fcntl,
 * close, strerror, and epoll and timerfd for {@link EpollWaiter}) and those the file and block-device backends of {@code target-daemon} need (open, pread, pwrite,
 * pwritev2, fdatasync, fallocate, ftruncate, lseek, ioctl, statx), as FFM downcalls with errno captured.
 *
 * <p>Why here: {@code verbs-ffm} is the module that binds native libraries through {@code java.lang.foreign}, and it
 * is the lowest module: {@code target-daemon} depends on it, while it must not depend on {@code target-daemon}. One
 * binding in the lower module serves both, with one errno-capture convention and one {@link Errno}; a module of its
 * own for a score of libc symbols would add a build unit and no boundary anyone needs.
 *
 * <p>Every call that can fail takes an errno-capture segment first ({@link #allocateCapture}: one per thread, reused
 * for every call it makes); the call returns what libc returns and, on failure, {@link #errno} reads the value.
 * Data-path buffer pointers are passed as {@code long} addresses (a {@code void*} and a {@code long} travel in the
 * same register on the LP64 ABIs we run on), so no slice of the caller's segment is made per call: the caller keeps
 * its segment alive until the call returns, and nothing is allocated.
 *
 * <p>Linux only; flag values are those of x86_64 and aarch64 (O_DIRECT differs between them); {@code LibcTest}
 * checks them against the installed headers.
 */
@SuppressWarnings("restricted")
public final class Libc {
    public static final int O_RDONLY = 0;
    public static final int O_RDWR = 2;
    public static final int O_CREAT = 0100;
    /** Without O_CREAT on a block device: exclusive, refused (EBUSY) if mounted or held by another exclusive user. */
    public static final int O_EXCL = 0200;
    public static final int O_CLOEXEC = 02000000;
    public static final int O_DIRECT = isAarch64() ? 0200000 : 040000;

    public static final int SEEK_END = 2;

    public static final int FALLOC_FL_KEEP_SIZE = 0x01;
    public static final int FALLOC_FL_PUNCH_HOLE = 0x02;
    public static final int FALLOC_FL_ZERO_RANGE = 0x10;

    /** pwritev2 flag: this write is durable on return, as if the file were opened O_DSYNC (Linux 4.7). */
    public static final int RWF_DSYNC = 0x02;

    /** linux/fs.h: _IOR(0x12, 114, size_t), the size in bytes of a block device. */
    public static final long BLKGETSIZE64 = 0x80081272L;
    /** linux/fs.h: _IO(0x12, 104), the logical block size (int). */
    public static final long BLKSSZGET = 0x1268L;
    /** linux/fs.h: _IO(0x12, 123), the physical block size (unsigned int). */
    public static final long BLKPBSZGET = 0x127bL;
    /** linux/fs.h: _IO(0x12, 127), zero a range {start, length} (uint64_t[2]). */
    public static final long BLKZEROOUT = 0x127fL;
    /** linux/fs.h: _IO(0x12, 119), discard a range {start, length} (uint64_t[2]). */
    public static final long BLKDISCARD = 0x1277L;
    /** linux/fs.h: _IO(0x12, 121), the optimal I/O size in bytes (unsigned int; 0 = not reported). */
    public static final long BLKIOOPT = 0x1279L;
    /** linux/fs.h: _IO(0x12, 124), do discarded blocks read back zeroes (unsigned int; 0 since Linux 4.12). */
    public static final long BLKDISCARDZEROES = 0x127cL;
    /** linux/fs.h: _IO(0x12, 94), is the device read-only (int). */
    public static final long BLKROGET = 0x125eL;

    /** fcntl.h: statx on the descriptor itself (an empty path). */
    public static final int AT_EMPTY_PATH = 0x1000;
    /** linux/stat.h: ask statx for the direct I/O alignment (Linux 6.1). */
    public static final int STATX_DIOALIGN = 0x2000;
    /** sizeof(struct statx). */
    public static final int STATX_SIZE = 256;
    /** offsetof(struct statx, stx_mask): which fields the kernel filled. */
    public static final int STATX_MASK_OFFSET = 0;
    /** offsetof(struct statx, stx_dio_mem_align): buffer address alignment for O_DIRECT, 0 if unsupported. */
    public static final int STATX_DIO_MEM_ALIGN_OFFSET = 152;
    /** offsetof(struct statx, stx_dio_offset_align): file offset and length alignment for O_DIRECT. */
    public static final int STATX_DIO_OFFSET_ALIGN_OFFSET = 156;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final long ERRNO_OFFSET =
            CAPTURE_LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement("errno"));

    /** int poll(struct pollfd *fds, nfds_t nfds, int timeout). */
    static final MethodHandle POLL = handle("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT));
    /** ssize_t read(int fd, void *buf, size_t count). */
    static final MethodHandle READ = handle("read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    /** ssize_t write(int fd, const void *buf, size_t count). */
    static final MethodHandle WRITE = handle("write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG));
    /** int eventfd(unsigned int initval, int flags). */
    static final MethodHandle EVENTFD = handle("eventfd", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    /** int epoll_create1(int flags). */
    static final MethodHandle EPOLL_CREATE1 = handle("epoll_create1", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    /** int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event). */
    static final MethodHandle EPOLL_CTL = handle("epoll_ctl",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS));
    /** int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout). */
    static final MethodHandle EPOLL_WAIT = handle("epoll_wait",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
    /** int timerfd_create(int clockid, int flags). */
    static final MethodHandle TIMERFD_CREATE = handle("timerfd_create", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
    /** int timerfd_settime(int fd, int flags, const struct itimerspec *new_value, struct itimerspec *old_value). */
    static final MethodHandle TIMERFD_SETTIME = handle("timerfd_settime",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
    /** int close(int fd). */
    static final MethodHandle CLOSE = handle("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    /** int fcntl(int fd, int cmd, ...): variadic, called with one int argument. */
    static final MethodHandle FCNTL = LINKER.downcallHandle(find("fcntl"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT), ERRNO, Linker.Option.firstVariadicArg(2));

    private static final MethodHandle OPEN = LINKER.downcallHandle(find("open"),
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT), ERRNO, Linker.Option.firstVariadicArg(2));
    private static final MethodHandle PREAD = handle("pread64",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle PWRITE = handle("pwrite64",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle PWRITEV2 = handleOrNull("pwritev2",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle FDATASYNC = handle("fdatasync", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    private static final MethodHandle FALLOCATE = handle("fallocate64",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle FTRUNCATE = handle("ftruncate64",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG));
    private static final MethodHandle LSEEK = handle("lseek64",
            FunctionDescriptor.of(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    private static final MethodHandle IOCTL = LINKER.downcallHandle(find("ioctl"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG), ERRNO, Linker.Option.firstVariadicArg(2));
    /** int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf): glibc 2.28. */
    private static final MethodHandle STATX = handleOrNull("statx",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, ADDRESS));
    /**
     * int sched_setaffinity(pid_t pid, size_t cpusetsize, const cpu_set_t *mask) and sched_getaffinity: pid 0 is
     * the calling thread (sched_setaffinity(2)); the mask is a bit per CPU in unsigned longs.
     */
    private static final MethodHandle SCHED_SETAFFINITY = handle("sched_setaffinity",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS));
    private static final MethodHandle SCHED_GETAFFINITY = handle("sched_getaffinity",
            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS));
    /** CPUs a mask here covers: glibc's CPU_SETSIZE, the cpu_set_t of sched_setaffinity(2). */
    public static final int CPU_SETSIZE = 1024;

    /**
     * char *strerror(int errnum): glibc returns static text for known values and, since 2.32, a per-thread buffer
     * for unknown ones, so it is safe from any thread.
     */
    private static final MethodHandle STRERROR = LINKER.downcallHandle(find("strerror"),
            FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private Libc() {}

    private static boolean isAarch64() {
        String arch = System.getProperty("os.arch", "");
        return arch.equals("aarch64") || arch.equals("arm64");
    }

    private static MemorySegment find(String name) {
        return LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
    }

    private static MethodHandle handle(String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(find(name), fd, ERRNO);
    }

    private static MethodHandle handleOrNull(String name, FunctionDescriptor fd) {
        return LIBC.find(name).map(s -> LINKER.downcallHandle(s, fd, ERRNO)).orElse(null);
    }

    /** A capture-state buffer for one thread's calls through handles that capture errno; reuse it. */
    public static MemorySegment allocateCapture(Arena arena) {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    /** The errno the last failing call made with {@code capture} left there. */
    public static int errno(MemorySegment capture) {
        return capture.get(JAVA_INT, ERRNO_OFFSET);
    }

    /** The C library's text for an errno value ("errno N" if it has none). */
    public static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            if (s.equals(MemorySegment.NULL)) return "errno " + errno;
            return s.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    /** Sets O_NONBLOCK on a file descriptor, so a spurious wakeup never blocks a get_event call. */
    static void setNonBlocking(int fd, String what) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment cap = allocateCapture(arena);
            int flags = (int) FCNTL.invokeExact(cap, fd, NativeLayout.F_GETFL, 0);
            if (flags < 0) throw Rdma.failure("fcntl(F_GETFL) on " + what, errno(cap));
            int rc = (int) FCNTL.invokeExact(cap, fd, NativeLayout.F_SETFL, flags | NativeLayout.O_NONBLOCK);
            if (rc < 0) throw Rdma.failure("fcntl(F_SETFL) on " + what, errno(cap));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** close(2), best effort (teardown): errors are ignored. */
    public static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            int ignored = (int) CLOSE.invokeExact(allocateCapture(arena), fd);
        } catch (Throwable t) {
            // closing is best effort on teardown
        }
    }

    public static boolean hasPwritev2() {
        return PWRITEV2 != null;
    }

    /** open(2) of a NUL-terminated path. */
    public static int open(MemorySegment capture, MemorySegment path, int flags, int mode) {
        try {
            return (int) OPEN.invokeExact(capture, path, flags, mode);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int close(MemorySegment capture, int fd) {
        try {
            return (int) CLOSE.invokeExact(capture, fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long pread(MemorySegment capture, int fd, long address, long count, long offset) {
        try {
            return (long) PREAD.invokeExact(capture, fd, address, count, offset);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long pwrite(MemorySegment capture, int fd, long address, long count, long offset) {
        try {
            return (long) PWRITE.invokeExact(capture, fd, address, count, offset);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** pwritev2(fd, iov, iovcnt, offset, flags); {@code iov} is the address of struct iovec[iovcnt]. */
    public static long pwritev2(MemorySegment capture, int fd, long iov, int iovcnt, long offset, int flags) {
        try {
            return (long) PWRITEV2.invokeExact(capture, fd, iov, iovcnt, offset, flags);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int fdatasync(MemorySegment capture, int fd) {
        try {
            return (int) FDATASYNC.invokeExact(capture, fd);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int fallocate(MemorySegment capture, int fd, int mode, long offset, long length) {
        try {
            return (int) FALLOCATE.invokeExact(capture, fd, mode, offset, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * Pins the calling thread to {@code cpus} (each 0 to {@link #CPU_SETSIZE} - 1). Control path: allocates.
     *
     * @return 0, or the errno of sched_setaffinity (EINVAL: none of them is a CPU this process may run on)
     */
    public static int pinCurrentThread(java.util.List<Integer> cpus) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SETSIZE / 8, 8);
            for (int cpu : cpus) {
                if (cpu < 0 || cpu >= CPU_SETSIZE) throw new IllegalArgumentException("CPU " + cpu);
                long word = mask.getAtIndex(JAVA_LONG, cpu / 64);
                mask.setAtIndex(JAVA_LONG, cpu / 64, word | (1L << (cpu % 64)));
            }
            MemorySegment capture = allocateCapture(arena);
            int rc = (int) SCHED_SETAFFINITY.invokeExact(capture, 0, (long) (CPU_SETSIZE / 8), mask);
            return rc == 0 ? 0 : errno(capture);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The CPUs the calling thread may run on, in ascending order (sched_getaffinity(2)). Control path. */
    public static java.util.List<Integer> currentThreadCpus() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(CPU_SETSIZE / 8, 8);
            MemorySegment capture = allocateCapture(arena);
            int rc = (int) SCHED_GETAFFINITY.invokeExact(capture, 0, (long) (CPU_SETSIZE / 8), mask);
            if (rc != 0) throw new IllegalStateException("sched_getaffinity: " + strerror(errno(capture)));
            java.util.List<Integer> out = new java.util.ArrayList<>();
            for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
                if ((mask.getAtIndex(JAVA_LONG, cpu / 64) & (1L << (cpu % 64))) != 0) out.add(cpu);
            }
            return out;
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static int ftruncate(MemorySegment capture, int fd, long length) {
        try {
            return (int) FTRUNCATE.invokeExact(capture, fd, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    public static long lseek(MemorySegment capture, int fd, long offset, int whence) {
        try {
            return (long) LSEEK.invokeExact(capture, fd, offset, whence);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** ioctl(fd, request, argAddress): the third argument is a pointer, passed as its address. */
    public static int ioctl(MemorySegment capture, int fd, long request, long argAddress) {
        try {
            return (int) IOCTL.invokeExact(capture, fd, request, argAddress);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * statx(fd, "", AT_EMPTY_PATH, mask, buffer) on an open descriptor; {@code buffer} holds {@link #STATX_SIZE}
     * bytes. Returns -1 with errno ENOSYS when this C library has no statx.
     */
    public static int fstatx(MemorySegment capture, int fd, int mask, MemorySegment buffer) {
        if (STATX == null) {
            capture.set(JAVA_INT, ERRNO_OFFSET, Errno.ENOSYS);
            return -1;
        }
        try (Arena a = Arena.ofConfined()) {
            return (int) STATX.invokeExact(capture, fd, a.allocateFrom(""), AT_EMPTY_PATH, mask, buffer);
        } catch (Throwable t) {
            throw rethrow(t);
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
}
