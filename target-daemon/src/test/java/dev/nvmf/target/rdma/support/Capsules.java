package dev.nvmf.target.rdma.support;

import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.verbs.initiator.ScriptedInitiator;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

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

    /** Sends the SQE of {@code capsule} and {@code inCapsuleBytes} bytes after it in one SEND; 0 or an errno. */
    public static int send(ScriptedInitiator host, MemorySegment capsule, int inCapsuleBytes) {
        return host.sendCapsule(capsule.asSlice(0, SubmissionQueueEntry.SIZE + inCapsuleBytes).toArray(JAVA_BYTE));
    }

    private static SglDescriptor sgl1(MemorySegment capsule) {
        return new SglDescriptor().wrap(capsule, SubmissionQueueEntry.SGL1);
    }
}
