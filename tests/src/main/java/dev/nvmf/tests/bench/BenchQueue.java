package dev.nvmf.tests.bench;

import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.initiator.ScriptedInitiator;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * One NVMe/RDMA queue of the benchmark host, at the capsule level, on the verbs-level test host
 * ({@link ScriptedInitiator}). It costs as little as possible and allocates nothing once connected, so that what a
 * benchmark measures is the target, the fabric and this loop: each command is written in place, with the
 * {@code nvme} flyweights, into the send slot of its CID, and each response is taken where it arrives (the
 * initiator hands this queue the receive buffer itself), its status checked and counted.
 *
 * <p>Commands are what the Linux host sends for the same I/O: a read names a host buffer with a keyed SGL (the target
 * RDMA WRITEs the data), a write of up to the in-capsule size carries its data in the capsule; a "keyed" write
 * names a host buffer the target RDMA READs. Keys are the host buffer region's rkey with the plain keyed subtype
 * (no remote invalidation: the Linux host's per-I/O fast registrations are not modelled).
 *
 * <p>Single-threaded: the benchmark thread calls everything, including {@link #poll()} from its pump.
 */
public final class BenchQueue implements ScriptedInitiator.Listener, AutoCloseable {
    static final int CC_ENABLE = Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);

    private final ScriptedInitiator host;
    private final int qid;
    private final int depth;
    private final int dataBytes;
    private final SubmissionQueueEntry sqe = new SubmissionQueueEntry();
    private final SglDescriptor sgl = new SglDescriptor();
    private final CompletionQueueEntry cqe = new CompletionQueueEntry();
    private final boolean[] busy;
    private ScriptedInitiator.HostBuffer data;
    private MemorySegment[] dataSlots = new MemorySegment[0];

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
     * @param dataBytes bytes of each slot's host buffer (and the largest in-capsule data this queue sends)
     */
    public BenchQueue(RdmaProvider provider, InetSocketAddress source, InetSocketAddress target, int qid, int depth,
                      int dataBytes) {
        this.qid = qid;
        this.depth = depth;
        this.dataBytes = dataBytes;
        this.busy = new boolean[depth];
        byte[] pdata = new ConnectRequestData(0, qid, depth, depth - 1, qid == 0 ? 0xFFFF : 1).encode();
        this.host = new ScriptedInitiator(provider, ScriptedInitiator.Options.to(target).source(source)
                .privateData(pdata).rdmaDepths(16, 0).depths(depth, depth)
                .bufferSizes(64, SubmissionQueueEntry.SIZE + dataBytes));
        host.listener(this);
    }

    // ------------------------------------------------------------------------------------------ connection

    /** RDMA connect with the NVMe/RDMA private data for this queue; {@code pump} moves the fabric and target. */
    public void rdmaConnect(Runnable pump) {
        host.startConnect();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (host.state() == ScriptedInitiator.State.RESOLVING || host.state() == ScriptedInitiator.State.CONNECTING) {
            if (System.nanoTime() > deadline) throw new IllegalStateException("no answer to the RDMA connect");
            pump.run();
            host.doWork();
        }
        if (host.state() != ScriptedInitiator.State.CONNECTED) {
            throw new IllegalStateException("RDMA connect: " + host.state() + " " + host.cmEvents());
        }
        data = host.exposeBuffer(depth * dataBytes, Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE,
                ScriptedInitiator.HostKey.REGION);
        dataSlots = new MemorySegment[depth];
        for (int i = 0; i < depth; i++) dataSlots[i] = data.memory().asSlice(i * (long) dataBytes, dataBytes);
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
        sgl.keyed(d.address(), FabricsCommand.CONNECT_DATA_SIZE, data.rkey(), false);
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

    /**
     * The capsule of slot {@code slot} (CID = slot), its SQE zeroed, with opcode and NSID set and SGL1 a
     * zero-length keyed data block, as the Linux host sends for "no data"; {@link #sgl} points at SGL1.
     */
    private MemorySegment capsule(int slot, int opcode, int nsid) {
        MemorySegment c = host.sendBuffer(slot);
        sqe.wrap(c).clear().opcode(opcode)
                .flags(SubmissionQueueEntry.PSDT_SGL_MPTR_ADDRESS << SubmissionQueueEntry.FLAGS_PSDT_SHIFT)
                .cid(slot).nsid(nsid);
        sgl.wrap(c, SubmissionQueueEntry.SGL1).keyed(0, 0, 0, false);
        return c;
    }

    /** This slot's host data buffer. */
    public MemorySegment data(int slot) { return dataSlots[slot]; }

    /** The in-capsule data area of slot {@code slot}'s capsule. */
    public MemorySegment inCapsule(int slot) {
        return host.sendBuffer(slot).asSlice(SubmissionQueueEntry.SIZE, dataBytes);
    }

    /** Whether slot {@code slot} has a command in flight (or its capsule's SEND has not completed yet). */
    public boolean busy(int slot) { return busy[slot] || host.sendBusy(slot); }

    /** Commands sent and not yet answered. */
    public int outstanding() { return outstanding; }

    /** Read of {@code bytes} at {@code slba} into the slot's buffer (keyed SGL: the target RDMA WRITEs). */
    public int read(int slot, int nsid, long slba, int blocks, int bytes) {
        rw(slot, Opcodes.IO_READ, nsid, slba, blocks);
        sgl.keyed(dataSlots[slot].address(), bytes, data.rkey(), false);
        return send(slot, 0);
    }

    /** Write of the slot's in-capsule area ({@code bytes} of it), as the Linux host sends small writes. */
    public int writeInCapsule(int slot, int nsid, long slba, int blocks, int bytes) {
        rw(slot, Opcodes.IO_WRITE, nsid, slba, blocks);
        sgl.inCapsule(0, bytes);
        return send(slot, bytes);
    }

    /** Write from the slot's host buffer by keyed SGL (the target RDMA READs it). */
    public int writeKeyed(int slot, int nsid, long slba, int blocks, int bytes) {
        rw(slot, Opcodes.IO_WRITE, nsid, slba, blocks);
        sgl.keyed(dataSlots[slot].address(), bytes, data.rkey(), false);
        return send(slot, 0);
    }

    /** Any command on slot {@code slot}: opcode, NSID, CDW10 and CDW11; {@code bytes} > 0 names the slot's host
     *  buffer by keyed SGL (data in either direction, as the opcode says). */
    public int command(int slot, int opcode, int nsid, int cdw10, int cdw11, int bytes) {
        capsule(slot, opcode, nsid);
        sqe.cdw(10, cdw10).cdw(11, cdw11);
        if (bytes > 0) sgl.keyed(dataSlots[slot].address(), bytes, data.rkey(), false);
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

    private void rw(int slot, int opcode, int nsid, long slba, int blocks) {
        capsule(slot, opcode, nsid);
        sqe.cdw(10, (int) slba).cdw(11, (int) (slba >>> 32)).cdw(12, blocks - 1);
    }

    private int send(int slot, int inCapsuleBytes) {
        int rc = host.send(slot, SubmissionQueueEntry.SIZE + inCapsuleBytes);
        if (rc == 0) {
            busy[slot] = true;
            outstanding++;
        }
        return rc;
    }

    /** Takes every completion and CM event that is ready; returns the work done. */
    public int poll() { return host.doWork(); }

    @Override
    public void onMessage(MemorySegment buffer, int length, boolean withInvalidate, int invalidatedRkey) {
        cqe.wrap(buffer);
        int cid = cqe.cid();
        int st = cqe.status() & 0x7FFF;
        lastResult0 = cqe.dw0();
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
    }

    @Override
    public void onSendCompletion(int slot, int status) {
        if (status != WcStatus.SUCCESS) sendErrors++;
    }

    @Override
    public void close() {
        host.close();
    }
}
