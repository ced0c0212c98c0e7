package dev.nvmf.target.backend.rbd;

import dev.nvmf.verbs.Errno;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RBD backend against a real single-node cluster ({@link CephTestCluster}), as the least-privileged client a
 * target would be given (mon 'profile rbd', osd 'profile rbd pool=rbd'): data integrity, flush, FUA, write zeroes,
 * deallocate, transfers across object boundaries, the checks done before any call, and read-only opens.
 */
@ExtendWith(CephTestCluster.class)
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdBackendTest {
    private static final long MiB = 1 << 20;
    /** 4 MiB objects (order 22): offsets near multiples of it cross objects. */
    private static final long OBJECT = 4 * MiB;
    private static final long IMAGE_BYTES = 64 * MiB;

    private static TestImages images;
    private static String imageName;
    private static RbdBackend backend;

    @BeforeAll
    static void openImage() throws Exception {
        images = new TestImages(CephTestCluster.cluster());
        imageName = images.create("backend", IMAGE_BYTES);
        backend = RbdBackend.open(CephTestCluster.cluster().spec(imageName), false, 64);
    }

    @AfterAll
    static void closeImage() {
        if (backend != null) {
            backend.close();
        }
        if (images != null) {
            images.close();
        }
    }

    private static MemorySegment pattern(Arena arena, int length, long seed) {
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        MemorySegment s = arena.allocate(length, 4096);
        MemorySegment.copy(bytes, 0, s, JAVA_BYTE, 0, length);
        return s;
    }

    private static int write(long offset, MemorySegment data, int length, boolean fua) {
        Outcome o = new Outcome();
        backend.write(offset, data, length, fua, "w", o);
        return o.await();
    }

    private static int read(long offset, MemorySegment into, int length) {
        Outcome o = new Outcome();
        backend.read(offset, into, length, "r", o);
        return o.await();
    }

    private static void assertSameBytes(MemorySegment expected, MemorySegment actual, int length, String what) {
        long mismatch = MemorySegment.mismatch(expected, 0, length, actual, 0, length);
        assertEquals(-1, mismatch, what + ": first differing byte at " + mismatch);
    }

    private static void assertZeroes(MemorySegment s, int length, String what) {
        for (int i = 0; i < length; i++) {
            if (s.get(JAVA_BYTE, i) != 0) {
                throw new AssertionError(what + ": byte " + i + " is " + s.get(JAVA_BYTE, i) + ", not 0");
            }
        }
    }

    @Test
    void theImageGivesSizeLayoutAndName() {
        assertEquals(IMAGE_BYTES, backend.sizeBytes());
        assertEquals(OBJECT, backend.objectSize());
        assertEquals(22, backend.order());
        assertEquals(512, backend.logicalBlockSize());
        assertFalse(backend.readOnly());
        assertTrue(backend.exclusiveLock(), "the default features include exclusive-lock");
        assertTrue(backend.watchesHeader(), "a writable open watches the header");
        assertEquals("rbd:rbd/" + imageName, backend.describe());
    }

    @Test
    void readAfterWriteAtManyOffsetsIncludingAcrossObjects() {
        long[] offsets = {0, 4096, 512, OBJECT - 2048, 3 * OBJECT - 512, IMAGE_BYTES - 8192};
        try (Arena arena = Arena.ofConfined()) {
            for (int i = 0; i < offsets.length; i++) {
                MemorySegment data = pattern(arena, 8192, i);
                MemorySegment back = arena.allocate(8192, 4096);
                assertEquals(0, write(offsets[i], data, 8192, false), "write at " + offsets[i]);
                assertEquals(0, read(offsets[i], back, 8192), "read at " + offsets[i]);
                assertSameBytes(data, back, 8192, "at offset " + offsets[i]);
            }
        }
    }

    @Test
    void unalignedByteRangesAreExact() {
        // librbd addresses bytes: a 1000-byte write at an odd offset changes exactly those bytes.
        try (Arena arena = Arena.ofConfined()) {
            long base = 40 * MiB;
            MemorySegment background = pattern(arena, 4096, 7);
            assertEquals(0, write(base, background, 4096, false));
            MemorySegment patch = pattern(arena, 1000, 8);
            assertEquals(0, write(base + 333, patch, 1000, false));
            MemorySegment back = arena.allocate(4096, 4096);
            assertEquals(0, read(base, back, 4096));
            MemorySegment expected = arena.allocate(4096);
            expected.copyFrom(background);
            MemorySegment.copy(patch, 0, expected, 333, 1000);
            assertSameBytes(expected, back, 4096, "after the unaligned patch");
            MemorySegment small = arena.allocate(17);
            assertEquals(0, read(base + 333, small, 17));
            assertSameBytes(patch, small, 17, "unaligned read");
        }
    }

    @Test
    void largeTransfersSpanningObjectsRoundTrip() {
        try (Arena arena = Arena.ofShared()) {
            for (int length : new int[]{(int) MiB, (int) (4 * MiB) + 4096, (int) (9 * MiB)}) {
                long offset = OBJECT - 65536; // starts in one object, ends two or three objects later
                MemorySegment data = pattern(arena, length, length);
                MemorySegment back = arena.allocate(length, 4096);
                assertEquals(0, write(offset, data, length, false), length + "-byte write");
                assertEquals(0, read(offset, back, length), length + "-byte read");
                assertSameBytes(data, back, length, length + "-byte transfer");
            }
        }
    }

    @Test
    void flushAndForceUnitAccessWritesComplete() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment data = pattern(arena, 4096, 11);
            long before = backend.fuaFlushes();
            assertEquals(0, write(8 * MiB, data, 4096, true));
            assertEquals(before + 1, backend.fuaFlushes(), "a FUA write is followed by one flush");
            assertEquals(0, write(8 * MiB + 4096, data, 4096, false));
            assertEquals(before + 1, backend.fuaFlushes(), "a plain write is not");
            Outcome flush = new Outcome();
            backend.flush("f", flush);
            assertEquals(0, flush.await());
            assertEquals("f", flush.attachment());
            MemorySegment back = arena.allocate(4096, 4096);
            assertEquals(0, read(8 * MiB, back, 4096));
            assertSameBytes(data, back, 4096, "FUA-written data");
        }
    }

    @Test
    void writeZeroesReadsBackZeroesPartialAndWholeObjects() {
        try (Arena arena = Arena.ofShared()) {
            int span = (int) (3 * OBJECT);
            long base = 44 * MiB; // objects 11 to 13
            MemorySegment data = pattern(arena, span, 21);
            assertEquals(0, write(base, data, span, false));
            // Part of one object, then a range covering a whole object and parts of its neighbours.
            long[][] ranges = {{base + 4096, 8192}, {base + OBJECT - 512, OBJECT + 1024}};
            MemorySegment expected = arena.allocate(span);
            expected.copyFrom(data);
            for (long[] r : ranges) {
                Outcome o = new Outcome();
                backend.writeZeroes(r[0], r[1], "z", o);
                assertEquals(0, o.await(), "write zeroes " + r[0] + "+" + r[1]);
                expected.asSlice(r[0] - base, r[1]).fill((byte) 0);
            }
            MemorySegment back = arena.allocate(span, 4096);
            assertEquals(0, read(base, back, span));
            assertSameBytes(expected, back, span, "after write zeroes");
        }
    }

    @Test
    void deallocatedRangesReadBackZeroesWholeObjectsOrParts() {
        try (Arena arena = Arena.ofShared()) {
            int span = (int) OBJECT;
            long base = 24 * MiB; // object 6
            MemorySegment data = pattern(arena, span, 31);
            assertEquals(0, write(base, data, span, false));
            Outcome o = new Outcome();
            backend.deallocate(base, span, "d", o);
            assertEquals(0, o.await());
            MemorySegment back = arena.allocate(span, 4096);
            assertEquals(0, read(base, back, span));
            assertZeroes(back, span, "a deallocated whole object");
            assertTrue(backend.deallocatedReadsZeroes(), "what the core reports as DLFEAT 001b");
            // Parts of an object read back as zeroes too: rbd_skip_partial_discard is forced off (the core
            // reports DLFEAT "deallocated blocks read zeroes"); librbd's default would leave these two untouched.
            assertEquals(0, write(base, data, span, false));
            MemorySegment expected = arena.allocate(span);
            expected.copyFrom(data);
            long[][] ranges = {{512, 1024}, {65536 + 4096, 8192}, {span - 4096, 4096}};
            for (long[] r : ranges) {
                Outcome partial = new Outcome();
                backend.deallocate(base + r[0], r[1], "d", partial);
                assertEquals(0, partial.await(), "deallocate " + r[0] + "+" + r[1]);
                expected.asSlice(r[0], r[1]).fill((byte) 0);
            }
            assertEquals(0, read(base, back, span));
            assertSameBytes(expected, back, span, "after partial deallocations");
        }
    }

    @Test
    void completionsArriveOnLibrbdsThreadWithTheAttachment() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(4096, 4096);
            Outcome o = new Outcome();
            Object attachment = new Object();
            backend.read(0, buf, 4096, attachment, o);
            assertEquals(0, o.await());
            assertSame(attachment, o.attachment());
            assertNotSame(Thread.currentThread(), o.thread(), "the callback runs on librbd's thread, not inline");
            assertEquals(1, o.calls());
            assertEquals(0, backend.upcallFailures());
        }
    }

    @Test
    void badRangesAndBuffersFailInlineWithoutACall() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(8192, 4096);
            long size = backend.sizeBytes();
            assertInline(Errno.ERANGE, o -> backend.read(size - 4096, buf, 8192, null, o), "read past the end");
            assertInline(Errno.ERANGE, o -> backend.write(size, buf, 512, false, null, o), "write at the end");
            assertInline(Errno.ERANGE, o -> backend.writeZeroes(size - 512, 1024, null, o), "zeroes past the end");
            assertInline(Errno.ERANGE, o -> backend.deallocate(Long.MAX_VALUE - 10, 100, null, o), "huge offset");
            assertInline(Errno.EINVAL, o -> backend.read(-512, buf, 512, null, o), "negative offset");
            assertInline(Errno.EINVAL, o -> backend.writeZeroes(0, -1, null, o), "negative length");
            assertInline(Errno.EINVAL, o -> backend.read(0, null, 512, null, o), "no buffer");
            assertInline(Errno.ERANGE, o -> backend.read(0, buf, 16384, null, o), "buffer shorter than length");
            MemorySegment heap = MemorySegment.ofArray(new byte[512]);
            assertInline(Errno.EFAULT, o -> backend.write(0, heap, 512, false, null, o), "heap buffer");
        }
    }

    private interface Submit {
        void submit(Outcome o);
    }

    private static void assertInline(int errno, Submit submit, String what) {
        Outcome o = new Outcome();
        submit.submit(o);
        assertEquals(1, o.calls(), what + ": completed before the call returned");
        assertSame(Thread.currentThread(), o.thread(), what + ": on the caller's thread");
        assertEquals(-errno, o.await(), what + ": " + Errno.name(o.await()));
    }

    @Test
    void aReadOnlyOpenRefusesWritesAndAPoolOfOneSlotSaysEagain() throws Exception {
        try (RbdBackend ro = RbdBackend.open(CephTestCluster.cluster().spec(imageName), true, 1);
             Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(4096, 4096);
            assertTrue(ro.readOnly());
            Outcome w = new Outcome();
            ro.write(0, buf, 4096, false, null, w);
            assertEquals(-Errno.EROFS, w.await());
            Outcome z = new Outcome();
            ro.writeZeroes(0, 4096, null, z);
            assertEquals(-Errno.EROFS, z.await());
            Outcome d = new Outcome();
            ro.deallocate(0, 4096, null, d);
            assertEquals(-Errno.EROFS, d.await());
            Outcome f = new Outcome();
            ro.flush(null, f);
            assertEquals(0, f.await());
            Outcome r = new Outcome();
            ro.read(0, buf, 4096, null, r);
            // One slot: a second read while the first is in flight is refused with -EAGAIN, never queued or lost.
            Outcome second = new Outcome();
            ro.read(4096, buf, 512, null, second);
            int secondResult = second.await();
            assertEquals(0, r.await());
            assertTrue(secondResult == 0 || secondResult == -Errno.EAGAIN, Errno.name(secondResult));
        }
    }

    @Test
    void aSnapshotServesThePastReadOnly() throws Exception {
        String name = images.create("snap", 8 * MiB);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment before = pattern(arena, 4096, 41);
            MemorySegment after = pattern(arena, 4096, 42);
            try (RbdBackend live = RbdBackend.open(CephTestCluster.cluster().spec(name), false, 8)) {
                Outcome o = new Outcome();
                live.write(0, before, 4096, true, null, o);
                assertEquals(0, o.await());
                images.snapshot(name, "s1");
                Outcome o2 = new Outcome();
                live.write(0, after, 4096, true, null, o2);
                assertEquals(0, o2.await());
            }
            try (RbdBackend snap = RbdBackend.open(CephTestCluster.cluster().spec(name).withSnapshot("s1"), false, 8)) {
                assertTrue(snap.readOnly(), "a snapshot is always read-only");
                assertEquals("rbd:rbd/" + name + "@s1", snap.describe());
                MemorySegment back = arena.allocate(4096, 4096);
                Outcome r = new Outcome();
                snap.read(0, back, 4096, null, r);
                assertEquals(0, r.await());
                assertSameBytes(before, back, 4096, "the snapshot's data");
                Outcome w = new Outcome();
                snap.write(0, after, 4096, false, null, w);
                assertEquals(-Errno.EROFS, w.await());
            }
        }
    }

    @Test
    void afterCloseEveryOperationCompletesWithEnodev() throws Exception {
        RbdBackend b = RbdBackend.open(CephTestCluster.cluster().spec(imageName), true, 4);
        b.close();
        b.close(); // idempotent
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buf = arena.allocate(512);
            Outcome r = new Outcome();
            b.read(0, buf, 512, null, r);
            assertEquals(-Errno.ENODEV, r.await());
            Outcome f = new Outcome();
            b.flush(null, f);
            assertEquals(-Errno.ENODEV, f.await());
        }
    }
}
