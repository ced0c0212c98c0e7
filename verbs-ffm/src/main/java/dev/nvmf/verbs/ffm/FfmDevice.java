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
        return queue;
    }

    /**
     * Reads the next event from the context's async_fd (made non-blocking once), copies it and acknowledges it
     * before returning. QP events report the QP number, read while the event still pins the QP.
     */
    @Override
    public AsyncEvent pollAsyncEvent(long timeoutMillis) {
        synchronized (asyncLock) {
            if (asyncWaiter == null) {
                int fd = context.get(JAVA_INT, NativeLayout.IBV_CONTEXT_ASYNC_FD);
                Libc.setNonBlocking(fd, name + " async_fd");
                asyncWaiter = new FdWaiter(fd, name + " async_fd");
                asyncEvent = Arena.ofAuto().allocate(NativeLayout.IBV_ASYNC_EVENT_SIZE, 8);
            }
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
            int type = asyncEvent.get(JAVA_INT, NativeLayout.IBV_ASYNC_EVENT_EVENT_TYPE);
            int qpNum = -1;
            if (isQpEvent(type)) {
                MemorySegment qp = asyncEvent.get(ADDRESS, NativeLayout.IBV_ASYNC_EVENT_ELEMENT);
                if (!qp.equals(MemorySegment.NULL)) {
                    qpNum = qp.reinterpret(NativeLayout.IBV_QP_SIZE).get(JAVA_INT, NativeLayout.IBV_QP_QP_NUM);
                }
            }
            rdma().run("ibv_ack_async_event", asyncEvent);
            return new AsyncEvent(AsyncEvent.Type.of(type), qpNum);
        }
    }

    private static boolean isQpEvent(int type) {
        return type == NativeLayout.IBV_EVENT_QP_FATAL || type == NativeLayout.IBV_EVENT_QP_REQ_ERR
                || type == NativeLayout.IBV_EVENT_QP_ACCESS_ERR || type == NativeLayout.IBV_EVENT_COMM_EST
                || type == NativeLayout.IBV_EVENT_SQ_DRAINED || type == NativeLayout.IBV_EVENT_PATH_MIG
                || type == NativeLayout.IBV_EVENT_PATH_MIG_ERR || type == NativeLayout.IBV_EVENT_QP_LAST_WQE_REACHED;
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
