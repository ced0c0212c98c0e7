package dev.nvmf.target.rdma.support;

import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.initiator.ScriptedInitiator;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * NVMe/RDMA command capsules for tests, written with the {@code nvme} flyweights and sent by the verbs-level test
 * host ({@link ScriptedInitiator}). The commands are the transport tests' own (see {@link FakeCore}): opcode, CID,
 * NSID 1 and a byte offset in CDW10-11.
 */
public final class Capsules {
    /** A capsule buffer: the SQE and up to 16 KiB of in-capsule data. */
    public static final int CAPSULE_SIZE = SubmissionQueueEntry.SIZE + 16384;

    private Capsules() {}

    /**
     * What a test host connects an NVMe/RDMA queue with: the private data of queue {@code qid} of {@code depth}
     * entries (hrqsize = hsqsize = depth - 1), {@code depth} receives, send slots enough to overrun the target's
     * credits on purpose, RDMA READs it answers as responder (the target's READ depth), and room for a capsule
     * with 16 KiB of in-capsule data.
     */
    public static ScriptedInitiator.Options queueOptions(InetSocketAddress source, InetSocketAddress target, int qid,
                                                         int depth, int responderResources) {
        byte[] pdata = new ConnectRequestData(0, qid, depth, depth - 1, qid == 0 ? 0xFFFF : 1).encode();
        return ScriptedInitiator.Options.to(target).source(source).privateData(pdata)
                .rdmaDepths(responderResources, 0).depths(2 * depth + 2, depth).bufferSizes(64, CAPSULE_SIZE);
    }

    /**
     * A capsule buffer holding an SQE: {@code opcode}, {@code cid}, NSID 1, {@code offset} in CDW10-11 and a
     * zero-length keyed SGL1, as the Linux host sends for "no data". In-capsule data goes after the 64 bytes.
     */
    public static MemorySegment command(int opcode, int cid, long offset) {
        return command(MemorySegment.ofArray(new byte[CAPSULE_SIZE]), opcode, cid, offset);
    }

    /** {@link #command(int, int, long)} written into {@code capsule} (a host's send slot, say); returns it. */
    public static MemorySegment command(MemorySegment capsule, int opcode, int cid, long offset) {
        new SubmissionQueueEntry().wrap(capsule).clear().opcode(opcode)
                .flags(SubmissionQueueEntry.PSDT_SGL_MPTR_ADDRESS << SubmissionQueueEntry.FLAGS_PSDT_SHIFT)
                .cid(cid).nsid(1).cdw(10, (int) offset).cdw(11, (int) (offset >>> 32));
        sgl1(capsule).keyed(0, 0, 0, false);
        return capsule;
    }

    /** SGL1 of {@code capsule}: a keyed data block (subtype Fh when {@code invalidate}). */
    public static void keyed(MemorySegment capsule, long address, int length, int rkey, boolean invalidate) {
        sgl1(capsule).keyed(address, length, rkey, invalidate);
    }

    /** SGL1 of {@code capsule}: in-capsule data at {@code offset}, {@code length} bytes. */
    public static void inCapsule(MemorySegment capsule, long offset, int length) {
        sgl1(capsule).inCapsule(offset, length);
    }

    /**
     * SGL1 of {@code capsule}: a Last Segment descriptor for a list of {@code count} descriptors at {@code offset}
     * in the in-capsule data (write them with {@link #listEntry}), as SPDK's host sends a scattered buffer. Send
     * the capsule with at least {@code offset + 16 * count} bytes of in-capsule data.
     */
    public static void lastSegment(MemorySegment capsule, long offset, int count) {
        sgl1(capsule).lastSegment(offset, count * SglDescriptor.SIZE);
    }

    /** Entry {@code i} of a list at {@code offset} in the in-capsule data of {@code capsule}, to write. */
    public static SglDescriptor listEntry(MemorySegment capsule, long offset, int i) {
        return new SglDescriptor().wrap(capsule, SubmissionQueueEntry.SIZE + offset + (long) i * SglDescriptor.SIZE);
    }

    /**
     * Sends a Fabrics Connect of queue {@code qid} with {@code depth} entries (CID 1), its Connect data by keyed SGL
     * as the Linux host sends it (the host ID is the first 16 bytes of {@code hostNqn}); 0 or an errno. The caller
     * polls the response: CQE DW0 is the controller id.
     */
    public static int sendConnect(ScriptedInitiator host, int qid, int depth, int cntlid, String subNqn,
                                  String hostNqn) {
        ScriptedInitiator.HostBuffer d = host.exposeBuffer(FabricsCommand.CONNECT_DATA_SIZE,
                Access.LOCAL_WRITE | Access.REMOTE_READ, ScriptedInitiator.HostKey.REGION);
        MemorySegment m = d.memory();
        MemorySegment.copy(MemorySegment.ofArray(Arrays.copyOf(hostNqn.getBytes(StandardCharsets.UTF_8), 16)), 0, m,
                FabricsCommand.DATA_HOSTID, 16);
        Le.u16(m, FabricsCommand.DATA_CNTLID, cntlid);
        Le.utf8NulPadded(m, FabricsCommand.DATA_SUBNQN, FabricsCommand.NQN_FIELD_LENGTH, subNqn);
        Le.utf8NulPadded(m, FabricsCommand.DATA_HOSTNQN, FabricsCommand.NQN_FIELD_LENGTH, hostNqn);
        MemorySegment c = command(Opcodes.FABRICS, 1, 0);
        new SubmissionQueueEntry().wrap(c).nsid(0);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_CONNECT);
        Le.u16(c, FabricsCommand.CONNECT_QID, qid);
        Le.u16(c, FabricsCommand.CONNECT_SQSIZE, depth - 1);
        keyed(c, d.address(), FabricsCommand.CONNECT_DATA_SIZE, d.rkey(), false);
        return send(host, c, 0);
    }

    /** Sends the SQE of {@code capsule} and {@code inCapsuleBytes} bytes after it in one SEND; 0 or an errno. */
    public static int send(ScriptedInitiator host, MemorySegment capsule, int inCapsuleBytes) {
        return host.sendCapsule(capsule.asSlice(0, SubmissionQueueEntry.SIZE + inCapsuleBytes).toArray(JAVA_BYTE));
    }

    private static SglDescriptor sgl1(MemorySegment capsule) {
        return new SglDescriptor().wrap(capsule, SubmissionQueueEntry.SGL1);
    }
}
