package dev.nvmf.target.daemon.selftest;

import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.initiator.ScriptedInitiator;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * One NVMe/RDMA queue of the selftest's host, on the byte-level {@link ScriptedInitiator}: the RDMA CM private
 * data of the connect request (NVMe RDMA), Fabrics Connect with its data by keyed SGL (the target RDMA READs it,
 * as from the Linux host), Property Get/Set, and commands with keyed or in-capsule data, one at a time. Every wait is bounded; a
 * failure throws {@link CheckFailure} with what went wrong in the operator's words.
 */
final class HostQueue implements AutoCloseable {
    /** A capsule: the SQE and up to 8 KiB of in-capsule data (the target's default in_capsule_data_size). */
    static final int CAPSULE_SIZE = SubmissionQueueEntry.SIZE + 8192;
    /** NVMe/RDMA responses are 16-byte CQEs; a little room for a target that sends more. */
    private static final int RESPONSE_BUFFER = 64;

    /** A response: the CQE, whether its SEND invalidated the command's key, and the data buffer of a read. */
    record Response(CompletionQueueEntry cqe, boolean withInvalidate, int invalidatedRkey,
                    ScriptedInitiator.HostBuffer data) {
        int status() { return cqe.status(); }
    }

    final ScriptedInitiator rdma;
    final int qid;
    private final long timeoutMillis;
    private final String hostNqn;
    private final byte[] hostId;
    private int nextCid = 1;

    /**
     * Connects queue {@code qid} of {@code depth} entries over the RDMA CM.
     *
     * @param responderResources RDMA READs the host answers (the target's READ depth on this queue)
     */
    HostQueue(RdmaProvider provider, InetSocketAddress source, InetSocketAddress target, int qid, int depth,
              int responderResources, String hostNqn, byte[] hostId, long timeoutMillis) {
        this.qid = qid;
        this.timeoutMillis = timeoutMillis;
        this.hostNqn = hostNqn;
        this.hostId = hostId.clone();
        byte[] privateData = new ConnectRequestData(0, qid, depth, depth - 1, qid == 0 ? 0xFFFF : 1).encode();
        this.rdma = new ScriptedInitiator(provider, ScriptedInitiator.Options.to(target).source(source)
                .privateData(privateData).rdmaDepths(responderResources, 0).depths(depth, depth)
                .bufferSizes(RESPONSE_BUFFER, CAPSULE_SIZE));
        ScriptedInitiator.State state = rdma.connect(timeoutMillis);
        if (state != ScriptedInitiator.State.CONNECTED) {
            String events = rdma.cmEvents().toString();
            rdma.close();
            throw new CheckFailure("RDMA CM connect of queue " + qid + " to " + target + " ended " + state
                    + " (events " + events + ", last status " + rdma.lastEventStatus() + ")");
        }
    }

    /** A fresh capsule: {@code opcode}, the next CID, NSID {@code nsid}, a zero-length keyed SGL1 ("no data"). */
    MemorySegment command(int opcode, int nsid) {
        MemorySegment c = MemorySegment.ofArray(new byte[CAPSULE_SIZE]);
        new SubmissionQueueEntry().wrap(c).clear().opcode(opcode)
                .flags(SubmissionQueueEntry.PSDT_SGL_MPTR_ADDRESS << SubmissionQueueEntry.FLAGS_PSDT_SHIFT)
                .cid(nextCid++ & 0xFFFF).nsid(nsid);
        sgl1(c).keyed(0, 0, 0, false);
        return c;
    }

    /** SGL1 of {@code capsule}: a keyed data block over {@code buffer} (subtype Fh when {@code invalidate}). */
    static void keyed(MemorySegment capsule, ScriptedInitiator.HostBuffer buffer, boolean invalidate) {
        sgl1(capsule).keyed(buffer.address(), buffer.length(), buffer.rkey(), invalidate);
    }

    /** SGL1 of {@code capsule}: {@code data} in the capsule, after the SQE. */
    static void inCapsule(MemorySegment capsule, byte[] data) {
        sgl1(capsule).inCapsule(0, data.length);
        MemorySegment.copy(MemorySegment.ofArray(data), 0, capsule, SubmissionQueueEntry.SIZE, data.length);
    }

    private static SglDescriptor sgl1(MemorySegment capsule) {
        return new SglDescriptor().wrap(capsule, SubmissionQueueEntry.SGL1);
    }

    /**
     * Sends {@code capsule} with {@code inCapsuleBytes} of data and waits for its response.
     *
     * @param data the host buffer the command's keyed SGL names (returned with the response), or null
     */
    Response execute(String what, MemorySegment capsule, int inCapsuleBytes, ScriptedInitiator.HostBuffer data) {
        int cid = Le.u16(capsule, SubmissionQueueEntry.CID);
        int rc = rdma.sendCapsule(capsule.asSlice(0, SubmissionQueueEntry.SIZE + inCapsuleBytes).toArray(JAVA_BYTE));
        if (rc != 0) {
            throw new CheckFailure(what + ": posting the command capsule failed: errno " + rc);
        }
        ScriptedInitiator.Response r = rdma.awaitResponse(timeoutMillis);
        if (r == null) {
            throw new CheckFailure(what + ": no response within " + timeoutMillis + " ms (queue " + qid + ", "
                    + rdma.state() + ", receive errors " + rdma.receiveErrors() + ")");
        }
        CompletionQueueEntry cqe = new CompletionQueueEntry().wrap(MemorySegment.ofArray(r.data()));
        if (cqe.cid() != cid) {
            throw new CheckFailure(what + ": response for CID " + cqe.cid() + ", expected " + cid);
        }
        return new Response(cqe, r.withInvalidate(), r.invalidatedRkey(), data);
    }

    /** {@link #execute} that fails unless the status is success. */
    Response expectSuccess(String what, MemorySegment capsule, int inCapsuleBytes, ScriptedInitiator.HostBuffer data) {
        Response r = execute(what, capsule, inCapsuleBytes, data);
        if (r.status() != Status.SUCCESS) {
            throw new CheckFailure(what + " failed: " + Status.describe(r.status()));
        }
        return r;
    }

    /** Fabrics Connect of this queue; returns the controller ID the target assigned (DW0 bits 15:0). */
    int connect(String subsystemNqn, int cntlid, int sqsize) {
        MemorySegment c = command(Opcodes.FABRICS, 0);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_CONNECT);
        Le.u16(c, FabricsCommand.CONNECT_RECFMT, 0);
        Le.u16(c, FabricsCommand.CONNECT_QID, qid);
        Le.u16(c, FabricsCommand.CONNECT_SQSIZE, sqsize);
        Le.u32(c, FabricsCommand.CONNECT_KATO, 0);
        // The region's own key: the Connect data must be readable before any window could be bound.
        ScriptedInitiator.HostBuffer data = rdma.exposeBuffer(FabricsCommand.CONNECT_DATA_SIZE,
                Access.LOCAL_WRITE | Access.REMOTE_READ, ScriptedInitiator.HostKey.REGION);
        MemorySegment d = data.memory();
        d.fill((byte) 0);
        MemorySegment.copy(MemorySegment.ofArray(hostId), 0, d, FabricsCommand.DATA_HOSTID,
                FabricsCommand.DATA_HOSTID_LENGTH);
        Le.u16(d, FabricsCommand.DATA_CNTLID, cntlid);
        Le.utf8NulPadded(d, FabricsCommand.DATA_SUBNQN, FabricsCommand.NQN_FIELD_LENGTH, subsystemNqn);
        Le.utf8NulPadded(d, FabricsCommand.DATA_HOSTNQN, FabricsCommand.NQN_FIELD_LENGTH, hostNqn);
        keyed(c, data, false);
        try {
            return expectSuccess("Fabrics Connect of queue " + qid, c, 0, null).cqe().dw0() & 0xFFFF;
        } finally {
            data.close();
        }
    }

    /** Property Set of a 4-byte property. */
    void propertySet(int offset, int value) {
        MemorySegment c = command(Opcodes.FABRICS, 0);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_PROPERTY_SET);
        Le.u8(c, FabricsCommand.PROPERTY_ATTRIB, 0);
        Le.u32(c, FabricsCommand.PROPERTY_OFFSET, offset);
        Le.u64(c, FabricsCommand.PROPERTY_VALUE, value & 0xFFFF_FFFFL);
        expectSuccess("Property Set 0x" + Integer.toHexString(offset), c, 0, null);
    }

    /** Property Get of a 4-byte property. */
    int propertyGet(int offset) {
        MemorySegment c = command(Opcodes.FABRICS, 0);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_PROPERTY_GET);
        Le.u8(c, FabricsCommand.PROPERTY_ATTRIB, 0);
        Le.u32(c, FabricsCommand.PROPERTY_OFFSET, offset);
        return expectSuccess("Property Get 0x" + Integer.toHexString(offset), c, 0, null).cqe().dw0();
    }

    /**
     * A host buffer of {@code length} bytes the target reads or writes: behind a type-2 window the target may
     * invalidate when {@code invalidatable} (and the device has windows), otherwise the region's own key.
     */
    ScriptedInitiator.HostBuffer buffer(int length, boolean invalidatable) {
        int access = Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE;
        return rdma.exposeBuffer(length, access,
                invalidatable ? ScriptedInitiator.HostKey.WINDOW : ScriptedInitiator.HostKey.REGION);
    }

    @Override
    public void close() {
        rdma.close();
    }
}
