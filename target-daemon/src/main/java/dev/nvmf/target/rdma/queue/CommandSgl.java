package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

/**
 * Reads SGL1 of a command capsule into a request context, through the {@code nvme} flyweights. The RDMA
 * transport accepts two descriptors (NVMe RDMA, "Keyed SGL Data Block" and in-capsule data): a keyed data block
 * (subtype 0h, or Fh when the host asks for its key back with SEND_WITH_INVALIDATE), whose data the target moves
 * with RDMA READ or WRITE, and a data block with the offset subtype, whose data came inside the capsule. Anything
 * else is refused with a precise status. Pure; allocation-free. Status values are in {@link Status} form.
 */
final class CommandSgl {
    private CommandSgl() {}

    /**
     * Whether the command moves data host-to-controller, from bit 0 of its opcode (for Fabrics commands of
     * FCTYPE), as the kernel's {@code nvme_is_write}. Only such commands may carry in-capsule data.
     */
    static boolean isWrite(SubmissionQueueEntry sqe) {
        int opcode = sqe.opcode();
        int code = opcode == Opcodes.FABRICS ? Le.u8(sqe.segment(), FabricsCommand.FCTYPE) : opcode;
        return (Opcodes.direction(code) & 1) != 0;
    }

    /**
     * Parses SGL1 of {@code r}'s command, received with {@code inCapsuleBytes} bytes after the SQE.
     *
     * @return 0, or the status to complete the command with (DNR set: the same command can never succeed)
     */
    static int parse(RdmaRequest r, int inCapsuleBytes, int maxIoSize) {
        r.clearSgl();
        SglDescriptor sgl = r.sgl1;
        int descriptorType = sgl.type();
        int subtype = sgl.subtype();
        if (descriptorType == SglDescriptor.TYPE_KEYED_DATA_BLOCK) {
            if (subtype != SglDescriptor.SUBTYPE_ADDRESS && subtype != SglDescriptor.SUBTYPE_INVALIDATE_KEY) {
                return Status.SGL_DESCRIPTOR_TYPE_INVALID;
            }
            int length = sgl.keyedLength();
            r.keyed = true;
            r.remoteAddress = sgl.address();
            r.remoteKey = sgl.key();
            r.sglLength = length;
            // The host asked for the key back in SEND_WITH_INVALIDATE (the Linux host's default, identifier 4Fh).
            // Honour it even if the command later fails: the host then need not invalidate locally.
            r.invalidate = subtype == SglDescriptor.SUBTYPE_INVALIDATE_KEY && length != 0;
            if (length > maxIoSize) return Status.DATA_SGL_LENGTH_INVALID;
            return 0;
        }
        if (descriptorType == SglDescriptor.TYPE_DATA_BLOCK && subtype == SglDescriptor.SUBTYPE_OFFSET) {
            long offset = sgl.address();
            long length = sgl.length();
            if (!isWrite(r.sqe)) return Status.INVALID_FIELD; // in-capsule data only flows host to controller
            if (offset < 0 || offset > inCapsuleBytes) return Status.SGL_OFFSET_INVALID;
            if (offset + length > inCapsuleBytes) return Status.DATA_SGL_LENGTH_INVALID;
            r.inCapsule = true;
            r.sglOffset = (int) offset;
            r.sglLength = (int) length;
            return 0;
        }
        return Status.SGL_DESCRIPTOR_TYPE_INVALID;
    }
}
