package dev.nvmf.tests.bench;

import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.WrOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One NVMe/RDMA queue of a benchmark host on the verbs API, built to cost as little as possible and to allocate
 * nothing once connected, so that what a benchmark measures is the target, the fabric and this loop, not a test
 * helper's bookkeeping. Unlike the transport tests' host it keeps no response list: every response is consumed
 * where it arrives (CID = slot), its status checked and counted.
 *
 * <p>Commands are what the Linux host sends for the same I/O: a read names a host buffer with a keyed SGL (the target
 * RDMA WRITEs the data), a write of up to the in-capsule size carries its data in the capsule; a "keyed" write
 * names a host buffer the target RDMA READs. Keys are the host buffers' region rkeys with the plain keyed subtype
 * (no remote invalidation: the Linux host's per-I/O fast registrations are not modelled).
 *
 * <p>Single-threaded: the benchmark thread calls everything, including {@link #poll()} from its pump.
 */
public final class BenchHost implements AutoCloseable {
    /** Capsule (SQE) size; a slot holds it plus in-capsule data. */
    static final int SQE = 64;
    /** Bytes of a response capsule (CQE). */
    static final int CQE = 16;
    private static final long SEND_WR = 1L << 40;
    static final int CC_ENABLE = Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);

    private final RdmaProvider provider;
    private final Arena arena = Arena.ofShared();
    private final int qid;
    private final int depth;
    private final int dataBytes;
    private CmEventChannel channel;
    private CmId id;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private MemoryRegion mr;
    private MemorySegment capsules;
    private MemorySegment responses;
    private MemorySegment data;
    private RecvWorkRequest[] recvWrs;
    private final SendWorkRequest sendWr;
    private final ScatterGatherEntry sendSge;
    private final WorkCompletion wc;
    private final boolean[] busy;
    private CmEventType connectResult;
    private final boolean[] seen = new boolean[CmEventType.values().length];

    /** Responses received with status 0, and with any other status (counted, the last one kept). */
    public long completed;
    public long failed;
    public int lastFailedStatus;
    /** Send completions in error (a broken queue). */
    public long sendErrors;
    /** Result dword 0 of the last response (Connect returns the controller id there). */
    public int lastResult0;
    private int lastStatus = -1;
    private int lastCid = -1;
    private int outstanding;

    /**
     * @param qid       queue id (0 = admin)
     * @param depth     entries of the queue (and command slots); at most {@code depth - 1} may be outstanding
     * @param dataBytes bytes of each slot's host buffer (and the largest in-capsule data this host sends)
     */
    public BenchHost(RdmaProvider provider, int qid, int depth, int dataBytes) {
        this.provider = provider;
        this.qid = qid;
        this.depth = depth;
        this.dataBytes = dataBytes;
        this.sendWr = SendWorkRequest.allocate(arena);
        this.sendSge = ScatterGatherEntry.allocate(arena, 1);
        this.wc = WorkCompletion.allocate(arena, 64);
        this.busy = new boolean[depth];
    }

    // ------------------------------------------------------------------------------------------ connection

    /** RDMA connect with the NVMe/RDMA private data for this queue; {@code pump} moves the fabric and target. */
    public void rdmaConnect(InetSocketAddress source, InetSocketAddress target, Runnable pump) {
        channel = provider.createEventChannel();
        id = channel.createId(this);
        id.resolveAddress(source, target, 1000);
        await(CmEventType.ADDR_RESOLVED, pump);
        id.resolveRoute(1000);
        await(CmEventType.ROUTE_RESOLVED, pump);
        pd = id.device().allocProtectionDomain();
        cq = id.device().createCompletionQueue(4 * depth + 16, null);
        qp = id.createQueuePair(new QpInitAttributes(pd, cq, cq, new QpCapabilities(2 * depth, depth, 1, 1, 0), true));
        long slot = SQE + dataBytes;
        MemorySegment all = arena.allocate(depth * slot + depth * (long) CQE + depth * (long) dataBytes, 4096);
        capsules = all.asSlice(0, depth * slot);
        responses = all.asSlice(depth * slot, depth * (long) CQE);
        data = all.asSlice(depth * slot + depth * (long) CQE);
        mr = pd.register(all, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
        recvWrs = new RecvWorkRequest[depth];
        for (int i = 0; i < depth; i++) {
            ScatterGatherEntry sge = ScatterGatherEntry.allocate(arena, 1).set(responses.address() + i * (long) CQE, CQE, mr.lkey());
            recvWrs[i] = RecvWorkRequest.allocate(arena).wrId(i).sgList(sge, 1).next(null);
            if (qp.postRecv(recvWrs[i]) != 0) throw new IllegalStateException("host post_recv");
        }
        byte[] pdata = new ConnectRequestData(0, qid, depth, depth - 1, qid == 0 ? 0xFFFF : 1).encode();
        id.connect(new ConnectionParameters(pdata, 16, 0, 1, 7, 7, false, 0));
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (connectResult == null) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("no answer to the RDMA connect");
            pump.run();
            poll();
        }
        if (connectResult != CmEventType.ESTABLISHED) throw new IllegalStateException("RDMA connect: " + connectResult);
    }

    /** Waits for a CM event of {@code type}; {@link #poll()} (which the pump may call too) records every one seen. */
    private void await(CmEventType type, Runnable pump) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!seen[type.ordinal()]) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("no " + type);
            if (connectResult != null && connectResult != CmEventType.ESTABLISHED) {
                throw new IllegalStateException("expected " + type + ", got " + connectResult);
            }
            pump.run();
            poll();
        }
    }

    /** Fabrics Connect (keyed Connect data, as the Linux host sends it); returns the status, 0 = success. */
    public int nvmeConnect(String subnqn, String hostnqn, int cntlid, Runnable pump) {
        MemorySegment c = capsule(0, Opcodes.FABRICS, 0);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_CONNECT);
        Le.u16(c, FabricsCommand.CONNECT_QID, qid);
        Le.u16(c, FabricsCommand.CONNECT_SQSIZE, depth - 1);
        MemorySegment d = data(0);
        if (d.byteSize() < FabricsCommand.CONNECT_DATA_SIZE) throw new IllegalArgumentException("slot data < 1 KiB");
        d.asSlice(0, FabricsCommand.CONNECT_DATA_SIZE).fill((byte) 0);
        byte[] hostId = Arrays.copyOf(hostnqn.getBytes(StandardCharsets.UTF_8), 16);
        MemorySegment.copy(MemorySegment.ofArray(hostId), 0, d, FabricsCommand.DATA_HOSTID, 16);
        Le.u16(d, FabricsCommand.DATA_CNTLID, cntlid);
        Le.utf8NulPadded(d, FabricsCommand.DATA_SUBNQN, FabricsCommand.NQN_FIELD_LENGTH, subnqn);
        Le.utf8NulPadded(d, FabricsCommand.DATA_HOSTNQN, FabricsCommand.NQN_FIELD_LENGTH, hostnqn);
        keyed(c, d.address(), FabricsCommand.CONNECT_DATA_SIZE);
        return execute(0, 0, pump);
    }

    /** Property Set CC.EN = 1 on the admin queue; returns the status. */
    public int enableController(Runnable pump) {
        MemorySegment c = capsule(0, Opcodes.FABRICS, 0);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_PROPERTY_SET);
        Le.u32(c, FabricsCommand.PROPERTY_OFFSET, Properties.CC);
        Le.u64(c, FabricsCommand.PROPERTY_VALUE, CC_ENABLE);
        return execute(0, 0, pump);
    }

    private int execute(int slot, int inCapsule, Runnable pump) {
        lastStatus = -1;
        lastCid = -1;
        if (send(slot, inCapsule) != 0) throw new IllegalStateException("post_send");
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (lastCid != slot) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("no response to cid " + slot);
            pump.run();
            poll();
        }
        return lastStatus;
    }

    // ------------------------------------------------------------------------------------------ I/O

    /** The capsule of slot {@code slot} (CID = slot), zeroed, with opcode and NSID set. */
    MemorySegment capsule(int slot, int opcode, int nsid) {
        MemorySegment c = capsules.asSlice(slot * (long) (SQE + dataBytes), SQE + dataBytes);
        c.asSlice(0, SQE).fill((byte) 0);
        Le.u8(c, 0, opcode);
        Le.u8(c, 1, 0x40); // PSDT: SGL, metadata in one buffer
        Le.u16(c, 2, slot);
        Le.u32(c, 4, nsid);
        Le.u8(c, 39, 0x40); // a zero-length keyed data block descriptor, as the Linux host sends for "no data"
        return c;
    }

    /** This slot's host data buffer. */
    public MemorySegment data(int slot) {
        return data.asSlice(slot * (long) dataBytes, dataBytes);
    }

    /** The in-capsule data area of slot {@code slot}'s capsule. */
    public MemorySegment inCapsule(int slot) {
        return capsules.asSlice(slot * (long) (SQE + dataBytes) + SQE, dataBytes);
    }

    private void keyed(MemorySegment c, long address, int length) {
        Le.u64(c, 24, address);
        Le.u8(c, 32, length);
        Le.u8(c, 33, length >>> 8);
        Le.u8(c, 34, length >>> 16);
        Le.u32(c, 35, mr.rkey());
        Le.u8(c, 39, 0x40); // keyed data block, address + key, no invalidate
    }

    /** Whether slot {@code slot} has a command in flight. */
    public boolean busy(int slot) { return busy[slot]; }

    /** Commands sent and not yet answered. */
    public int outstanding() { return outstanding; }

    /** Read of {@code bytes} at {@code slba} into the slot's buffer (keyed SGL: the target RDMA WRITEs). */
    public int read(int slot, int nsid, long slba, int blocks, int bytes) {
        MemorySegment c = capsule(slot, Opcodes.IO_READ, nsid);
        Le.u64(c, 40, slba);
        Le.u32(c, 48, blocks - 1);
        keyed(c, data(slot).address(), bytes);
        return send(slot, 0);
    }

    /** Write of the slot's in-capsule area ({@code bytes} of it), as the Linux host sends small writes. */
    public int writeInCapsule(int slot, int nsid, long slba, int blocks, int bytes) {
        MemorySegment c = capsule(slot, Opcodes.IO_WRITE, nsid);
        Le.u64(c, 40, slba);
        Le.u32(c, 48, blocks - 1);
        Le.u64(c, 24, 0);                       // offset into the capsule's data
        Le.u32(c, 32, bytes);
        Le.u8(c, 39, 0x01);                     // data block, offset addressing (in-capsule)
        return send(slot, bytes);
    }

    /** Write from the slot's host buffer by keyed SGL (the target RDMA READs it). */
    public int writeKeyed(int slot, int nsid, long slba, int blocks, int bytes) {
        MemorySegment c = capsule(slot, Opcodes.IO_WRITE, nsid);
        Le.u64(c, 40, slba);
        Le.u32(c, 48, blocks - 1);
        keyed(c, data(slot).address(), bytes);
        return send(slot, 0);
    }

    /**
     * Any other command: opcode, NSID, CDW10 and CDW11, and if {@code bytes > 0} the slot's host buffer by keyed SGL
     * (the target RDMA WRITEs what the command returns there: Identify, Get Log Page). Flush, Keep Alive, Set
     * Features or an Asynchronous Event Request carry no data.
     */
    public int command(int slot, int opcode, int nsid, int cdw10, int cdw11, int bytes) {
        MemorySegment c = capsule(slot, opcode, nsid);
        Le.u32(c, 40, cdw10);
        Le.u32(c, 44, cdw11);
        if (bytes > 0) keyed(c, data(slot).address(), bytes);
        return send(slot, 0);
    }

    /** Fabrics Property Get of {@code offset}, 8 bytes wide or 4; the value comes back in the response. */
    public int propertyGet(int slot, int offset, boolean eightBytes) {
        MemorySegment c = capsule(slot, Opcodes.FABRICS, 0);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_PROPERTY_GET);
        Le.u8(c, FabricsCommand.PROPERTY_ATTRIB, eightBytes ? 1 : 0);
        Le.u32(c, FabricsCommand.PROPERTY_OFFSET, offset);
        return send(slot, 0);
    }

    private int send(int slot, int inCapsuleBytes) {
        MemorySegment c = capsules.asSlice(slot * (long) (SQE + dataBytes), SQE + inCapsuleBytes);
        sendSge.set(c.address(), SQE + inCapsuleBytes, mr.lkey());
        sendWr.wrId(SEND_WR).sgList(sendSge, 1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).next(null);
        int rc = qp.postSend(sendWr);
        if (rc == 0) {
            busy[slot] = true;
            outstanding++;
        }
        return rc;
    }

    /** Polls the CQ: every response frees its slot (CID) and reposts its receive; CM events. Returns work done. */
    public int poll() {
        int work = 0;
        if (cq != null) {
            int n;
            while ((n = cq.poll(wc)) > 0) {
                work += n;
                for (int i = 0; i < n; i++) {
                    long wrId = wc.wrId(i);
                    int status = wc.status(i);
                    if (wrId == SEND_WR) {
                        if (status != WcStatus.SUCCESS) sendErrors++;
                        continue;
                    }
                    if (status != WcStatus.SUCCESS || !WcOpcode.isReceive(wc.opcode(i))) continue;
                    int r = (int) wrId;
                    MemorySegment cqe = responses.asSlice(r * (long) CQE, CQE);
                    int cid = Le.u16(cqe, 12);
                    int st = (Le.u16(cqe, 14) >>> 1) & 0x7FFF;
                    lastResult0 = Le.u32(cqe, 0);
                    if (cid < depth && busy[cid]) {
                        busy[cid] = false;
                        outstanding--;
                    }
                    if (st == 0) {
                        completed++;
                    } else {
                        failed++;
                        lastFailedStatus = st;
                    }
                    lastStatus = st;
                    lastCid = cid;
                    qp.postRecv(recvWrs[r]);
                }
            }
        }
        if (channel != null) {
            CmEvent e;
            while ((e = channel.pollEvent(0)) != null) {
                work++;
                CmEventType t = e.type();
                seen[t.ordinal()] = true;
                if (t == CmEventType.ADDR_ERROR || t == CmEventType.ROUTE_ERROR) connectResult = t;
                if (connectResult == null && (t == CmEventType.ESTABLISHED || t == CmEventType.REJECTED
                        || t == CmEventType.UNREACHABLE || t == CmEventType.CONNECT_ERROR)) {
                    connectResult = t;
                }
                e.ack();
            }
        }
        return work;
    }

    @Override
    public void close() {
        try {
            if (id != null) id.disconnect();
        } catch (RuntimeException ignored) {
            // already disconnected
        }
        try {
            if (id != null) id.close();
        } catch (RuntimeException ignored) {
            // already gone
        }
        if (mr != null) mr.close();
        if (cq != null) cq.close();
        if (pd != null) pd.close();
        if (channel != null) channel.close();
    }
}
