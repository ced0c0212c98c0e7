package dev.nvmf.target.core;

import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** Builds a command capsule with the nvme flyweights: a 64-byte SQE, the SGL length, and host data if any. */
final class Cmd {
    final MemorySegment sqe = Arena.ofAuto().allocate(64);
    final SubmissionQueueEntry e = new SubmissionQueueEntry().wrap(sqe);
    /** Length the SGL describes (what the transport maps). */
    int sglLength;
    /** Host-to-controller data, or null. */
    byte[] hostData;

    private static int nextCid = 1;

    Cmd(int opcode) {
        e.opcode(opcode).flags(SubmissionQueueEntry.PSDT_SGL_MPTR_ADDRESS << SubmissionQueueEntry.FLAGS_PSDT_SHIFT)
                .cid(nextCid++ & 0xFFFF);
        keyed(0);
    }

    static Cmd admin(int opcode) { return new Cmd(opcode); }

    static Cmd fabrics(int fctype) {
        Cmd c = new Cmd(Opcodes.FABRICS);
        Le.u8(c.sqe, FabricsCommand.FCTYPE, fctype);
        return c;
    }

    Cmd nsid(int nsid) { e.nsid(nsid); return this; }
    Cmd cid(int cid) { e.cid(cid); return this; }
    Cmd cdw(int n, int v) { e.cdw(n, v); return this; }
    Cmd u8(int off, int v) { Le.u8(sqe, off, v); return this; }
    Cmd u16(int off, int v) { Le.u16(sqe, off, v); return this; }
    Cmd u32(int off, int v) { Le.u32(sqe, off, v); return this; }
    Cmd u64(int off, long v) { Le.u64(sqe, off, v); return this; }
    Cmd flags(int f) { e.flags(f); return this; }

    /** A keyed SGL (RDMA) of {@code length} bytes: for reads, the host buffer size. */
    Cmd keyed(int length) {
        new SglDescriptor().wrap(sqe, SubmissionQueueEntry.SGL1).keyed(0x1000, length, 0x1234, true);
        sglLength = length;
        return this;
    }

    /** Host data (in-capsule SGL of its length). */
    Cmd data(byte[] data) {
        new SglDescriptor().wrap(sqe, SubmissionQueueEntry.SGL1).inCapsule(0, data.length);
        sglLength = data.length;
        hostData = data;
        return this;
    }

    int cid() { return e.cid(); }

    // ------------------------------------------------------------------ common commands

    static Cmd connect(int qid, int sqsize, int kato, byte[] hostId, int cntlid, String subnqn, String hostnqn) {
        Cmd c = fabrics(Opcodes.FCTYPE_CONNECT).u16(FabricsCommand.CONNECT_QID, qid)
                .u16(FabricsCommand.CONNECT_SQSIZE, sqsize).u32(FabricsCommand.CONNECT_KATO, kato);
        return c.data(connectData(hostId, cntlid, subnqn, hostnqn));
    }

    static byte[] connectData(byte[] hostId, int cntlid, String subnqn, String hostnqn) {
        MemorySegment d = MemorySegment.ofArray(new byte[FabricsCommand.CONNECT_DATA_SIZE]);
        MemorySegment.copy(MemorySegment.ofArray(hostId), 0, d, FabricsCommand.DATA_HOSTID, 16);
        Le.u16(d, FabricsCommand.DATA_CNTLID, cntlid);
        Le.utf8NulPadded(d, FabricsCommand.DATA_SUBNQN, 256, subnqn);
        Le.utf8NulPadded(d, FabricsCommand.DATA_HOSTNQN, 256, hostnqn);
        return d.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    static Cmd propertyGet(int offset, boolean eightBytes) {
        return fabrics(Opcodes.FCTYPE_PROPERTY_GET).u8(FabricsCommand.PROPERTY_ATTRIB, eightBytes ? 1 : 0)
                .u32(FabricsCommand.PROPERTY_OFFSET, offset);
    }

    static Cmd propertySet(int offset, long value) {
        return fabrics(Opcodes.FCTYPE_PROPERTY_SET).u8(FabricsCommand.PROPERTY_ATTRIB, 0)
                .u32(FabricsCommand.PROPERTY_OFFSET, offset).u64(FabricsCommand.PROPERTY_VALUE, value);
    }

    static Cmd identify(int cns, int nsid) {
        return admin(Opcodes.ADMIN_IDENTIFY).nsid(nsid).cdw(10, cns).keyed(4096);
    }

    static Cmd getLogPage(int lid, int nsid, int bytes, long offset, boolean rae) {
        int numd = bytes / 4 - 1;
        return admin(Opcodes.ADMIN_GET_LOG_PAGE).nsid(nsid)
                .cdw(10, lid | (rae ? 1 << 15 : 0) | ((numd & 0xFFFF) << 16)).cdw(11, numd >>> 16)
                .cdw(12, (int) offset).cdw(13, (int) (offset >>> 32)).keyed(bytes);
    }

    /** Get Log Page with a log specific parameter (CDW10 bits 14:8). */
    static Cmd getLogPageLsp(int lid, int lsp, int nsid, int bytes, boolean rae) {
        Cmd c = getLogPage(lid, nsid, bytes, 0L, rae);
        return c.cdw(10, c.e.cdw10() | (lsp & 0x7F) << 8);
    }

    static Cmd setFeature(int fid, int cdw11) {
        return admin(Opcodes.ADMIN_SET_FEATURES).cdw(10, fid).cdw(11, cdw11);
    }

    static Cmd getFeature(int fid) {
        return admin(Opcodes.ADMIN_GET_FEATURES).cdw(10, fid);
    }

    static Cmd read(int nsid, long slba, int blocks, int bufferBytes) {
        return new Cmd(Opcodes.IO_READ).nsid(nsid).u64(40, slba).cdw(12, blocks - 1).keyed(bufferBytes);
    }

    static Cmd write(int nsid, long slba, int blocks, byte[] data) {
        return new Cmd(Opcodes.IO_WRITE).nsid(nsid).u64(40, slba).cdw(12, blocks - 1).data(data);
    }
}
