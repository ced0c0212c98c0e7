package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.EventSource;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.IdentityHashMap;
import java.util.Map;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * {@link EventWaiter} on epoll(7): the sources' readiness fds, a timerfd (timerfd_create(2), CLOCK_MONOTONIC, the
 * clock of {@link System#nanoTime()} on Linux) and an {@link EventFd} for wakeups in one level-triggered epoll set.
 * epoll_wait blocks with no timeout of its own when the caller gives none, so an idle waiter costs no wake-ups.
 * Each registered fd carries its token in {@code epoll_event.data}. All native buffers are allocated once. Close
 * it only once its waiting thread has returned (wake it with {@link #wakeup()} and join it first).
 */
public final class EpollWaiter implements EventWaiter {
    private static final int MAX_EVENTS = 64;

    private final Arena arena = Arena.ofShared();
    private final int epfd;
    private final int timerFd;
    private final EventFd wake = new EventFd("EpollWaiter wakeup");
    private final MemorySegment events;
    private final MemorySegment waitCapture;
    private final MemorySegment timerBuffer;
    private final MemorySegment timerCapture;
    private final MemorySegment timerSpec;
    private final MemorySegment controlEvent;
    private final MemorySegment controlCapture;
    private final int[] ready = new int[MAX_EVENTS];
    private final Map<EventSource, Integer> fds = new IdentityHashMap<>();
    private volatile long wakeups;
    private boolean closed;

    public EpollWaiter() {
        try {
            this.events = arena.allocate((long) NativeLayout.EPOLL_EVENT_SIZE * MAX_EVENTS, 8);
            this.waitCapture = Libc.allocateCapture(arena);
            this.timerBuffer = arena.allocate(8, 8);
            this.timerCapture = Libc.allocateCapture(arena);
            this.timerSpec = arena.allocate(NativeLayout.ITIMERSPEC_SIZE, 8);
            this.controlEvent = arena.allocate(NativeLayout.EPOLL_EVENT_SIZE, 8);
            this.controlCapture = Libc.allocateCapture(arena);
            this.epfd = (int) Libc.EPOLL_CREATE1.invokeExact(controlCapture, NativeLayout.EPOLL_CLOEXEC);
            if (epfd < 0) throw Rdma.failure("epoll_create1", Libc.errno(controlCapture));
            this.timerFd = (int) Libc.TIMERFD_CREATE.invokeExact(controlCapture, NativeLayout.CLOCK_MONOTONIC,
                    NativeLayout.TFD_NONBLOCK | NativeLayout.TFD_CLOEXEC);
            if (timerFd < 0) {
                int errno = Libc.errno(controlCapture);
                Libc.close(epfd);
                throw Rdma.failure("timerfd_create", errno);
            }
            control(NativeLayout.EPOLL_CTL_ADD, timerFd, TIMER, "the timer");
            control(NativeLayout.EPOLL_CTL_ADD, wake.fd(), WAKEUP, "the wakeup");
        } catch (RuntimeException | Error e) {
            wake.close();
            arena.close();
            throw e;
        } catch (Throwable t) {
            wake.close();
            arena.close();
            throw new IllegalStateException(t);
        }
    }

    private void control(int op, int fd, int token, String what) {
        controlEvent.set(JAVA_INT_UNALIGNED, NativeLayout.EPOLL_EVENT_EVENTS, NativeLayout.EPOLLIN);
        controlEvent.set(JAVA_LONG_UNALIGNED, NativeLayout.EPOLL_EVENT_DATA, token);
        int rc;
        try {
            rc = (int) Libc.EPOLL_CTL.invokeExact(controlCapture, epfd, op, fd, controlEvent);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (rc < 0) throw Rdma.failure("epoll_ctl(" + (op == NativeLayout.EPOLL_CTL_ADD ? "ADD" : "DEL") + ") of "
                + what + " (fd " + fd + ")", Libc.errno(controlCapture));
    }

    @Override
    public synchronized void add(EventSource source, int token) {
        if (closed) throw new VerbsException("epoll_ctl", "waiter closed");
        if (token < 0) throw new IllegalArgumentException("tokens are 0 or more (negative ones are TIMER, WAKEUP): " + token);
        if (fds.containsKey(source)) throw new IllegalArgumentException("already watched: " + source);
        int fd = source.readinessFd();
        if (fd < 0) throw new IllegalArgumentException(source + " has no readiness fd");
        control(NativeLayout.EPOLL_CTL_ADD, fd, token, String.valueOf(source));
        fds.put(source, fd);
    }

    @Override
    public synchronized void remove(EventSource source) {
        Integer fd = fds.remove(source);
        if (fd == null || closed) return;
        try {
            control(NativeLayout.EPOLL_CTL_DEL, fd, 0, String.valueOf(source));
        } catch (VerbsException e) {
            // Already gone from the set (its fd was closed first): nothing left to remove.
            if (e.errno() != NativeLayout.EBADF && e.errno() != NativeLayout.ENOENT) throw e;
        }
    }

    @Override
    public void timerAt(long deadlineNanos) {
        long left = deadlineNanos - System.nanoTime();
        // it_value 0 would disarm: a deadline now or in the past expires in one nanosecond.
        setTimer(Math.max(1, left));
    }

    @Override
    public void cancelTimer() { setTimer(0); }

    private void setTimer(long relativeNanos) {
        synchronized (timerSpec) {
            if (closed) return;
            long value = NativeLayout.ITIMERSPEC_VALUE;
            timerSpec.set(JAVA_LONG, NativeLayout.ITIMERSPEC_INTERVAL + NativeLayout.TIMESPEC_SEC, 0L);
            timerSpec.set(JAVA_LONG, NativeLayout.ITIMERSPEC_INTERVAL + NativeLayout.TIMESPEC_NSEC, 0L);
            timerSpec.set(JAVA_LONG, value + NativeLayout.TIMESPEC_SEC, relativeNanos / 1_000_000_000L);
            timerSpec.set(JAVA_LONG, value + NativeLayout.TIMESPEC_NSEC, relativeNanos % 1_000_000_000L);
            int rc;
            try {
                rc = (int) Libc.TIMERFD_SETTIME.invokeExact(timerCapture, timerFd, 0, timerSpec, MemorySegment.NULL);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (rc < 0) throw Rdma.failure("timerfd_settime", Libc.errno(timerCapture));
        }
    }

    @Override
    public int await(long timeoutMillis) {
        int timeout = timeoutMillis < 0 ? -1 : (int) Math.min(timeoutMillis, Integer.MAX_VALUE);
        int n;
        try {
            n = (int) Libc.EPOLL_WAIT.invokeExact(waitCapture, epfd, events, MAX_EVENTS, timeout);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        wakeups++;
        if (n < 0) {
            int errno = Libc.errno(waitCapture);
            return errno == NativeLayout.EINTR ? 0 : -errno;
        }
        int count = 0;
        for (int i = 0; i < n; i++) {
            int token = (int) events.get(JAVA_LONG_UNALIGNED,
                    (long) i * NativeLayout.EPOLL_EVENT_SIZE + NativeLayout.EPOLL_EVENT_DATA);
            if (token == TIMER) {
                // Consume the expiry; none left means the timer was re-armed or cancelled after it fired.
                if (!consumeTimer()) continue;
            } else if (token == WAKEUP) {
                wake.clear();
            }
            ready[count++] = token;
        }
        return count;
    }

    private boolean consumeTimer() {
        synchronized (timerSpec) {
            try {
                return (long) Libc.READ.invokeExact(timerCapture, timerFd, timerBuffer, 8L) == 8L;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }
    }

    @Override
    public int ready(int index) { return ready[index]; }

    @Override
    public void wakeup() { wake.signal(); }

    @Override
    public long wakeups() { return wakeups; }

    @Override
    public void close() {
        synchronized (this) {
            synchronized (timerSpec) {
                if (closed) return;
                closed = true;
                fds.clear();
                Libc.close(timerFd);
                Libc.close(epfd);
            }
        }
        wake.close();
        arena.close();
    }
}
