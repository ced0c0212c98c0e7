package dev.nvmf.target.nvme;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The flyweights put fields at the specification's byte offsets, little-endian. */
class FlyweightsTest {
    @Test
    void submissionQueueEntryFields() {
        MemorySegment s = Arena.ofAuto().allocate(64);
        new SubmissionQueueEntry().wrap(s).opcode(0x02).flags(0x40).cid(0xBEEF).nsid(7).cdw(10, 0x11223344)
                .cdw(12, 0x4000_0007);
        assertEquals(0x02, s.get(ValueLayout.JAVA_BYTE, 0));
        assertEquals((byte) 0xEF, s.get(ValueLayout.JAVA_BYTE, 2));
        assertEquals((byte) 0xBE, s.get(ValueLayout.JAVA_BYTE, 3));
        assertEquals(7, s.get(ValueLayout.JAVA_BYTE, 4));
        assertEquals(0x44, s.get(ValueLayout.JAVA_BYTE, 40));
        SubmissionQueueEntry e = new SubmissionQueueEntry().wrap(s);
        assertEquals(1, e.psdt());
        assertEquals(0, e.fuse());
        assertEquals(7, e.nlb());
        assertEquals(0x11223344L, e.slba());
    }

    @Test
    void completionStatusEncoding() {
        MemorySegment s = Arena.ofAuto().allocate(16);
        CompletionQueueEntry c = new CompletionQueueEntry().wrap(s);
        c.set(0x00010082, 0, 5, 1, 0x1234, Status.CONNECT_INVALID_PARAMETERS);
        // status field: phase 0, SC 0x82 in bits 8:1, SCT 1 in bits 11:9, DNR bit 15
        assertEquals((0x82 << 1) | (1 << 9) | (1 << 15), Le.u16(s, 14));
        assertEquals(Status.CONNECT_INVALID_PARAMETERS, c.status());
        assertEquals(0x82, Status.codeOf(c.status()));
        assertEquals(1, Status.typeOf(c.status()));
        assertEquals(5, Le.u16(s, 8));
        assertEquals(1, Le.u16(s, 10));
        assertEquals(0x1234, Le.u16(s, 12));
        assertEquals("SCT 1 SC 0x82 DNR", Status.describe(c.status()));
    }

    @Test
    void keyedAndInCapsuleSglDescriptors() {
        MemorySegment s = Arena.ofAuto().allocate(64);
        SglDescriptor d = new SglDescriptor().wrap(s, SubmissionQueueEntry.SGL1);
        d.keyed(0x1122334455667788L, 0x123456, 0xCAFEBABE, true);
        assertEquals(0x4F, Le.u8(s, 24 + 15));
        assertEquals(0x56, Le.u8(s, 24 + 8));
        assertEquals(0x12, Le.u8(s, 24 + 10));
        assertEquals(0x123456, d.keyedLength());
        assertEquals(0xCAFEBABE, d.key());
        assertEquals(SglDescriptor.TYPE_KEYED_DATA_BLOCK, d.type());
        assertEquals(SglDescriptor.SUBTYPE_INVALIDATE_KEY, d.subtype());
        assertEquals(0x123456, d.dataLength());
        d.inCapsule(0, 4096);
        assertEquals(0x01, Le.u8(s, 24 + 15));
        assertEquals(4096, d.dataLength());
        assertEquals(SglDescriptor.TYPE_DATA_BLOCK, d.type());
        assertEquals(SglDescriptor.SUBTYPE_OFFSET, d.subtype());
    }

    @Test
    void stringFields() {
        MemorySegment s = MemorySegment.ofArray(new byte[32]);
        Le.asciiSpacePadded(s, 0, 8, "abc\u00e9");
        assertEquals("abc?", Le.asciiTrimmed(s, 0, 8));
        assertEquals(' ', (char) Le.u8(s, 7));
        Le.utf8NulPadded(s, 8, 8, "0123456789");
        assertEquals("0123456", Le.utf8NulTerminated(s, 8, 8), "always NUL-terminated");
        MemorySegment full = MemorySegment.ofArray(new byte[] {'a', 'b'});
        assertNull(Le.utf8NulTerminated(full, 0, 2));
        assertEquals(0x70F002, AsyncEvents.DISCOVERY_LOG_CHANGED);
        assertEquals(0x040002, AsyncEvents.NAMESPACE_CHANGED);
        assertEquals(7, LogPages.numberOfDwords(6 << 16, 0));
    }
}
