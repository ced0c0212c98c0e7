package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/** An ibv_context: opened by name (owned, closed by close()) or librdmacm's (owned by the CM, close() ignored). */
final class FfmDevice implements Device {
    private final FfmProvider provider;
    private final MemorySegment context;
    private final String name;
    private final boolean owned;
    private final Object asyncLock = new Object();
    private FdWaiter asyncWaiter;
    private MemorySegment asyncEvent;
    private volatile boolean closed;
    /** The CQs created on this context, by native address: CQ_ERR names its CQ by pointer. */
    private final java.util.concurrent.ConcurrentHashMap<Long, FfmCompletionQueue> cqs =
            new java.util.concurrent.ConcurrentHashMap<>();
    /** Set when the CM reported DEVICE_REMOVAL for an id on this context (see FfmProvider.deviceFor). */
    private volatile long removedAt = -1;

    FfmDevice(FfmProvider provider, MemorySegment context, String name, boolean owned) {
        this.provider = provider;
        this.context = context.reinterpret(NativeLayout.IBV_CONTEXT_SIZE);
        this.name = name;
        this.owned = owned;
    }

    MemorySegment context() { return context; }

    boolean owned() { return owned; }

    Rdma rdma() { return provider.rdma(); }

    @Override
    public String name() { return name; }

    @Override
    public DeviceAttributes attributes() {
        return DeviceQuery.queryDevice(rdma(), context);
    }

    @Override
    public ProtectionDomain allocProtectionDomain() {
        return new FfmProtectionDomain(this, rdma().pointer("ibv_alloc_pd", context));
    }

    @Override
    public CompletionChannel createCompletionChannel() {
        return new FfmCompletionChannel(this, rdma().pointer("ibv_create_comp_channel", context));
    }

    @Override
    public CompletionQueue createCompletionQueue(int minEntries, CompletionChannel channel) {
        FfmCompletionChannel ch = (FfmCompletionChannel) channel;
        MemorySegment cq = rdma().pointer("ibv_create_cq", context, minEntries, MemorySegment.NULL,
                ch == null ? MemorySegment.NULL : ch.channel(), 0);
        FfmCompletionQueue queue = new FfmCompletionQueue(this, cq, ch);
        if (ch != null) ch.register(queue);
        cqs.put(queue.address(), queue);
        return queue;
    }

    void forget(FfmCompletionQueue cq) { cqs.remove(cq.address(), cq); }

    /** Marks the context as removed by the CM at provider sequence {@code sequence} (first mark wins). */
    void removed(long sequence) {
        if (removedAt < 0) removedAt = sequence;
    }

    /** The provider sequence at which the CM reported the device removed, or -1. */
    long removedAt() { return removedAt; }

    /**
     * Reads the next event from the context's async_fd (made non-blocking once), copies it and acknowledges it
     * before returning. What the event is about is read while the event still pins it (ibv_get_async_event(3)):
     * the QP number for QP events, the port number for port events, the CQ (one of this context's) for CQ_ERR.
     */
    @Override
    public AsyncEvent pollAsyncEvent(long timeoutMillis) {
        synchronized (asyncLock) {
            prepareAsync();
            Deadline deadline = new Deadline(timeoutMillis);
            while (true) {
                Rdma.Outcome o = rdma().invoke("ibv_get_async_event", context, asyncEvent);
                if (o.value() == 0) break;
                int errno = Rdma.errnoOf(o);
                if (errno != NativeLayout.EAGAIN && errno != NativeLayout.EINTR) {
                    throw Rdma.failure("ibv_get_async_event", errno);
                }
                if (!deadline.await(asyncWaiter)) return null;
            }
            AsyncEvent event = copy(asyncEvent);
            rdma().run("ibv_ack_async_event", asyncEvent);
            return event;
        }
    }

    private AsyncEvent copy(MemorySegment e) {
        AsyncEvent.Type type = AsyncEvent.Type.of(e.get(JAVA_INT, NativeLayout.IBV_ASYNC_EVENT_EVENT_TYPE));
        switch (type.affiliation()) {
            case QP -> {
                MemorySegment qp = e.get(ADDRESS, NativeLayout.IBV_ASYNC_EVENT_ELEMENT);
                int qpNum = qp.equals(MemorySegment.NULL) ? -1
                        : qp.reinterpret(NativeLayout.IBV_QP_SIZE).get(JAVA_INT, NativeLayout.IBV_QP_QP_NUM);
                return new AsyncEvent(type, qpNum);
            }
            case CQ -> {
                long cq = e.get(ADDRESS, NativeLayout.IBV_ASYNC_EVENT_ELEMENT_CQ).address();
                return AsyncEvent.ofCompletionQueue(type, cqs.get(cq));
            }
            case PORT -> {
                return AsyncEvent.ofPort(type, e.get(JAVA_INT, NativeLayout.IBV_ASYNC_EVENT_ELEMENT_PORT_NUM));
            }
            default -> {
                return AsyncEvent.ofDevice(type);
            }
        }
    }

    /** The context's async_fd (made non-blocking): readable while asynchronous events are queued. */
    @Override
    public int readinessFd() {
        synchronized (asyncLock) {
            prepareAsync();
            return asyncWaiter.fd();
        }
    }

    private void prepareAsync() {
        if (asyncWaiter == null) {
            int fd = context.get(JAVA_INT, NativeLayout.IBV_CONTEXT_ASYNC_FD);
            Libc.setNonBlocking(fd, name + " async_fd");
            asyncWaiter = new FdWaiter(fd, name + " async_fd");
            asyncEvent = Arena.ofAuto().allocate(NativeLayout.IBV_ASYNC_EVENT_SIZE, 8);
        }
    }

    @Override
    public void close() {
        if (!owned || closed) return;
        closed = true;
        synchronized (asyncLock) {
            if (asyncWaiter != null) asyncWaiter.close();
        }
        provider.forget(this);
        rdma().check("ibv_close_device", context);
    }

    @Override
    public String toString() { return "FfmDevice[" + name + "]"; }
}
