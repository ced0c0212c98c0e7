package dev.nvmf.verbs.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The few libc calls the provider needs (poll, eventfd, read, write, fcntl, close, strerror, and epoll and timerfd
 * for {@link EpollWaiter}), always present. Calls that can fail capture errno.
 */
final class Libc {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE =
            CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

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
    /** char *strerror(int errnum): glibc returns static, thread-safe text for known values. */
    private static final MethodHandle STRERROR = LINKER.downcallHandle(find("strerror"),
            FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private Libc() {}

    private static MemorySegment find(String name) {
        return LIBC.find(name).orElseThrow(() -> new UnsatisfiedLinkError("libc has no " + name));
    }

    private static MethodHandle handle(String name, FunctionDescriptor fd) {
        return LINKER.downcallHandle(find(name), fd, ERRNO);
    }

    /** A capture-state buffer for calls made through handles that capture errno. */
    static MemorySegment allocateCapture(Arena arena) {
        return arena.allocate(CAPTURE_LAYOUT);
    }

    static int errno(MemorySegment capture) {
        return (int) ERRNO_HANDLE.get(capture, 0L);
    }

    /** The C library's text for an errno value. */
    static String strerror(int errno) {
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

    static void close(int fd) {
        try (Arena arena = Arena.ofConfined()) {
            int ignored = (int) CLOSE.invokeExact(allocateCapture(arena), fd);
        } catch (Throwable t) {
            // closing is best effort on teardown
        }
    }
}
