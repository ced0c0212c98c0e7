package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.ConnectionParameters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.ConcurrentHashMap;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * An rdma_event_channel. Its fd is made non-blocking; {@link #pollEvent} polls it (with a wakeup eventfd) and
 * then calls rdma_get_cm_event. Every rdma_cm_id created on the channel, or announced by a CONNECT_REQUEST,
 * maps from its native pointer to one {@link FfmCmId}, so events name the same Java object.
 */
final class FfmEventChannel implements CmEventChannel {
    private final FfmProvider provider;
    private final Rdma rdma;
    private final MemorySegment channel;
    private final int fd;
    private final FdWaiter waiter;
    private final ConcurrentHashMap<Long, FfmCmId> ids = new ConcurrentHashMap<>();
    private final Object pollLock = new Object();
    private final MemorySegment eventOut = Arena.ofAuto().allocate(ADDRESS);
    private boolean closed;

    FfmEventChannel(FfmProvider provider) {
        this.provider = provider;
        this.rdma = provider.rdma();
        this.channel = rdma.pointer("rdma_create_event_channel").reinterpret(NativeLayout.RDMA_EVENT_CHANNEL_SIZE);
        this.fd = channel.get(JAVA_INT, NativeLayout.RDMA_EVENT_CHANNEL_FD);
        try {
            Libc.setNonBlocking(fd, "rdma_event_channel");
            this.waiter = new FdWaiter(fd, "rdma_event_channel");
        } catch (RuntimeException e) {
            rdma.run("rdma_destroy_event_channel", channel);
            throw e;
        }
    }

    FfmProvider provider() { return provider; }

    Rdma rdma() { return rdma; }

    void forget(FfmCmId id) { ids.remove(id.address(), id); }

    @Override
    public CmId createId(Object context) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            rdma.check("rdma_create_id", channel, out, MemorySegment.NULL, NativeLayout.RDMA_PS_TCP);
            MemorySegment id = out.get(ADDRESS, 0);
            FfmCmId cmId = new FfmCmId(this, id, context);
            ids.put(id.address(), cmId);
            return cmId;
        }
    }

    @Override
    public CmEvent pollEvent(long timeoutMillis) {
        synchronized (pollLock) {
            Deadline deadline = new Deadline(timeoutMillis);
            while (true) {
                Rdma.Outcome o = rdma.invoke("rdma_get_cm_event", channel, eventOut);
                if (o.value() == 0) break;
                int errno = Rdma.errnoOf(o);
                if (errno != NativeLayout.EAGAIN && errno != NativeLayout.EINTR) {
                    throw Rdma.failure("rdma_get_cm_event", errno);
                }
                if (!deadline.await(waiter)) return null;
            }
            return copy(eventOut.get(ADDRESS, 0).reinterpret(NativeLayout.RDMA_CM_EVENT_SIZE));
        }
    }

    private CmEvent copy(MemorySegment event) {
        CmEventType type = CmEventType.of(event.get(JAVA_INT, NativeLayout.RDMA_CM_EVENT_EVENT));
        int status = event.get(JAVA_INT, NativeLayout.RDMA_CM_EVENT_STATUS);
        long idAddress = event.get(ADDRESS, NativeLayout.RDMA_CM_EVENT_ID).address();
        long listenAddress = event.get(ADDRESS, NativeLayout.RDMA_CM_EVENT_LISTEN_ID).address();
        FfmCmId listener = listenAddress == 0 ? null : ids.get(listenAddress);
        FfmCmId id;
        if (type == CmEventType.CONNECT_REQUEST) {
            // librdmacm created a new id for the incoming connection; it inherits the listener's context.
            id = new FfmCmId(this, MemorySegment.ofAddress(idAddress), listener == null ? null : listener.context());
            ids.put(idAddress, id);
        } else {
            id = ids.computeIfAbsent(idAddress, a -> new FfmCmId(this, MemorySegment.ofAddress(a), null));
        }
        if (type == CmEventType.DEVICE_REMOVAL && id.device() instanceof FfmDevice d) {
            // The consumer must now destroy everything on the device; ids created from here on belong to whatever
            // device comes back, never to this one.
            d.removed(provider.nextSequence());
            provider.removalReported();
        }
        ConnectionParameters parameters = switch (type) {
            case CONNECT_REQUEST, CONNECT_RESPONSE, ESTABLISHED, REJECTED -> connectionParameters(event);
            default -> null;
        };
        return new FfmCmEvent(rdma, event, type, status, id, listener, parameters);
    }

    private static ConnectionParameters connectionParameters(MemorySegment event) {
        int base = NativeLayout.RDMA_CM_EVENT_PARAM_CONN;
        MemorySegment data = event.get(ADDRESS, base + NativeLayout.RDMA_CONN_PARAM_PRIVATE_DATA);
        int length = u8(event, base + NativeLayout.RDMA_CONN_PARAM_PRIVATE_DATA_LEN);
        byte[] bytes = data.equals(MemorySegment.NULL) || length == 0
                ? new byte[0] : data.reinterpret(length).toArray(JAVA_BYTE);
        return new ConnectionParameters(bytes,
                u8(event, base + NativeLayout.RDMA_CONN_PARAM_RESPONDER_RESOURCES),
                u8(event, base + NativeLayout.RDMA_CONN_PARAM_INITIATOR_DEPTH),
                u8(event, base + NativeLayout.RDMA_CONN_PARAM_FLOW_CONTROL),
                u8(event, base + NativeLayout.RDMA_CONN_PARAM_RETRY_COUNT),
                u8(event, base + NativeLayout.RDMA_CONN_PARAM_RNR_RETRY_COUNT),
                u8(event, base + NativeLayout.RDMA_CONN_PARAM_SRQ) != 0,
                event.get(JAVA_INT, base + NativeLayout.RDMA_CONN_PARAM_QP_NUM));
    }

    private static int u8(MemorySegment s, long offset) {
        return Byte.toUnsignedInt(s.get(JAVA_BYTE, offset));
    }

    @Override
    public void wakeup() { waiter.wakeup(); }

    @Override
    public int fd() { return fd; }

    /** The channel's own fd: the kernel makes it readable while CM events are queued. */
    @Override
    public int readinessFd() { return fd; }

    /** Destroys the channel; every id on it must have been closed (librdmacm requires it). */
    @Override
    public void close() {
        synchronized (pollLock) {
            if (closed) return;
            closed = true;
            waiter.close();
            rdma.run("rdma_destroy_event_channel", channel);
        }
    }
}
