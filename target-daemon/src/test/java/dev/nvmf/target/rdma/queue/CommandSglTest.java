package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.nvme.Status;
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
        assertEquals(0, CommandSgl.parse(r, 0, 128 * 1024));
        assertTrue(r.keyed);
        assertTrue(r.invalidate);
        assertEquals(0x1122334455667788L, r.remoteAddress);
        assertEquals(4096, r.sglLength);
        assertEquals(0xCAFE01, r.remoteKey);
    }

    @Test
    void keyedPlainAndZeroLength() {
        sqe(0x18, 0x40, 0, 0, 0);
        assertEquals(0, CommandSgl.parse(r, 0, 4096));
        assertTrue(r.keyed);
        assertFalse(r.invalidate);
        assertEquals(0, r.sglLength);
        sqe(0x02, 0x4F, 0, 0, 0x55);
        assertEquals(0, CommandSgl.parse(r, 0, 4096));
        assertFalse(r.invalidate, "nothing registered for a zero-length transfer: no invalidate");
    }

    @Test
    void keyedTooLong() {
        sqe(0x02, 0x40, 0, 0, 0);
        r.command.set(JAVA_BYTE, 34, (byte) 0x01); // 64 KiB
        assertEquals(Status.DATA_SGL_LENGTH_INVALID, CommandSgl.parse(r, 0, 32 * 1024));
    }

    @Test
    void inCapsuleOffsetAndLengthChecks() {
        sqe(0x01, 0x01, 0, 4096, 0);
        assertEquals(0, CommandSgl.parse(r, 4096, 4096));
        assertTrue(r.inCapsule);
        assertEquals(4096, r.sglLength);
        sqe(0x01, 0x01, 4097, 0, 0);
        assertEquals(Status.SGL_OFFSET_INVALID, CommandSgl.parse(r, 4096, 4096));
        sqe(0x01, 0x01, 16, 4096, 0);
        assertEquals(Status.DATA_SGL_LENGTH_INVALID, CommandSgl.parse(r, 4096, 4096));
        // a read cannot carry in-capsule data
        sqe(0x02, 0x01, 0, 512, 0);
        assertEquals(Status.INVALID_FIELD, CommandSgl.parse(r, 4096, 4096));
        // Fabrics Connect (fctype 0x01) is host-to-controller
        sqe(0x7F, 0x01, 0, 1024, 0);
        r.command.set(JAVA_BYTE, 4, (byte) 0x01);
        assertEquals(0, CommandSgl.parse(r, 1024, 4096));
    }

    @Test
    void unsupportedDescriptorTypes() {
        sqe(0x01, 0x30, 0, 32, 0); // Last Segment: MSDBD is 1
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 0, 4096));
        sqe(0x01, 0x00, 0, 32, 0); // data block, address subtype
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 0, 4096));
        sqe(0x01, 0x41, 0, 32, 0); // keyed with offset subtype
        assertEquals(Status.SGL_DESCRIPTOR_TYPE_INVALID, CommandSgl.parse(r, 0, 4096));
        assertEquals(0x4011, Status.SGL_DESCRIPTOR_TYPE_INVALID);
    }

    @Test
    void statusesOnTheWireKeepDnr() {
        // The values the transport has always answered with (SC | DNR): the host must not retry these commands.
        assertEquals(0x4002, Status.INVALID_FIELD);
        assertEquals(0x400F, Status.DATA_SGL_LENGTH_INVALID);
        assertEquals(0x4016, Status.SGL_OFFSET_INVALID);
    }
}
