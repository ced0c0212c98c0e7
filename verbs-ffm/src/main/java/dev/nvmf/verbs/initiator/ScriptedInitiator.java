package dev.nvmf.verbs.initiator;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.MemoryWindow;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.WrOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * A small scriptable RDMA initiator on the provider-neutral API: it connects to an address with chosen private
 * data and connection parameters, sends raw capsules (bytes, optionally followed by in-capsule data), exposes
 * registered host buffers with rkeys for the target to RDMA READ or WRITE, and collects raw responses (bytes and
 * whether the SEND invalidated an rkey). It deals in bytes only: nothing NVMe-specific.
 *
 * <p>Host buffers carry keys the target may invalidate with SEND_WITH_INV, like the Linux host's fast-registration
 * keys: by default each buffer's rkey is a type-2 memory window bound over it on this side's QP (a region's own
 * rkey cannot be invalidated remotely: rxe and hardware fail the receive and the QP). {@link HostKey#REGION}
 * exposes the region's rkey instead, for tests of targets that must not invalidate.
 *
 * <p>It can misbehave on purpose: send more capsules than the target granted, disconnect mid-I/O, never post
 * receives ({@link Options#postReceives} false), or post them later ({@link #postReceives(int)}).
 *
 * <p>Two ways to use it. Scripts send byte arrays ({@link #sendCapsule}) and take copies of what arrives
 * ({@link #pollResponse}, {@link #awaitResponse}, {@link #sendCompletions}). A hot loop (a benchmark, a test that
 * counts allocations) allocates nothing once connected: it writes capsules in place into a send slot
 * ({@link #sendBuffer}, {@link #send(int, int)}) and is handed each message in the receive buffer itself through
 * its own {@link Listener}.
 *
 * <p>Driving: {@link #doWork()} handles whatever is ready without blocking (CM events, completions), for tests that
 * step a manual fabric; the {@code await...} helpers loop doWork and block in the provider between rounds.
 * Single-threaded: call it from one thread.
 */
public final class ScriptedInitiator implements AutoCloseable {
    /** Where the connection stands. */
    public enum State { IDLE, RESOLVING, CONNECTING, CONNECTED, REJECTED, FAILED, DISCONNECTED, CLOSED }

    /**
     * What to connect with.
     *
     * @param source             local address, or null to let the CM choose
     * @param destination        the target's address
     * @param privateData        CONNECT_REQUEST private data
     * @param responderResources RDMA READs this side accepts as responder
     * @param initiatorDepth     RDMA READs this side issues
     * @param retryCount         transport retries
     * @param rnrRetryCount      how often the target retries a SEND this side is not ready for (7 = forever)
     * @param sendDepth          send slots (and max_send_wr)
     * @param recvDepth          receive buffers (and max_recv_wr)
     * @param recvBufferSize     bytes per receive buffer
     * @param sendBufferSize     bytes per send slot (capsule + in-capsule data)
     * @param postReceives       post the receive buffers before connecting (false = never, until postReceives(n))
     * @param repostReceives     repost a receive buffer once its response was taken
     * @param timeoutMillis      resolve timeouts given to the CM
     */
    public record Options(InetSocketAddress source, InetSocketAddress destination, byte[] privateData,
                          int responderResources, int initiatorDepth, int retryCount, int rnrRetryCount,
                          int sendDepth, int recvDepth, int recvBufferSize, int sendBufferSize,
                          boolean postReceives, boolean repostReceives, int timeoutMillis) {
        public Options {
            privateData = privateData == null ? new byte[0] : privateData.clone();
        }

        /** Defaults: 32 send slots and receives of 4 KiB + 64, rnr 7, retry 7, depths 16, no private data. */
        public static Options to(InetSocketAddress destination) {
            return new Options(null, destination, new byte[0], 16, 16, 7, 7, 32, 32, 4160, 8192, true, true, 2000);
        }

        public Options source(InetSocketAddress v) {
            return new Options(v, destination, privateData, responderResources, initiatorDepth, retryCount,
                    rnrRetryCount, sendDepth, recvDepth, recvBufferSize, sendBufferSize, postReceives, repostReceives, timeoutMillis);
        }

        public Options privateData(byte[] v) {
            return new Options(source, destination, v, responderResources, initiatorDepth, retryCount,
                    rnrRetryCount, sendDepth, recvDepth, recvBufferSize, sendBufferSize, postReceives, repostReceives, timeoutMillis);
        }

        public Options rdmaDepths(int responder, int initiator) {
            return new Options(source, destination, privateData, responder, initiator, retryCount,
                    rnrRetryCount, sendDepth, recvDepth, recvBufferSize, sendBufferSize, postReceives, repostReceives, timeoutMillis);
        }

        public Options retries(int retry, int rnrRetry) {
            return new Options(source, destination, privateData, responderResources, initiatorDepth, retry,
                    rnrRetry, sendDepth, recvDepth, recvBufferSize, sendBufferSize, postReceives, repostReceives, timeoutMillis);
        }

        public Options depths(int send, int recv) {
            return new Options(source, destination, privateData, responderResources, initiatorDepth, retryCount,
                    rnrRetryCount, send, recv, recvBufferSize, sendBufferSize, postReceives, repostReceives, timeoutMillis);
        }

        public Options bufferSizes(int recv, int send) {
            return new Options(source, destination, privateData, responderResources, initiatorDepth, retryCount,
                    rnrRetryCount, sendDepth, recvDepth, recv, send, postReceives, repostReceives, timeoutMillis);
        }

        public Options receives(boolean post, boolean repost) {
            return new Options(source, destination, privateData, responderResources, initiatorDepth, retryCount,
                    rnrRetryCount, sendDepth, recvDepth, recvBufferSize, sendBufferSize, post, repost, timeoutMillis);
        }
    }

    /**
     * A received message.
     *
     * @param data            the bytes received (byte_len of the completion)
     * @param withInvalidate  the SEND carried an invalidate (IBV_WC_WITH_INV)
     * @param invalidatedRkey the rkey it invalidated (valid when withInvalidate)
     */
    public record Response(byte[] data, boolean withInvalidate, int invalidatedRkey) {}

    /** What rkey a host buffer is exposed with. */
    public enum HostKey {
        /**
         * A type-2 memory window bound over the buffer (BIND_MW on this side's QP, posted before anything that
         * advertises the key): the target may invalidate it with SEND_WITH_INV. The default.
         */
        WINDOW,
        /** The registered region's own rkey: usable for RDMA READ/WRITE, but not remotely invalidatable. */
        REGION
    }

    /** A completion of this side's own work, for assertions (status names via WcStatus.name). */
    public record Completion(long wrId, int status, int opcode, int byteLen) {
        @Override
        public String toString() { return "wr " + wrId + " " + WcStatus.name(status) + " opcode " + opcode; }
    }

    /**
     * Where what arrives goes, on the thread that calls {@link #doWork()}. The default one keeps copies for
     * {@link #pollResponse}, {@link #awaitResponse} and {@link #sendCompletions}; one set with
     * {@link #listener(Listener)} takes them instead (and those then see nothing).
     */
    public interface Listener {
        /**
         * A message arrived: {@code length} bytes at the start of {@code buffer}, valid only during the call (the
         * buffer is posted again after it).
         */
        void onMessage(MemorySegment buffer, int length, boolean withInvalidate, int invalidatedRkey);

        /** The SEND of send slot {@code slot} completed (its slot is free again). */
        void onSendCompletion(int slot, int status);
    }

    /**
     * A registered host buffer the target may RDMA READ from or WRITE to, through {@link #rkey()}. close() frees
     * its window (if any) and deregisters it.
     */
    public final class HostBuffer implements AutoCloseable {
        private final MemorySegment memory;
        private final MemoryRegion mr;
        private final MemoryWindow window;
        /** The bind's completion status once polled (-1 before; always SUCCESS for a REGION key). */
        private int bindStatus;

        private HostBuffer(MemorySegment memory, MemoryRegion mr, MemoryWindow window) {
            this.memory = memory;
            this.mr = mr;
            this.window = window;
            this.bindStatus = window == null ? WcStatus.SUCCESS : -1;
        }

        public MemorySegment memory() { return memory; }

        public long address() { return mr.address(); }

        public int length() { return (int) memory.byteSize(); }

        /** The key the target uses: the window's (invalidatable) or, for {@link HostKey#REGION}, the region's. */
        public int rkey() { return window != null ? window.rkey() : mr.rkey(); }

        /** Whether the target may invalidate {@link #rkey()} with SEND_WITH_INV (a window key). */
        public boolean invalidatable() { return window != null; }

        /**
         * Whether the key is known to work: the window's bind completed successfully (a region key always works).
         * Anything posted on this side's QP after exposeBuffer already follows the bind; a test that hands the key
         * to the target some other way can wait for this with {@link #await}.
         */
        public boolean keyReady() { return bindStatus == WcStatus.SUCCESS; }

        /** The window bind's completion status, or -1 while it is outstanding. */
        public int bindStatus() { return bindStatus; }

        public byte[] read() { return memory.toArray(JAVA_BYTE); }

        public HostBuffer write(byte[] data) {
            MemorySegment.copy(MemorySegment.ofArray(data), 0, memory, 0, data.length);
            return this;
        }

        @Override
        public void close() {
            if (!buffers.remove(this)) return;
            if (window != null) window.close();   // first: a region under a bound window cannot be deregistered
            mr.close();
        }
    }

    private static final long SEND_WR_BASE = 1L << 32;
    /** wr_ids of BIND_MW requests: BIND_WR_BASE + sequence. */
    private static final long BIND_WR_BASE = 2L << 32;
    /**
     * rxe (Linux 6.1) flags a receive that invalidated a key with the kernel's IB_WC_WITH_INVALIDATE (1 << 2),
     * copied unchanged into the user-mapped CQE, instead of IBV_WC_WITH_INV (1 << 3). Taken as an invalidation
     * only when the reported key is one of this side's window keys.
     */
    private static final int RXE_KERNEL_WITH_INVALIDATE = 1 << 2;
    /** Send-queue slots beyond sendDepth kept for window binds (each held until its completion is polled). */
    static final int BIND_SLOTS = 16;

    private final RdmaProvider provider;
    private final Options options;
    private final Arena arena = Arena.ofShared();
    private State state = State.IDLE;
    private CmEventChannel events;
    private CmId id;
    private Device device;
    private ProtectionDomain pd;
    private CompletionChannel compChannel;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemorySegment slab;
    private MemoryRegion slabMr;
    private final List<HostBuffer> buffers = new ArrayList<>();
    private final java.util.Map<Long, HostBuffer> bindsOutstanding = new java.util.HashMap<>();
    private long nextBind;
    private final SendWorkRequest bindWr;
    private final List<Completion> bindErrors = new ArrayList<>();
    private final WorkCompletion wc;
    private final SendWorkRequest sendWr;
    private final ScatterGatherEntry sge;
    /** Per receive slot: its buffer and its prebuilt receive work request (set up with the QP). */
    private MemorySegment[] recvBuffers = new MemorySegment[0];
    private RecvWorkRequest[] recvWrs = new RecvWorkRequest[0];
    private MemorySegment[] sendBuffers = new MemorySegment[0];
    private final boolean[] sendSlotBusy;
    private int nextSendSlot;
    private int outstandingSends;
    private int postedRecvs;
    private long receivesOwed;
    private final ArrayDeque<Integer> freeRecvSlots = new ArrayDeque<>();
    private final ArrayDeque<Response> responses = new ArrayDeque<>();
    private final List<Completion> sendCompletions = new ArrayList<>();
    private Listener listener = new Recorder();
    private final List<Completion> recvErrors = new ArrayList<>();
    private final List<CmEventType> cmEvents = new ArrayList<>();
    private byte[] acceptPrivateData;
    private byte[] rejectPrivateData;
    private int lastEventStatus;

    public ScriptedInitiator(RdmaProvider provider, Options options) {
        this.provider = provider;
        this.options = options;
        this.wc = WorkCompletion.allocate(arena, 32);
        this.sendWr = SendWorkRequest.allocate(arena);
        this.bindWr = SendWorkRequest.allocate(arena);
        this.sge = ScatterGatherEntry.allocate(arena, 1);
        this.sendSlotBusy = new boolean[options.sendDepth()];
    }

    // ------------------------------------------------------------------------------------------ connection

    /** Starts connecting (resolve address, then route, QP, connect); progress comes from doWork(). */
    public void startConnect() {
        if (state != State.IDLE) throw new IllegalStateException("already " + state);
        events = provider.createEventChannel();
        id = events.createId(this);
        state = State.RESOLVING;
        id.resolveAddress(options.source(), options.destination(), options.timeoutMillis());
    }

    /** Connects and waits (bounded) until CONNECTED, REJECTED or FAILED; returns the state reached. */
    public State connect(long timeoutMillis) {
        startConnect();
        awaitCondition(() -> state != State.RESOLVING && state != State.CONNECTING, timeoutMillis);
        return state;
    }

    public State state() { return state; }

    /** CM event types seen, in order. */
    public List<CmEventType> cmEvents() { return List.copyOf(cmEvents); }

    /** Whether a CM event of {@code type} was seen. */
    public boolean sawEvent(CmEventType type) { return cmEvents.contains(type); }

    /** The status of the last REJECTED / error event (the reject reason, or a negative errno). */
    public int lastEventStatus() { return lastEventStatus; }

    /** Private data of the accept (as carried, padded by the CM), or null before ESTABLISHED. */
    public byte[] acceptPrivateData() { return acceptPrivateData == null ? null : acceptPrivateData.clone(); }

    /** Private data of the reject, or null. */
    public byte[] rejectPrivateData() { return rejectPrivateData == null ? null : rejectPrivateData.clone(); }

    public QueuePair queuePair() { return qp; }

    public CmId cmId() { return id; }

    /** Starts an orderly disconnect (mid-I/O if the test wants); DISCONNECTED follows. */
    public void disconnect() {
        if (id != null && (state == State.CONNECTED || state == State.CONNECTING)) id.disconnect();
    }

    // ------------------------------------------------------------------------------------------ data

    /** Sends a capsule (one SEND); returns 0 or an errno (EAGAIN when every send slot awaits its completion). */
    public int sendCapsule(byte[] capsule) {
        return sendCapsule(capsule, null);
    }

    /** Sends {@code capsule} followed by {@code inCapsuleData} in one SEND. */
    public int sendCapsule(byte[] capsule, byte[] inCapsuleData) {
        int len = capsule.length + (inCapsuleData == null ? 0 : inCapsuleData.length);
        if (len > options.sendBufferSize()) throw new IllegalArgumentException("capsule of " + len + " bytes exceeds the send slot");
        if (qp == null) return Errno.ENOTCONN;
        int slot = freeSendSlot();
        if (slot < 0) return Errno.EAGAIN;
        MemorySegment buf = sendBuffers[slot];
        MemorySegment.copy(MemorySegment.ofArray(capsule), 0, buf, 0, capsule.length);
        if (inCapsuleData != null) {
            MemorySegment.copy(MemorySegment.ofArray(inCapsuleData), 0, buf, capsule.length, inCapsuleData.length);
        }
        return send(slot, len);
    }

    /** A send slot whose SEND is not outstanding (the next in turn), or -1 when every slot awaits its completion. */
    public int freeSendSlot() {
        for (int i = 0; i < sendSlotBusy.length; i++) {
            int s = (nextSendSlot + i) % sendSlotBusy.length;
            if (!sendSlotBusy[s]) return s;
        }
        return -1;
    }

    /** The memory of send slot {@code slot} ({@link Options#sendBufferSize} bytes): write a capsule here. */
    public MemorySegment sendBuffer(int slot) {
        if (qp == null) throw new IllegalStateException("not connected yet");
        return sendBuffers[slot];
    }

    /** Whether send slot {@code slot}'s SEND awaits its completion (its memory must not be written then). */
    public boolean sendBusy(int slot) { return sendSlotBusy[slot]; }

    /**
     * Sends the first {@code length} bytes of send slot {@code slot} in one signaled SEND; returns 0 or an errno
     * (EAGAIN while the slot's previous SEND awaits its completion). Allocates nothing.
     */
    public int send(int slot, int length) {
        if (qp == null) return Errno.ENOTCONN;
        if (sendSlotBusy[slot]) return Errno.EAGAIN;
        sge.set(sendBuffers[slot].address(), length, slabMr.lkey());
        sendWr.wrId(SEND_WR_BASE + slot).next(null).sgList(sge, 1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED);
        int rc = qp.postSend(sendWr);
        if (rc == 0) {
            sendSlotBusy[slot] = true;
            nextSendSlot = (slot + 1) % sendSlotBusy.length;
            outstandingSends++;
        }
        return rc;
    }

    /**
     * Registers a fresh host buffer (new keys each time) the target may read and write, exposed through a
     * memory window the target may invalidate ({@link HostKey#WINDOW}).
     */
    public HostBuffer exposeBuffer(int length) {
        return exposeBuffer(length, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
    }

    /** {@link #exposeBuffer(int)} with chosen {@link Access} flags (the remote ones are what the target gets). */
    public HostBuffer exposeBuffer(int length, int access) {
        return exposeBuffer(length, access, HostKey.WINDOW);
    }

    /**
     * Registers a host buffer exposed with the chosen kind of key. A {@link HostKey#WINDOW} key is bound by a
     * BIND_MW posted on this side's QP, so the connection must be established; the bind is not waited for
     * (whatever is posted after it on the QP follows it; see {@link HostBuffer#keyReady()}).
     *
     * @throws IllegalStateException before the QP exists, or for a window before CONNECTED; or when the bind cannot
     *                               be posted (the errno is in the message)
     */
    public HostBuffer exposeBuffer(int length, int access, HostKey key) {
        if (pd == null) throw new IllegalStateException("not connected yet");
        MemorySegment mem = arena.allocate(length, 4096);
        if (key == HostKey.REGION) {
            HostBuffer b = new HostBuffer(mem, pd.register(mem, access), null);
            buffers.add(b);
            return b;
        }
        if (state != State.CONNECTED) {
            throw new IllegalStateException("a host buffer's window is bound on the QP, which needs the connection ("
                    + state + "); use HostKey.REGION before connecting");
        }
        doWork();   // retire finished binds first: each outstanding one holds a send-queue slot
        if (bindsOutstanding.size() >= BIND_SLOTS) {
            awaitCondition(() -> bindsOutstanding.size() < BIND_SLOTS, 2000);
            if (bindsOutstanding.size() >= BIND_SLOTS) {
                throw new IllegalStateException(BIND_SLOTS + " window binds still outstanding: poll (doWork) first");
            }
        }
        MemoryRegion mr = pd.register(mem, access | Access.MW_BIND);
        MemoryWindow mw;
        try {
            mw = pd.allocateMemoryWindow();
        } catch (VerbsException e) {
            mr.close();
            throw e;
        }
        HostBuffer b = new HostBuffer(mem, mr, mw);
        long wrId = BIND_WR_BASE + nextBind++;
        int rc = mw.bind(qp, bindWr, wrId, SendFlags.SIGNALED, mr, mr.address(), length,
                access & (Access.REMOTE_READ | Access.REMOTE_WRITE | Access.REMOTE_ATOMIC));
        if (rc != 0) {
            mw.close();
            mr.close();
            throw new IllegalStateException("post_send (BIND_MW) failed: errno " + rc);
        }
        bindsOutstanding.put(wrId, b);
        buffers.add(b);
        return b;
    }

    /** Posts {@code n} more receive buffers (those free); returns the errno of the first failing post, or 0. */
    public int postReceives(int n) {
        if (qp == null) return Errno.ENOTCONN;
        for (int i = 0; i < n && !freeRecvSlots.isEmpty(); i++) {
            int slot = freeRecvSlots.peek();
            int rc = postRecv(slot);
            if (rc != 0) return rc;
            freeRecvSlots.poll();
        }
        return 0;
    }

    /** The next response received, or null. */
    public Response pollResponse() {
        doWork();
        return responses.poll();
    }

    /** The first response waiting that {@code which} accepts, taken; or null. */
    public Response pollResponse(Predicate<Response> which) {
        doWork();
        for (Response r : responses) {
            if (which.test(r)) {
                responses.remove(r);
                return r;
            }
        }
        return null;
    }

    /** The responses received and not yet taken, in arrival order. */
    public List<Response> responses() { return List.copyOf(responses); }

    /** Waits (bounded) for the next response; null on timeout. */
    public Response awaitResponse(long timeoutMillis) {
        awaitCondition(() -> !responses.isEmpty(), timeoutMillis);
        return responses.poll();
    }

    /** Replaces the default listener (which keeps copies) with {@code l}: see {@link Listener}. */
    public void listener(Listener l) { this.listener = l; }

    /** Waits (bounded) until {@code condition} holds, doing work in between; true if it holds. */
    public boolean await(BooleanSupplier condition, long timeoutMillis) {
        return awaitCondition(condition, timeoutMillis);
    }

    public int responsesWaiting() { return responses.size(); }

    /** Completions of this side's SENDs (all signaled), in order. */
    public List<Completion> sendCompletions() { return List.copyOf(sendCompletions); }

    /** Window binds that completed in error (flushes included), in order. */
    public List<Completion> bindErrors() { return List.copyOf(bindErrors); }

    /** Window binds posted whose completion has not been polled yet. */
    public int outstandingBinds() { return bindsOutstanding.size(); }

    /** Receive completions in error (flushes included), in order. */
    public List<Completion> receiveErrors() { return List.copyOf(recvErrors); }

    public int outstandingSends() { return outstandingSends; }

    public int postedReceives() { return postedRecvs; }

    // ------------------------------------------------------------------------------------------ work

    /** Handles every ready CM event and completion without blocking; returns how many it handled. */
    public int doWork() {
        return pollCmEvents() + pollCompletions();
    }

    /** Handles every ready CM event without blocking; returns how many. */
    public int pollCmEvents() {
        int n = 0;
        if (events != null) {
            CmEvent e;
            while ((e = events.pollEvent(0)) != null) {
                handle(e);
                n++;
            }
        }
        return n;
    }

    /** Handles every ready completion without blocking (allocation-free with a {@link Listener}); returns how many. */
    public int pollCompletions() {
        int n = 0;
        if (cq != null) {
            int got;
            while ((got = cq.poll(wc)) > 0) {
                for (int i = 0; i < got; i++) handleCompletion(i);
                n += got;
            }
        }
        return n;
    }

    private boolean awaitCondition(BooleanSupplier condition, long timeoutMillis) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            doWork();
            if (condition.getAsBoolean()) return true;
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) return false;
            if (cq != null) {
                cq.requestNotify(false);
                if (doWork() > 0) continue;
                // Completions wake us through the channel; CM events are checked at least every 5 ms.
                compChannel.awaitEvent(Math.min(left, 5));
            } else if (events != null) {
                CmEvent e = events.pollEvent(Math.min(left, 50));
                if (e != null) handle(e);
            } else {
                return false;
            }
        }
    }

    private void handle(CmEvent e) {
        CmEventType type = e.type();
        cmEvents.add(type);
        try {
            switch (type) {
                case ADDR_RESOLVED -> id.resolveRoute(options.timeoutMillis());
                case ROUTE_RESOLVED -> {
                    setUp();
                    state = State.CONNECTING;
                    id.connect(new ConnectionParameters(options.privateData(), options.responderResources(),
                            options.initiatorDepth(), 1, options.retryCount(), options.rnrRetryCount(), false, 0));
                }
                case ESTABLISHED, CONNECT_RESPONSE -> {
                    acceptPrivateData = e.parameters() == null ? new byte[0] : e.parameters().privateData();
                    state = State.CONNECTED;
                }
                case REJECTED -> {
                    lastEventStatus = e.status();
                    rejectPrivateData = e.parameters() == null ? new byte[0] : e.parameters().privateData();
                    state = State.REJECTED;
                }
                case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, DEVICE_REMOVAL -> {
                    lastEventStatus = e.status();
                    state = State.FAILED;
                }
                case DISCONNECTED -> {
                    state = State.DISCONNECTED;
                    id.disconnect();   // moves our QP to error (flushing) if the target started it
                }
                default -> { }
            }
        } catch (VerbsException ex) {
            lastEventStatus = -ex.errno();
            state = State.FAILED;
        } finally {
            e.ack();
        }
    }

    private void setUp() {
        device = id.device();
        pd = device.allocProtectionDomain();
        compChannel = device.createCompletionChannel();
        cq = device.createCompletionQueue(options.sendDepth() + BIND_SLOTS + options.recvDepth() + 1, compChannel);
        long size = (long) options.recvDepth() * options.recvBufferSize() + (long) options.sendDepth() * options.sendBufferSize();
        slab = arena.allocate(size, 4096);
        slabMr = pd.register(slab, Access.LOCAL_WRITE);
        // sendDepth SEND slots plus a reserve for window binds (exposeBuffer), so binds never eat the SEND budget.
        qp = id.createQueuePair(new QpInitAttributes(pd, cq, cq,
                new QpCapabilities(options.sendDepth() + BIND_SLOTS, Math.max(1, options.recvDepth()), 1, 1, 0), false));
        recvBuffers = new MemorySegment[options.recvDepth()];
        recvWrs = new RecvWorkRequest[options.recvDepth()];
        for (int i = 0; i < options.recvDepth(); i++) {
            recvBuffers[i] = slab.asSlice((long) i * options.recvBufferSize(), options.recvBufferSize());
            ScatterGatherEntry s = ScatterGatherEntry.allocate(arena, 1)
                    .set(recvBuffers[i].address(), options.recvBufferSize(), slabMr.lkey());
            recvWrs[i] = RecvWorkRequest.allocate(arena).wrId(i).sgList(s, 1).next(null);
            freeRecvSlots.add(i);
        }
        sendBuffers = new MemorySegment[options.sendDepth()];
        long sendBase = (long) options.recvDepth() * options.recvBufferSize();
        for (int i = 0; i < options.sendDepth(); i++) {
            sendBuffers[i] = slab.asSlice(sendBase + (long) i * options.sendBufferSize(), options.sendBufferSize());
        }
        if (options.postReceives()) postReceives(options.recvDepth());
    }

    private int postRecv(int slot) {
        int rc = qp.postRecv(recvWrs[slot]);
        if (rc == 0) postedRecvs++;
        return rc;
    }

    private boolean isWindowKey(int rkey) {
        for (HostBuffer b : buffers) {
            if (b.window != null && b.window.rkey() == rkey) return true;
        }
        return false;
    }

    private void handleCompletion(int i) {
        long wrId = wc.wrId(i);
        int status = wc.status(i);
        int opcode = wc.opcode(i);
        if (wrId >= BIND_WR_BASE) {
            HostBuffer b = bindsOutstanding.remove(wrId);
            if (b != null) b.bindStatus = status;
            if (status != WcStatus.SUCCESS) bindErrors.add(new Completion(wrId, status, opcode, wc.byteLen(i)));
            return;
        }
        if (WcOpcode.isReceive(opcode) || wrId < SEND_WR_BASE) {
            int slot = (int) wrId;
            postedRecvs--;
            if (status == WcStatus.SUCCESS) {
                boolean inv = (wc.wcFlags(i) & WorkCompletion.WC_WITH_INV) != 0;
                if (!inv && (wc.wcFlags(i) & RXE_KERNEL_WITH_INVALIDATE) != 0) inv = isWindowKey(wc.invalidatedRkey(i));
                listener.onMessage(recvBuffers[slot], wc.byteLen(i), inv, inv ? wc.invalidatedRkey(i) : 0);
                if (options.repostReceives() && state == State.CONNECTED && postRecv(slot) == 0) return;
            } else {
                recvErrors.add(new Completion(wrId, status, opcode, wc.byteLen(i)));
            }
            freeRecvSlots.add(slot);
        } else {
            int slot = (int) (wrId - SEND_WR_BASE);
            if (slot >= 0 && slot < sendSlotBusy.length) sendSlotBusy[slot] = false;
            outstandingSends--;
            listener.onSendCompletion(slot, status);
        }
    }

    /** The default listener: copies of what arrives, for the script-level calls. */
    private final class Recorder implements Listener {
        @Override
        public void onMessage(MemorySegment buffer, int length, boolean withInvalidate, int invalidatedRkey) {
            responses.add(new Response(buffer.asSlice(0, length).toArray(JAVA_BYTE), withInvalidate, invalidatedRkey));
        }

        @Override
        public void onSendCompletion(int slot, int status) {
            sendCompletions.add(new Completion(SEND_WR_BASE + slot, status, WcOpcode.SEND, 0));
        }
    }

    // ------------------------------------------------------------------------------------------ teardown

    /**
     * Tears everything down in the safe order: disconnect if needed, move the QP to error, wait (bounded) until
     * every outstanding WR came back, then free the windows, destroy the QP, the id, the MRs, the CQ, the channel
     * and the PD.
     */
    @Override
    public void close() {
        if (state == State.CLOSED) return;
        try {
            if (id != null && state == State.CONNECTED) {
                try {
                    id.disconnect();
                } catch (VerbsException ignored) {
                    // already gone
                }
            }
            if (qp != null) {
                qp.moveToError();
                awaitCondition(() -> outstandingSends == 0 && postedRecvs == 0 && bindsOutstanding.isEmpty(), 2000);
            }
            if (events != null) {
                CmEvent e;
                while ((e = events.pollEvent(0)) != null) {
                    cmEvents.add(e.type());
                    e.ack();
                }
            }
            // Windows go before the QP (a type-2 window bound on it refers to it) and before their regions.
            for (HostBuffer b : buffers) {
                if (b.window != null) b.window.close();
            }
            if (id != null) id.close();
            for (HostBuffer b : new ArrayList<>(buffers)) b.close();
            if (slabMr != null) slabMr.close();
            if (cq != null) cq.close();
            if (compChannel != null) compChannel.close();
            if (pd != null) pd.close();
            if (events != null) events.close();
        } finally {
            state = State.CLOSED;
            arena.close();
        }
    }
}
