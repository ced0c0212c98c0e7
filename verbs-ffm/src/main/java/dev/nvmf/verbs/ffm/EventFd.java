package dev.nvmf.verbs.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A non-blocking Linux eventfd (eventfd(2)): readable while its counter is not zero. {@link #signal()} adds one,
 * {@link #clear()} reads the counter back to zero. Both are allocation-free and safe from any thread. Used to
 * wake a waiting thread, and by the soft provider to make its in-process channels waitable with epoll like
 * real file descriptors.
 */
public final class EventFd implements AutoCloseable {
    private final Arena arena = Arena.ofShared();
    private final int fd;
    private final MemorySegment one;
    private final MemorySegment sink;
    private final MemorySegment signalCapture;
    private final MemorySegment clearCapture;
    private volatile boolean closed;

    /** @param what what the eventfd is for, named in the failure if it cannot be created */
    public EventFd(String what) {
        this.one = arena.allocate(8, 8);
        this.sink = arena.allocate(8, 8);
        this.signalCapture = Libc.allocateCapture(arena);
        this.clearCapture = Libc.allocateCapture(arena);
        one.set(JAVA_LONG, 0, 1L);
        int efd;
        try {
            efd = (int) Libc.EVENTFD.invokeExact(signalCapture, 0, NativeLayout.EFD_NONBLOCK | NativeLayout.EFD_CLOEXEC);
        } catch (Throwable t) {
            arena.close();
            throw new IllegalStateException(t);
        }
        if (efd < 0) {
            int errno = Libc.errno(signalCapture);
            arena.close();
            throw Rdma.failure("eventfd for " + what, errno);
        }
        this.fd = efd;
    }

    public int fd() { return fd; }

    /** Makes the fd readable (adds one to the counter). */
    public void signal() {
        synchronized (signalCapture) {
            if (closed) return;
            try {
                long ignored = (long) Libc.WRITE.invokeExact(signalCapture, fd, one, 8L);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }

    /** Resets the counter to zero (the fd is no longer readable); nothing happens when it already was zero. */
    public void clear() {
        synchronized (clearCapture) {
            if (closed) return;
            try {
                long ignored = (long) Libc.READ.invokeExact(clearCapture, fd, sink, 8L);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }

    /** Closes the fd; a concurrent or later signal or clear does nothing. */
    @Override
    public void close() {
        synchronized (signalCapture) {
            synchronized (clearCapture) {
                if (closed) return;
                closed = true;
                Libc.close(fd);
                arena.close();
            }
        }
    }
}
