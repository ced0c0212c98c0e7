package dev.nvmf.target.core;

import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Status;

import java.lang.foreign.MemorySegment;

/** A completion as the host sees it: the 16-byte CQE plus the data sent (controller to host, on success). */
record Completion(int dw0, int dw1, int sqhd, int sqid, int cid, int status, byte[] data) {
    static Completion of(NvmeRequest r) {
        MemorySegment cqe = r.response();
        int status = Le.u16(cqe, 14);
        if ((status & 1) != 0) {
            throw new AssertionError("phase bit set on a fabrics CQE");
        }
        byte[] data = new byte[0];
        if (status == 0 && r.dataDirection() == NvmeRequest.DIRECTION_CONTROLLER_TO_HOST && r.dataLength() > 0) {
            data = r.data().asSlice(0, r.dataLength()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        }
        return new Completion(Le.u32(cqe, 0), Le.u32(cqe, 4), Le.u16(cqe, 8), Le.u16(cqe, 10), Le.u16(cqe, 12),
                status >>> 1, data);
    }

    MemorySegment dataSegment() {
        return MemorySegment.ofArray(data);
    }

    int sc() { return Status.codeOf(status); }
    int sct() { return Status.typeOf(status); }
    boolean dnr() { return Status.dnr(status); }

    @Override
    public String toString() {
        return "Completion[cid=" + cid + " sqid=" + sqid + " sqhd=" + sqhd + " dw0=0x" + Integer.toHexString(dw0)
                + " status=" + Status.describe(status) + " data=" + data.length + "B]";
    }
}
