package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

/**
 * Reads SGL1 of a command capsule into a request context, through the {@code nvme} flyweights. The RDMA
 * transport accepts three forms (NVMe RDMA, "Keyed SGL Data Block" and in-capsule data; NVMe Base 2.0, 4.1.2):
 * <ul>
 *   <li>a keyed data block (subtype 0h, or Fh when the host asks for its key back with SEND_WITH_INVALIDATE),
 *       whose data the target moves with RDMA READ or WRITE;</li>
 *   <li>a data block with the offset subtype, whose data came inside the capsule;</li>
 *   <li>a Last Segment descriptor with the offset subtype, pointing into the in-capsule data at a list of up to
 *       {@link SglDescriptor#MAX_DATA_DESCRIPTORS} keyed data blocks (what SPDK's host sends for a scattered
 *       buffer; SPDK rdma.c, {@code nvmf_rdma_request_fill_iovs_multi_sgl}). The list is checked here and read in
 *       place later ({@link RdmaRequest#descriptor}): nothing is copied.</li>
 * </ul>
 * Anything else is refused with a precise status. Pure; allocation-free. Status values are in {@link Status} form.
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
     * @param maxDescriptors the most keyed descriptors a Last Segment list may hold on this queue
     * @return 0, or the status to complete the command with (DNR set: the same command can never succeed)
     */
    static int parse(RdmaRequest r, int inCapsuleBytes, int maxIoSize, int maxDescriptors) {
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
            r.descriptorCount = 1;
            r.sglLength = length;
            // The host asked for the key back in SEND_WITH_INVALIDATE (the Linux host's default, identifier 4Fh).
            // Honour it even if the command later fails: the host then need not invalidate locally.
            r.invalidate = subtype == SglDescriptor.SUBTYPE_INVALIDATE_KEY && length != 0;
            r.invalidateKey = r.invalidate ? sgl.key() : 0;
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
        if (descriptorType == SglDescriptor.TYPE_LAST_SEGMENT) {
            // Only a list inside the capsule: the Address subtype would put it in host memory, which the RDMA
            // binding does not fetch (NVMe RDMA: SGLs are in the capsule or keyed).
            if (subtype != SglDescriptor.SUBTYPE_OFFSET) return Status.SGL_DESCRIPTOR_TYPE_INVALID;
            return parseList(r, sgl.address(), sgl.length(), inCapsuleBytes, maxIoSize, maxDescriptors);
        }
        return Status.SGL_DESCRIPTOR_TYPE_INVALID;
    }

    /**
     * A Last Segment list of {@code length} bytes at {@code offset} in the in-capsule data. Statuses as NVMe Base 2.0
     * defines them (figure "Status Code - Generic Command Status Values"): a segment length of zero or not a multiple
     * of 16 is an Invalid SGL Segment Descriptor, and so is a Segment or Last Segment descriptor inside the last
     * segment; more descriptors than MSDBD is an Invalid Number of SGL Descriptors; an offset past the in-capsule data
     * an SGL Offset Invalid and a list running past its end a Data SGL Length Invalid, as for in-capsule data; any
     * other descriptor than a keyed data block an SGL Descriptor Type Invalid; a total of zero or beyond the max I/O
     * size a Data SGL Length Invalid.
     */
    private static int parseList(RdmaRequest r, long offset, long length, int inCapsuleBytes, int maxIoSize,
                                 int maxDescriptors) {
        if (length == 0 || length % SglDescriptor.SIZE != 0) return Status.INVALID_SGL_SEGMENT_DESCRIPTOR;
        if (length / SglDescriptor.SIZE > maxDescriptors) return Status.INVALID_NUMBER_OF_SGL_DESCRIPTORS;
        if (offset < 0 || offset > inCapsuleBytes) return Status.SGL_OFFSET_INVALID;
        if (offset + length > inCapsuleBytes) return Status.DATA_SGL_LENGTH_INVALID;
        int count = (int) (length / SglDescriptor.SIZE);
        r.listOffset = (int) offset;
        r.descriptorCount = count;
        long total = 0;
        for (int i = 0; i < count; i++) {
            SglDescriptor d = r.descriptor(i);
            int type = d.type();
            int subtype = d.subtype();
            int refused = 0;
            if (type == SglDescriptor.TYPE_SEGMENT || type == SglDescriptor.TYPE_LAST_SEGMENT) {
                refused = Status.INVALID_SGL_SEGMENT_DESCRIPTOR;
            } else if (type != SglDescriptor.TYPE_KEYED_DATA_BLOCK
                    || (subtype != SglDescriptor.SUBTYPE_ADDRESS && subtype != SglDescriptor.SUBTYPE_INVALIDATE_KEY)) {
                refused = Status.SGL_DESCRIPTOR_TYPE_INVALID;
            }
            if (refused != 0) {
                // A malformed list says nothing reliable about its keys: invalidate none (a SEND_WITH_INVALIDATE of
                // a key the host does not hold fails its receive and its queue pair).
                r.invalidate = false;
                r.invalidateKey = 0;
                return refused;
            }
            int dataLength = d.keyedLength();
            total += dataLength;
            if (subtype == SglDescriptor.SUBTYPE_INVALIDATE_KEY && dataLength != 0) {
                // One SEND_WITH_INVALIDATE carries one R_Key (IBA chapter 10, Send with Invalidate), and a command
                // has one response: the last descriptor that asks gets it, as SPDK invalidates the key of a list's
                // last descriptor (SPDK rdma.c, nvmf_rdma_request_fill_iovs_multi_sgl). The other keys stay valid:
                // the receive completion tells the host which key went (IBV_WC_WITH_INV and its rkey), and a host
                // invalidates a key the response did not itself, as the Linux host does for its one key (kernel
                // host rdma.c, nvme_rdma_process_nvme_rsp). Invalidating nothing more is always safe for the host.
                r.invalidate = true;
                r.invalidateKey = d.key();
            }
        }
        r.keyed = true;
        r.sglLength = (int) total; // at most 16 x (16 MiB - 1)
        if (total == 0 || total > maxIoSize) return Status.DATA_SGL_LENGTH_INVALID;
        return 0;
    }
}
