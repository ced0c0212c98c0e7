package dev.nvmf.verbs.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Waits for a file descriptor to become readable with poll(2), together with an eventfd that {@link #wakeup()}
 * signals from any thread. Its native buffers are allocated once; {@link #await} allocates nothing.
 * One thread awaits at a time (the owner of the channel).
 */
final class FdWaiter implements AutoCloseable {
    /** FAILED: poll(2) itself failed; {@link #errno()} says why. */
    enum Result { READY, WOKEN, TIMEOUT, FAILED }

    private final Arena arena = Arena.ofShared();
    private final MemorySegment fds;
    private final MemorySegment capture;
    private final int fd;
    private final EventFd wake;
    private volatile boolean closed;
    private int errno;

    FdWaiter(int fd, String what) {
        this.fd = fd;
        this.fds = arena.allocate((long) NativeLayout.POLLFD_SIZE * 2, 8);
        this.capture = Libc.allocateCapture(arena);
        try {
            this.wake = new EventFd(what);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        fds.set(JAVA_INT, NativeLayout.POLLFD_FD, fd);
        fds.set(JAVA_SHORT, NativeLayout.POLLFD_EVENTS, (short) NativeLayout.POLLIN);
        fds.set(JAVA_INT, NativeLayout.POLLFD_SIZE + NativeLayout.POLLFD_FD, wake.fd());
        fds.set(JAVA_SHORT, NativeLayout.POLLFD_SIZE + NativeLayout.POLLFD_EVENTS, (short) NativeLayout.POLLIN);
    }

    int fd() { return fd; }

    /**
     * Waits up to {@code timeoutMillis} (0 = just look; negative = forever) for the fd to be readable or for a
     * wakeup. A wakeup is consumed and reported even when the fd is also readable, so it is never lost.
     */
    Result await(long timeoutMillis) {
        int timeout = timeoutMillis < 0 ? -1 : (int) Math.min(timeoutMillis, Integer.MAX_VALUE);
        fds.set(JAVA_SHORT, NativeLayout.POLLFD_REVENTS, (short) 0);
        fds.set(JAVA_SHORT, NativeLayout.POLLFD_SIZE + NativeLayout.POLLFD_REVENTS, (short) 0);
        int rc;
        try {
            rc = (int) Libc.POLL.invokeExact(capture, fds, 2L, timeout);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc < 0) {
            int e = Libc.errno(capture);
            if (e == NativeLayout.EINTR) return Result.TIMEOUT;
            errno = e;
            return Result.FAILED;
        }
        if (rc == 0) return Result.TIMEOUT;
        if (fds.get(JAVA_SHORT, NativeLayout.POLLFD_SIZE + NativeLayout.POLLFD_REVENTS) != 0) {
            wake.clear();
            return Result.WOKEN;
        }
        return fds.get(JAVA_SHORT, NativeLayout.POLLFD_REVENTS) != 0 ? Result.READY : Result.TIMEOUT;
    }

    /** Why the last {@link #await} returned FAILED. */
    int errno() { return errno; }

    /** Makes the current or next {@link #await} return WOKEN. Any thread. */
    void wakeup() {
        if (!closed) wake.signal();
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        wake.close();
        arena.close();
    }
}
