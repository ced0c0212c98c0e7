package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RamBackendTest {
    private final Arena arena = Arena.ofConfined();
    private final Completions done = new Completions();

    @AfterEach
    void closeArena() {
        arena.close();
    }

    @Test
    void roundTripsAPatternAndCompletesInline() {
        try (RamBackend ram = new RamBackend(1 << 20)) {
            assertEquals(1 << 20, ram.sizeBytes());
            MemorySegment out = Patterns.fill(arena.allocate(8192), 7);
            MemorySegment in = arena.allocate(8192);
            Object tag = new Object();
            ram.write(4096, out, 8192, false, tag, done);
            // Inline: the callback ran on this thread before write returned.
            assertEquals(1, done.count());
            assertSame(tag, done.lastAttachment());
            assertSame(Thread.currentThread(), done.lastThread());
            assertEquals(0, done.lastResult());
            ram.read(4096, in, 8192, tag, done);
            assertEquals(0, done.lastResult());
            assertEquals(-1, out.mismatch(in));
            // Bytes around the written range stay zero.
            ram.read(0, in, 4096, tag, done);
            Patterns.assertZero(in, 0, 4096);
        }
    }

    @Test
    void writeZeroesAndDeallocateReadBackZeroes() {
        try (RamBackend ram = new RamBackend(512 * 1024)) {
            MemorySegment pattern = Patterns.fill(arena.allocate(512 * 1024), 3);
            ram.write(0, pattern, (int) pattern.byteSize(), true, null, done);
            assertEquals(0, done.lastResult());
            ram.writeZeroes(4096, 200_000, null, done);
            assertEquals(0, done.lastResult());
            ram.deallocate(300_000, 100_000, null, done);
            assertEquals(0, done.lastResult());
            MemorySegment in = arena.allocate(512 * 1024);
            ram.read(0, in, (int) in.byteSize(), null, done);
            assertEquals(0, done.lastResult());
            Patterns.assertSame(pattern, in, 0, 4096);
            Patterns.assertZero(in, 4096, 200_000);
            Patterns.assertSame(pattern, in, 204_096, 300_000 - 204_096);
            Patterns.assertZero(in, 300_000, 100_000);
            Patterns.assertSame(pattern, in, 400_000, 512 * 1024 - 400_000);
        }
    }

    @Test
    void badRangesComeBackAsNegativeErrnoNotExceptions() {
        try (RamBackend ram = new RamBackend(65536)) {
            MemorySegment buf = arena.allocate(8192);
            ram.read(65536 - 4096, buf, 8192, null, done);
            assertEquals(-Errno.ERANGE, done.lastResult());
            ram.write(Long.MAX_VALUE - 10, buf, 8192, false, null, done);
            assertEquals(-Errno.ERANGE, done.lastResult());
            ram.read(0, buf, 8193, null, done); // longer than the buffer
            assertEquals(-Errno.ERANGE, done.lastResult());
            ram.read(-1, buf, 512, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult());
            ram.writeZeroes(0, 65537, null, done);
            assertEquals(-Errno.ERANGE, done.lastResult());
            ram.deallocate(10, -1, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult());
            ram.read(0, null, 512, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult());
            assertEquals(7, done.count());
        }
    }

    @Test
    void readOnlyRefusesWritesAndClosedRefusesEverything() {
        RamBackend ram = new RamBackend(65536, true);
        assertTrue(ram.readOnly());
        MemorySegment buf = arena.allocate(4096);
        ram.write(0, buf, 4096, false, null, done);
        assertEquals(-Errno.EROFS, done.lastResult());
        ram.writeZeroes(0, 4096, null, done);
        assertEquals(-Errno.EROFS, done.lastResult());
        ram.read(0, buf, 4096, null, done);
        assertEquals(0, done.lastResult());
        ram.close();
        ram.close(); // idempotent
        ram.read(0, buf, 4096, null, done);
        assertEquals(-Errno.ENODEV, done.lastResult());
        ram.flush(null, done);
        assertEquals(-Errno.ENODEV, done.lastResult());
    }

    @Test
    void refusesANonPositiveSize() {
        assertThrows(IllegalArgumentException.class, () -> new RamBackend(0));
    }

    @Test
    void errnoNamesAndTexts() {
        assertEquals("ENOENT", Errno.name(-2));
        assertTrue(Errno.describe(Errno.ENOENT).startsWith("ENOENT (No such file"), Errno.describe(2));
    }

    /** Patterns that differ by position and seed so a misplaced block is caught. */
    static final class Patterns {
        static MemorySegment fill(MemorySegment s, int seed) {
            for (long i = 0; i < s.byteSize(); i += 8) {
                long v = (i * 0x9E3779B97F4A7C15L) ^ ((long) seed << 56) ^ seed;
                if (i + 8 <= s.byteSize()) {
                    s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, v == 0 ? 1 : v);
                } else {
                    for (long j = i; j < s.byteSize(); j++) {
                        s.set(ValueLayout.JAVA_BYTE, j, (byte) (seed + j | 1));
                    }
                }
            }
            return s;
        }

        static void assertZero(MemorySegment s, long offset, long length) {
            for (long i = offset; i < offset + length; i++) {
                if (s.get(ValueLayout.JAVA_BYTE, i) != 0) {
                    throw new AssertionError("byte " + i + " is not zero");
                }
            }
        }

        static void assertSame(MemorySegment expected, MemorySegment actual, long offset, long length) {
            long m = expected.asSlice(offset, length).mismatch(actual.asSlice(offset, length));
            if (m != -1) {
                throw new AssertionError("byte " + (offset + m) + " differs");
            }
        }
    }
}
