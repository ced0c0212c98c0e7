package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CommandSglTest {
    private final Arena arena = Arena.ofAuto();
    private final RdmaRequest r = new RdmaRequest(null, 0, arena.allocate(64 + 8192), arena.allocate(64),
            arena.allocate(RdmaRequest.WR_MEMORY));

    private MemorySegment sqe(int opcode, int typeByte, long addr, int length, int key) {
        MemorySegment s = r.command;
        s.fill((byte) 0);
        s.set(JAVA_BYTE, 0, (byte) opcode);
        s.set(JAVA_BYTE, 1, (byte) 0x40); // PSDT 01b: SGL
        s.set(JAVA_LONG_UNALIGNED, 24, addr);
        s.set(JAVA_INT_UNALIGNED, 32, length);
        s.set(JAVA_INT_UNALIGNED, 35, key);
        s.set(JAVA_BYTE, 39, (byte) typeByte);
        return s;
    }

    @Test
    void keyedWithInvalidate() {
        sqe(0x02, 0x4F, 0x1122334455667788L, 4096, 0xCAFE01);
        // length is 24-bit: the key's low byte overlays byte 35... write the length after the key.
        r.command.set(JAVA_BYTE, 32, (byte) 0x00);
        r.command.set(JAVA_BYTE, 33, (byte) 0x10);
        r.command.set(JAVA_BYTE, 34, (byte) 0x00);
        assertEquals(0, CommandSgl.parse(r, 0, 128 * 1024, 16));
        assertTrue(r.keyed);
        assertTrue(r.invalidate);
        assertEquals(1, r.descriptorCount);
        assertEquals(0x1122334455667788L, r.descriptor(0).address());
        assertEquals(4096, r.sglLength);
        assertEquals(0xCAFE01, r.descriptor(0).key());
        assertEquals(0xCAFE01, r.invalidateKey);
    }

    @Test
    void keyedPlainAndZeroLength() {
        sqe(0x18, 0x40, 0, 0, 0);
        assertEquals(0, CommandSgl.parse(r, 0, 4096, 16));
        assertTrue(r.keyed);
        assertFalse(r.invalidate);
        assertEquals(0, r.sglLength);
        sqe(0x02, 0x4F, 0, 0, 0x55);
        assertEquals(0, CommandSgl.parse(r, 0, 4096, 16));
        assertFalse(r.invalidate, "nothing registered for a zero-length transfer: no invalidate");
    }

    @Test
    void keyedTooLong() {
        sqe(0x02, 0x40, 0, 0, 0);
        r.command.set(JAVA_BYTE, 34, (byte) 0x01); // 64 KiB
        assertEquals(Status.DATA_SGL_LENGTH_INVALID, CommandSgl.parse(r, 0, 32 * 1024, 16));
    }

    @Test
    void inCapsuleOffsetAndLengthChecks() {
        sqe(0x01, 0x01, 0, 4096, 0);
        assertEquals(0, CommandSgl.parse(r, 4096, 4096, 16));
        assertTrue(r.inCapsule);
        assertEquals(4096, r.sglLength);
        sqe(0x01, 0x01, 4097, 0, 0);
        assertEquals(Status.SGL_OFFSET_INVALID, CommandSgl.parse(r, 4096, 4096, 16));
        sqe(0x01, 0x01, 16, 4096, 0);
        assertEquals(Status.DATA_SGL_LENGTH_INVALID, CommandSgl.parse(r, 4096, 4096, 16));
        // a read cannot carry in-capsule data
        sqe(0x02, 0x01, 0, 512, 0);
        assertEquals(Status.INVALID_FIELD, CommandSgl.parse(r, 4096, 4096, 16));
        // Fabrics Connect (fctype 0x01) is host-to-controller
        sqe(0x7F, 0x01, 0, 1024, 0);
        r.command.set(JAVA_BYTE, 4, (byte) 0x01);
        assertEquals(0, CommandSgl.parse(r, 1024, 4096, 16));
    }

    @Test
    void unsupportedDescriptorTypes() {
        sqe(0x01, 0x32, 0, 32, 0); // Last Segment with the address subtype: a list in host memory
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 64, 4096, 16));
        sqe(0x01, 0x20, 0, 32, 0); // Segment: more segments follow, never in a capsule
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 64, 4096, 16));
        sqe(0x01, 0x00, 0, 32, 0); // data block, address subtype
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 0, 4096, 16));
        sqe(0x01, 0x41, 0, 32, 0); // keyed with offset subtype
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 0, 4096, 16));
        assertEquals(0x4011, Status.SGL_DESCRIPTOR_TYPE_INVALID);
    }

    /** SGL1 of a write: a Last Segment list of {@code count} descriptors at {@code offset} in the in-capsule data. */
    private void list(int opcode, long offset, int bytes) {
        sqe(opcode, 0, 0, 0, 0);
        new SglDescriptor().wrap(r.command, SubmissionQueueEntry.SGL1).lastSegment(offset, bytes);
    }

    private SglDescriptor entry(long offset, int i) {
        return new SglDescriptor().wrap(r.inCapsuleData, offset + 16L * i);
    }

    @Test
    void lastSegmentListOfKeyedDescriptors() {
        list(0x01, 32, 3 * 16);
        entry(32, 0).keyed(0x1000, 4096, 0x11, false);
        entry(32, 1).keyed(0x9000, 512, 0x22, true);
        entry(32, 2).keyed(0x5000, 1024, 0x33, false);
        assertEquals(0, CommandSgl.parse(r, 32 + 48, 8192, 16));
        assertTrue(r.keyed);
        assertFalse(r.inCapsule);
        assertEquals(3, r.descriptorCount);
        assertEquals(4096 + 512 + 1024, r.sglLength, "the total of the descriptors' lengths");
        assertEquals(0x9000, r.descriptor(1).address());
        assertEquals(0x33, r.descriptor(2).key());
        assertEquals(1024, r.descriptor(2).keyedLength());
        assertTrue(r.invalidate, "descriptor 1 asked for its key to be invalidated");
        assertEquals(0x22, r.invalidateKey);
        // Two ask: one SEND_WITH_INVALIDATE carries one key, the last one's.
        entry(32, 2).keyed(0x5000, 1024, 0x33, true);
        assertEquals(0, CommandSgl.parse(r, 32 + 48, 8192, 16));
        assertEquals(0x33, r.invalidateKey);
        // A read may use a list too (data flows back with one RDMA WRITE per descriptor).
        list(0x02, 0, 16 * 16);
        for (int i = 0; i < 16; i++) entry(0, i).keyed(0x1000L * i, 256, i, false);
        assertEquals(0, CommandSgl.parse(r, 256, 8192, 16));
        assertEquals(16, r.descriptorCount);
        assertEquals(4096, r.sglLength);
        assertFalse(r.invalidate);
    }

    @Test
    void malformedListsAreRefusedWithTheSpecsStatus() {
        list(0x01, 0, 17 * 16);
        for (int i = 0; i < 17; i++) entry(0, i).keyed(0, 512, 1, false);
        assertEquals(Status.INVALID_NUMBER_OF_SGL_DESCRIPTORS, CommandSgl.parse(r, 17 * 16, 1 << 20, 16));
        assertEquals(0x400E, Status.INVALID_NUMBER_OF_SGL_DESCRIPTORS);
        list(0x01, 0, 4 * 16);
        for (int i = 0; i < 4; i++) entry(0, i).keyed(0, 512, 1, false);
        assertEquals(Status.INVALID_NUMBER_OF_SGL_DESCRIPTORS, CommandSgl.parse(r, 64, 1 << 20, 3),
                "fewer on a queue whose send queue cannot carry 16 WRITEs and the SEND");
        list(0x01, 0, 24);
        assertEquals(Status.INVALID_SGL_SEGMENT_DESCRIPTOR, CommandSgl.parse(r, 64, 1 << 20, 16), "not 16-byte units");
        assertEquals(0x400D, Status.INVALID_SGL_SEGMENT_DESCRIPTOR);
        list(0x01, 0, 0);
        assertEquals(Status.INVALID_SGL_SEGMENT_DESCRIPTOR, CommandSgl.parse(r, 64, 1 << 20, 16), "empty list");
        list(0x01, 80, 32);
        assertEquals(Status.SGL_OFFSET_INVALID, CommandSgl.parse(r, 64, 1 << 20, 16), "offset past the capsule");
        list(0x01, 48, 32);
        assertEquals(Status.DATA_SGL_LENGTH_INVALID, CommandSgl.parse(r, 64, 1 << 20, 16), "list past the capsule");
        list(0x01, 0, 32);
        entry(0, 0).keyed(0, 512, 1, true);
        entry(0, 1).inCapsule(0, 512);
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 64, 1 << 20, 16), "data block in list");
        assertFalse(r.invalidate, "a malformed list invalidates no key");
        entry(0, 1).lastSegment(0, 16);
        assertEquals(Status.INVALID_SGL_SEGMENT_DESCRIPTOR, CommandSgl.parse(r, 64, 1 << 20, 16), "nested segment");
        entry(0, 1).keyed(0, 512, 1, false);
        r.inCapsuleData.set(JAVA_BYTE, 16 + 15, (byte) 0x41); // keyed, offset subtype
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 64, 1 << 20, 16), "keyed offset");
        entry(0, 0).keyed(0, 0, 1, false);
        entry(0, 1).keyed(0, 0, 1, false);
        assertEquals(Status.DATA_SGL_LENGTH_INVALID, CommandSgl.parse(r, 64, 1 << 20, 16), "zero total");
        entry(0, 0).keyed(0, 4096, 1, false);
        entry(0, 1).keyed(0, 4097, 1, false);
        assertEquals(Status.DATA_SGL_LENGTH_INVALID, CommandSgl.parse(r, 64, 8192, 16), "total beyond max I/O");
        entry(0, 1).keyed(0, 4096, 1, false);
        assertEquals(0, CommandSgl.parse(r, 64, 8192, 16), "exactly max I/O");
    }

    @Test
    void statusesOnTheWireKeepDnr() {
        // The values the transport has always answered with (SC | DNR): the host must not retry these commands.
        assertEquals(0x4002, Status.INVALID_FIELD);
        assertEquals(0x400F, Status.DATA_SGL_LENGTH_INVALID);
        assertEquals(0x4016, Status.SGL_OFFSET_INVALID);
    }
}
