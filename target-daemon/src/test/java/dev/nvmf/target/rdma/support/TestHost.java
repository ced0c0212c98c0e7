package dev.nvmf.target.rdma.support;

import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.ConnectionParameters;
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
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.WrOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

/**
 * A minimal NVMe/RDMA host written against the verbs API, for transport tests: connects with chosen private data,
 * sends raw command capsules (keyed or in-capsule SGLs), receives response capsules and records whether they
 * came with remote invalidation. Single-threaded; call {@link #poll()} from the test's pump.
 */
public final class TestHost implements AutoCloseable {
    public record Response(int cid, int status, int sqhd, int sqid, boolean withInvalidate, int invalidatedRkey) {}

    /** Host memory the target may reach with {@link #rkey()}: a region's key, or a bound type-2 window's. */
    public record HostBuffer(MemorySegment segment, MemoryRegion region, MemoryWindow window) {
        public long address() { return segment.address(); }

        public int rkey() { return window != null ? window.rkey() : region.rkey(); }
    }

    private static final long BIND_WR_ID = 2L << 40;

    public static final int CAPSULE_SLOT = 64 + 16384;

    private final CmEventChannel channel;
    private final CmId id;
    private final Arena arena = Arena.ofShared();
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion mr;
    private MemorySegment capsules;
    private MemorySegment responses;
    private RecvWorkRequest[] recvWrs;
    private SendWorkRequest sendWr;
    private ScatterGatherEntry sendSge;
    private final WorkCompletion wc = WorkCompletion.allocate(Arena.ofAuto(), 32);
    private int slots;
    private int nextSlot;
    public final List<Response> received = new ArrayList<>();
    public final List<CmEvent> events = new ArrayList<>();
    public final List<Integer> sendErrors = new ArrayList<>();
    public int sendsOutstanding;
    private final List<MemoryRegion> dataRegions = new ArrayList<>();
    private final List<MemoryWindow> windows = new ArrayList<>();
    private SendWorkRequest bindWr;
    public CmEvent connectResult;

    public TestHost(RdmaProvider provider) {
        channel = provider.createEventChannel();
        id = channel.createId(this);
    }

    /** Resolves, creates the QP, posts response receives, and sends the connect request (pump afterwards). */
    public void startConnect(InetSocketAddress source, InetSocketAddress target, byte[] privateData,
                             int responderResources, int hrqsize, int sendDepth, Runnable pump) {
        id.resolveAddress(source, target, 1000);
        awaitEvent(CmEventType.ADDR_RESOLVED, pump);
        id.resolveRoute(1000);
        awaitEvent(CmEventType.ROUTE_RESOLVED, pump);
        pd = id.device().allocProtectionDomain();
        cq = id.device().createCompletionQueue(4 * (hrqsize + sendDepth) + 16, null);
        qp = id.createQueuePair(new QpInitAttributes(pd, cq, cq,
                new QpCapabilities(2 * sendDepth + 2, Math.max(1, hrqsize), 1, 1, 0), true));
        slots = Math.max(1, sendDepth);
        capsules = arena.allocate((long) slots * CAPSULE_SLOT, 4096);
        responses = arena.allocate(Math.max(1, hrqsize) * 16L, 4096);
        MemorySegment all = arena.allocate(capsules.byteSize() + responses.byteSize(), 4096);
        capsules = all.asSlice(0, capsules.byteSize());
        responses = all.asSlice(capsules.byteSize());
        mr = pd.register(all, Access.LOCAL_WRITE);
        recvWrs = new RecvWorkRequest[Math.max(1, hrqsize)];
        for (int i = 0; i < recvWrs.length; i++) {
            ScatterGatherEntry sge = ScatterGatherEntry.allocate(arena, 1).set(responses.address() + i * 16L, 16, mr.lkey());
            recvWrs[i] = RecvWorkRequest.allocate(arena).wrId(i).sgList(sge, 1).next(null);
            if (hrqsize > 0 && qp.postRecv(recvWrs[i]) != 0) throw new IllegalStateException("host post_recv");
        }
        sendWr = SendWorkRequest.allocate(arena);
        bindWr = SendWorkRequest.allocate(arena);
        sendSge = ScatterGatherEntry.allocate(arena, 1);
        id.connect(new ConnectionParameters(privateData, responderResources, 0, 1, 7, 7, false, 0));
    }

    /** Connects with NVMe private data for a queue; returns the ESTABLISHED or REJECTED event. */
    public CmEvent connect(InetSocketAddress source, InetSocketAddress target, int qid, int depth,
                           int responderResources, Runnable pump) {
        byte[] pdata = new ConnectRequestData(0, qid, depth, depth - 1, qid == 0 ? 0xFFFF : 1).encode();
        startConnect(source, target, pdata, responderResources, depth, depth, pump);
        return awaitConnect(pump);
    }

    public CmEvent awaitConnect(Runnable pump) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (connectResult == null && System.nanoTime() < deadline) {
            pump.run();
            poll();
        }
        return connectResult;
    }

    private void awaitEvent(CmEventType type, Runnable pump) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            pump.run();
            poll();
            for (CmEvent e : events) {
                if (e.type() == type) {
                    events.remove(e);
                    return;
                }
            }
        }
        throw new IllegalStateException("no " + type + " (events: " + events + ")");
    }

    /**
     * Host memory for a keyed SGL: a region registered for remote read and write. Its rkey cannot be invalidated
     * remotely (the soft fabric, like rxe and hardware, fails a SEND_WITH_INV of it at the host): use it with the
     * plain keyed subtype, or with the invalidate subtype only where the target must not invalidate.
     */
    public MemoryRegion dataRegion(int size) {
        MemoryRegion r = pd.register(arena.allocate(Math.max(size, 1), 4096),
                Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
        dataRegions.add(r);
        return r;
    }

    /** {@link #dataRegion} as a {@link HostBuffer}. */
    public HostBuffer regionBuffer(int size) {
        MemoryRegion r = dataRegion(size);
        return new HostBuffer(r.segment(), r, null);
    }

    /**
     * Host memory behind a type-2 memory window bound on this host's QP, as the Linux host's invalidatable keys
     * are: the target may answer with SEND_WITH_INV of its rkey. The bind is posted now, before any capsule that
     * names the key (send-queue order makes it valid first).
     */
    public HostBuffer dataWindow(int size) {
        MemoryRegion r = pd.register(arena.allocate(Math.max(size, 1), 4096),
                Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE | Access.MW_BIND);
        dataRegions.add(r);
        MemoryWindow w = pd.allocateMemoryWindow();
        windows.add(w);
        int rc = w.bind(qp, bindWr, BIND_WR_ID, SendFlags.SIGNALED, r, r.address(), size,
                Access.REMOTE_READ | Access.REMOTE_WRITE);
        if (rc != 0) throw new IllegalStateException("bind_mw post failed: " + rc);
        return new HostBuffer(r.segment(), r, w);
    }

    /** Writes a capsule: SQE with opcode/cid/offset and a keyed SGL (type 0x40 or 0x4F). Returns the slot. */
    public MemorySegment capsule(int opcode, int cid, long offset) {
        MemorySegment c = capsules.asSlice((long) nextSlot * CAPSULE_SLOT, CAPSULE_SLOT);
        c.asSlice(0, 64).fill((byte) 0);
        c.set(JAVA_BYTE, 0, (byte) opcode);
        c.set(JAVA_BYTE, 1, (byte) 0x40);
        c.set(JAVA_SHORT_UNALIGNED, 2, (short) cid);
        c.set(JAVA_INT_UNALIGNED, 4, 1);
        c.set(JAVA_LONG_UNALIGNED, 40, offset);
        c.set(JAVA_BYTE, 39, (byte) 0x40); // no data: a zero-length keyed descriptor, as the Linux host sends
        return c;
    }

    public static void keyed(MemorySegment capsule, long addr, int length, int rkey, boolean invalidate) {
        capsule.set(JAVA_LONG_UNALIGNED, 24, addr);
        capsule.set(JAVA_BYTE, 32, (byte) length);
        capsule.set(JAVA_BYTE, 33, (byte) (length >>> 8));
        capsule.set(JAVA_BYTE, 34, (byte) (length >>> 16));
        capsule.set(JAVA_INT_UNALIGNED, 35, rkey);
        capsule.set(JAVA_BYTE, 39, (byte) (invalidate ? 0x4F : 0x40));
    }

    public static void inCapsule(MemorySegment capsule, long offset, int length) {
        capsule.set(JAVA_LONG_UNALIGNED, 24, offset);
        capsule.set(JAVA_INT_UNALIGNED, 32, length);
        capsule.set(JAVA_BYTE, 39, (byte) 0x01);
    }

    /** Sends the current slot's capsule with {@code inCapsuleBytes} bytes after the SQE. */
    public int send(int inCapsuleBytes) {
        MemorySegment c = capsules.asSlice((long) nextSlot * CAPSULE_SLOT, CAPSULE_SLOT);
        nextSlot = (nextSlot + 1) % slots;
        sendSge.set(c.address(), 64 + inCapsuleBytes, mr.lkey());
        sendWr.wrId(1L << 40).sgList(sendSge, 1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).next(null);
        int rc = qp.postSend(sendWr);
        if (rc == 0) sendsOutstanding++;
        return rc;
    }

    /** Polls the host CQ: records responses (and reposts their receives) and send completions; CM events. */
    public int poll() {
        int work = 0;
        if (cq != null) {
            int n;
            while ((n = cq.poll(wc)) > 0) {
                work += n;
                for (int i = 0; i < n; i++) {
                    long wrId = wc.wrId(i);
                    if (wrId == BIND_WR_ID) {
                        if (wc.status(i) != WcStatus.SUCCESS) sendErrors.add(wc.status(i));
                        continue;
                    }
                    if (wrId == 1L << 40) {
                        sendsOutstanding--;
                        if (wc.status(i) != WcStatus.SUCCESS) sendErrors.add(wc.status(i));
                        continue;
                    }
                    if (wc.status(i) != WcStatus.SUCCESS) continue;
                    int slot = (int) wrId;
                    MemorySegment r = responses.asSlice(slot * 16L, 16);
                    boolean inv = (wc.wcFlags(i) & WorkCompletion.WC_WITH_INV) != 0;
                    received.add(new Response(r.get(JAVA_SHORT_UNALIGNED, 12) & 0xFFFF,
                            (r.get(JAVA_SHORT_UNALIGNED, 14) & 0xFFFF) >>> 1, r.get(JAVA_SHORT_UNALIGNED, 8) & 0xFFFF,
                            r.get(JAVA_SHORT_UNALIGNED, 10) & 0xFFFF, inv, inv ? wc.invalidatedRkey(i) : 0));
                    qp.postRecv(recvWrs[slot]);
                }
            }
        }
        CmEvent e;
        while ((e = channel.pollEvent(0)) != null) {
            work++;
            events.add(e);
            if (e.type() == CmEventType.ESTABLISHED || e.type() == CmEventType.REJECTED
                    || e.type() == CmEventType.UNREACHABLE || e.type() == CmEventType.CONNECT_ERROR) {
                if (connectResult == null) connectResult = e;
            }
            e.ack();
        }
        return work;
    }

    public Response response(int cid) {
        for (Response r : received) if (r.cid() == cid) return r;
        return null;
    }

    public boolean sawEvent(CmEventType type) {
        for (CmEvent e : events) if (e.type() == type) return true;
        return false;
    }

    public CmId id() { return id; }

    public QueuePair qp() { return qp; }

    public void disconnect() { id.disconnect(); }

    @Override
    public void close() {
        try {
            id.close();
        } catch (RuntimeException ignored) {
            // already gone
        }
        for (MemoryWindow w : windows) w.close();
        for (MemoryRegion r : dataRegions) r.close();
        if (mr != null) mr.close();
        if (cq != null) cq.close();
        if (pd != null) pd.close();
        channel.close();
    }
}
