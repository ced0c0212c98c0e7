package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * An ibv_comp_channel. {@link #awaitEvent} polls the channel fd together with an eventfd ({@link #wakeup()}),
 * then reads the event (ibv_get_cq_event, on a non-blocking fd) and acknowledges it at once
 * (ibv_ack_cq_events), so destroying the CQ never waits for us. Buffers are preallocated: awaiting allocates
 * nothing on the Java heap.
 */
final class FfmCompletionChannel implements CompletionChannel {
    private final FfmDevice device;
    private final MemorySegment channel;
    private final int fd;
    private final FdWaiter waiter;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment cqOut;
    private final MemorySegment contextOut;
    private final MemorySegment capture;
    private final MethodHandle getCqEvent;
    private final MethodHandle ackCqEvents;
    private volatile FfmCompletionQueue[] queues = new FfmCompletionQueue[0];
    private FfmCompletionQueue eventQueue;
    private boolean closed;

    FfmCompletionChannel(FfmDevice device, MemorySegment channel) {
        this.device = device;
        this.channel = channel.reinterpret(NativeLayout.IBV_COMP_CHANNEL_SIZE);
        this.fd = this.channel.get(JAVA_INT, NativeLayout.IBV_COMP_CHANNEL_FD);
        Libc.setNonBlocking(fd, "ibv_comp_channel");
        this.waiter = new FdWaiter(fd, "ibv_comp_channel");
        this.cqOut = arena.allocate(ADDRESS);
        this.contextOut = arena.allocate(ADDRESS);
        this.capture = Libc.allocateCapture(arena);
        this.getCqEvent = device.rdma().handle("ibv_get_cq_event");
        this.ackCqEvents = device.rdma().handle("ibv_ack_cq_events");
    }

    MemorySegment channel() { return channel; }

    synchronized void register(FfmCompletionQueue cq) {
        FfmCompletionQueue[] q = Arrays.copyOf(queues, queues.length + 1);
        q[q.length - 1] = cq;
        queues = q;
    }

    synchronized void unregister(FfmCompletionQueue cq) {
        queues = Arrays.stream(queues).filter(q -> q != cq).toArray(FfmCompletionQueue[]::new);
    }

    @Override
    public int fd() { return fd; }

    @Override
    public int readinessFd() { return fd; }

    @Override
    public CompletionQueue awaitEvent(long timeoutMillis) {
        int rc = nextEvent(timeoutMillis);
        if (rc == EVENT) return eventQueue;
        if (rc < 0) throw Rdma.failure("ibv_get_cq_event", -rc);
        return null;
    }

    /**
     * ibv_get_cq_event on the non-blocking fd; EAGAIN means "nothing yet": wait for the fd (or a wakeup) and try
     * again. Any other failure (the device was removed or died: the kernel fails the read) is returned as -errno.
     */
    @Override
    public int nextEvent(long timeoutMillis) {
        long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : 0;
        while (true) {
            int rc;
            try {
                rc = (int) getCqEvent.invokeExact(capture, channel, cqOut, contextOut);
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
            if (rc == 0) break;
            int errno = Libc.errno(capture);
            if (errno != NativeLayout.EAGAIN && errno != NativeLayout.EINTR) return -(errno == 0 ? NativeLayout.EIO : errno);
            long wait;
            if (timeoutMillis == 0) return 0;
            if (timeoutMillis < 0) {
                wait = -1;
            } else {
                long left = deadline - System.nanoTime();
                if (left <= 0) return 0;
                wait = Math.max(1, (left + 999_999) / 1_000_000);
            }
            FdWaiter.Result r = waiter.await(wait);
            if (r == FdWaiter.Result.WOKEN) return 0;
            if (r == FdWaiter.Result.FAILED) return -waiter.errno();
        }
        MemorySegment cq = cqOut.get(ADDRESS, 0);
        try {
            ackCqEvents.invokeExact(capture, cq, 1);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        long address = cq.address();
        FfmCompletionQueue[] q = queues;
        for (int i = 0; i < q.length; i++) {
            if (q[i].address() == address) {
                eventQueue = q[i];
                return EVENT;
            }
        }
        throw new IllegalStateException("event for a CQ not created on this channel: 0x" + Long.toHexString(address));
    }

    @Override
    public CompletionQueue eventQueue() { return eventQueue; }

    @Override
    public void wakeup() { waiter.wakeup(); }

    @Override
    public synchronized void close() {
        if (closed) return;
        device.rdma().check("ibv_destroy_comp_channel", channel);
        closed = true;
        waiter.close();
    }
}
