package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;

import dev.nvmf.target.backend.RamBackendTest.Patterns;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Block devices: the ioctl and open error paths on paths any machine has, and full I/O on a loop device over a temp
 * file where one can be set up (root and losetup); otherwise those tests are skipped, saying why.
 */
// A lost operation would hang close(): fail instead, on a separate thread so the hang cannot hold the build.
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BlockDeviceBackendTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final Completions done = new Completions();
    private final List<String> loops = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        arena.close();
        for (String loop : loops) {
            run("losetup", "-d", loop);
        }
    }

    @Test
    void aRegularFileIsNotABlockDevice() throws Exception {
        Path file = dir.resolve("plain.img");
        Files.write(file, new byte[4096]);
        BackendOpenException e = assertThrows(BackendOpenException.class,
                () -> BlockBackends.open(BackendSpec.device(file)));
        assertTrue(e.getMessage().startsWith(file + ": is not a block device: ioctl(BLKGETSIZE64)"), e.getMessage());
        assertTrue(e.getMessage().contains("ENOTTY"), e.getMessage());
        assertEquals(Errno.ENOTTY, e.errno());
        // A character device is not one either (and the descriptor was closed on the way out: no leak to see here,
        // but the error must be the ioctl's, not a crash).
        e = assertThrows(BackendOpenException.class,
                () -> BlockBackends.open(BackendSpec.device(Path.of("/dev/null")).withReadOnly(true)));
        assertTrue(e.getMessage().contains("is not a block device"), e.getMessage());
    }

    @Test
    void aMissingDeviceIsNamedWithItsErrno() {
        Path missing = Path.of("/dev/nvmf-backend-test-no-such-device");
        BackendOpenException e = assertThrows(BackendOpenException.class,
                () -> BlockBackends.open(BackendSpec.device(missing)));
        assertTrue(e.getMessage().startsWith(missing + ": open(O_RDWR|O_DIRECT|O_EXCL): ENOENT"), e.getMessage());
    }

    @Test
    void loopDeviceRoundTripsAndReportsItsGeometry() throws Exception {
        String loop = setUpLoop(8 * MIB, 512);
        try (BlockDeviceBackend dev = BlockDeviceBackend.open(BackendSpec.device(Path.of(loop)))) {
            assertEquals(8 * MIB, dev.sizeBytes());
            assertEquals(512, dev.logicalBlockSize());
            assertTrue(dev.physicalBlockSize() >= 512);
            assertTrue(dev.optimalIoSize() >= 0);
            assertFalse(dev.readOnly());
            assertTrue(dev.directIo(), dev.describe());
            assertEquals("bdev:" + loop, dev.describe());

            // Aligned buffer: straight O_DIRECT.
            MemorySegment out = Patterns.fill(arena.allocate(128 * 1024, 4096), 21);
            dev.write(MIB, out, (int) out.byteSize(), false, null, done);
            assertEquals(0, done.awaitNext(0));
            MemorySegment in = arena.allocate(128 * 1024, 4096);
            dev.read(MIB, in, (int) in.byteSize(), null, done);
            assertEquals(0, done.awaitNext(1));
            assertEquals(-1, out.mismatch(in));

            // A buffer at an odd address goes through the worker's bounce buffer, in more than one chunk.
            int big = AsyncFdBackend.BOUNCE_BUFFER_BYTES * 2 + 4096;
            MemorySegment odd = Patterns.fill(arena.allocate(big + 8, 4096).asSlice(3, big), 22);
            dev.write(2 * MIB, odd, big, true, null, done);
            assertEquals(0, done.awaitNext(2));
            MemorySegment oddIn = arena.allocate(big + 8, 4096).asSlice(5, big);
            dev.read(2 * MIB, oddIn, big, null, done);
            assertEquals(0, done.awaitNext(3));
            assertEquals(-1, odd.mismatch(oddIn));

            // O_DIRECT cannot address less than a logical block.
            dev.read(100, in, 512, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult());
            dev.write(0, out, 1000, false, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult());
            dev.read(8 * MIB - 512, in, 1024, null, done);
            assertEquals(-Errno.ERANGE, done.lastResult());

            long syncs = dev.fdatasyncCalls();
            // Counted before the flush is submitted: it completes on the backend's worker and may be counted already
            // by the time a later count() is read (then the wait for one more completion never ends).
            int before = done.count();
            dev.flush(null, done);
            assertEquals(0, done.awaitNext(before));
            assertEquals(syncs + 1, dev.fdatasyncCalls());
        }
        // The bytes are on the device: read them back through the backing file.
        byte[] back = new byte[128 * 1024];
        try (RandomAccessFile raf = new RandomAccessFile(loopBacking(loop).toFile(), "r")) {
            raf.seek(MIB);
            raf.readFully(back);
        }
        assertEquals(-1, MemorySegment.ofArray(back).mismatch(Patterns.fill(arena.allocate(128 * 1024), 21)));
    }

    @Test
    void loopDeviceWriteZeroesZeroesAndDeallocateDiscards() throws Exception {
        String loop = setUpLoop(4 * MIB, 4096);
        try (BlockDeviceBackend dev = BlockDeviceBackend.open(BackendSpec.device(Path.of(loop)))) {
            assertEquals(4096, dev.logicalBlockSize(), "losetup -b 4096");
            // A loop device discards (by punching its backing file) in 4 KiB units here, and, as every device since
            // Linux 4.12, does not promise that discarded blocks read back zeroes (BLKDISCARDZEROES 0).
            assertEquals(BlockDeviceBackend.queueAttribute(Path.of(loop), "discard_granularity"),
                    dev.deallocateGranularity());
            assertTrue(dev.deallocateGranularity() >= 512, "loop devices discard");
            assertFalse(dev.deallocatedReadsZeroes());
            MemorySegment pattern = Patterns.fill(arena.allocate(4 * MIB, 4096), 31);
            dev.write(0, pattern, 4 * MIB, false, null, done);
            assertEquals(0, done.awaitNext(0));
            dev.writeZeroes(8192, 3 * MIB / 2, null, done);
            assertEquals(0, done.awaitNext(1));
            dev.deallocate(2 * MIB, 65536, null, done);
            assertEquals(0, done.awaitNext(2));
            assertEquals(1, dev.discards(), "BLKDISCARD");
            assertEquals(0, dev.emulatedZeroes() + dev.zeroOutIoctls(), "Deallocate wrote nothing");
            // Write Zeroes with DEAC: fallocate(PUNCH_HOLE), the kernel's unmapping write-zeroes: zeroes guaranteed.
            dev.writeZeroes(3 * MIB, 65536, true, null, done);
            assertEquals(0, done.awaitNext(3));
            assertEquals(1, dev.punchedHoles());
            MemorySegment in = arena.allocate(4 * MIB, 4096);
            dev.read(0, in, 4 * MIB, null, done);
            assertEquals(0, done.awaitNext(4));
            Patterns.assertSame(pattern, in, 0, 8192);
            Patterns.assertZero(in, 8192, 3 * MIB / 2);
            Patterns.assertSame(pattern, in, 8192 + 3 * MIB / 2, 2 * MIB - 8192 - 3 * MIB / 2);
            Patterns.assertSame(pattern, in, 2 * MIB + 65536, MIB - 65536);
            Patterns.assertZero(in, 3 * MIB, 65536);
            Patterns.assertSame(pattern, in, 3 * MIB + 65536, MIB - 65536);
            dev.writeZeroes(512, 512, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult(), "below the 4096-byte logical block");
        }
    }

    @Test
    void loopDeviceZeroesThroughBlkZeroOutAndThroughWrites() throws Exception {
        String loop = setUpLoop(2 * MIB, 512);
        try (BlockDeviceBackend dev = BlockDeviceBackend.open(BackendSpec.device(Path.of(loop)))) {
            MemorySegment pattern = Patterns.fill(arena.allocate(2 * MIB, 4096), 41);
            dev.write(0, pattern, 2 * MIB, false, null, done);
            assertEquals(0, done.awaitNext(0));
            dev.disableOffloads(false);
            dev.writeZeroes(4096, 65536, null, done);
            assertEquals(0, done.awaitNext(1));
            assertEquals(1, dev.zeroOutIoctls(), "BLKZEROOUT");
            dev.disableOffloads(true);
            dev.writeZeroes(MIB, 512 * 3, null, done);
            assertEquals(0, done.awaitNext(2));
            assertEquals(1, dev.emulatedZeroes(), "written zeroes");
            // Deallocate without BLKDISCARD does nothing and says so at once; it never writes.
            dev.deallocate(MIB + 4096, 4096, null, done);
            assertEquals(-Errno.EOPNOTSUPP, done.awaitNext(3));
            assertEquals(1, dev.emulatedZeroes());
            MemorySegment in = arena.allocate(2 * MIB, 4096);
            dev.read(0, in, 2 * MIB, null, done);
            assertEquals(0, done.awaitNext(4));
            Patterns.assertSame(pattern, in, 0, 4096);
            Patterns.assertZero(in, 4096, 65536);
            Patterns.assertSame(pattern, in, 4096 + 65536, MIB - 4096 - 65536);
            Patterns.assertZero(in, MIB, 512 * 3);
            Patterns.assertSame(pattern, in, MIB + 1536, MIB - 1536);
        }
    }

    @Test
    void loopDeviceIsOpenedExclusivelyAndReadOnlyOnRequest() throws Exception {
        String loop = setUpLoop(MIB, 512);
        try (BlockDeviceBackend dev = BlockDeviceBackend.open(BackendSpec.device(Path.of(loop)))) {
            BackendOpenException e = assertThrows(BackendOpenException.class,
                    () -> BlockDeviceBackend.open(BackendSpec.device(Path.of(loop))));
            assertTrue(e.getMessage().contains("O_EXCL") && e.getMessage().contains("EBUSY"), e.getMessage());
            assertEquals(MIB, dev.sizeBytes());
        }
        try (BlockDeviceBackend ro = BlockDeviceBackend.open(BackendSpec.device(Path.of(loop)).withReadOnly(true))) {
            assertTrue(ro.readOnly());
            MemorySegment buf = arena.allocate(4096, 4096);
            ro.write(0, buf, 4096, false, null, done);
            assertEquals(-Errno.EROFS, done.lastResult());
            ro.read(0, buf, 4096, null, done);
            assertEquals(0, done.awaitNext(1));
        }
    }

    @Test
    void aGrownLoopDeviceIsSeenByRevalidate() throws Exception {
        String loop = setUpLoop(MIB, 512);
        try (BlockDeviceBackend dev = BlockDeviceBackend.open(BackendSpec.device(Path.of(loop)))) {
            assertEquals(MIB, dev.revalidateSize(), "unchanged");
            try (RandomAccessFile raf = new RandomAccessFile(loopBacking(loop).toFile(), "rw")) {
                raf.setLength(3 * MIB);
            }
            Result r = run("losetup", "-c", loop);
            assertEquals(0, r.rc, r.output);
            assertEquals(MIB, dev.sizeBytes(), "the size read at open, until revalidated");
            assertEquals(3 * MIB, dev.revalidateSize(), "BLKGETSIZE64 again");
            assertEquals(3 * MIB, dev.sizeBytes());
            MemorySegment buf = Patterns.fill(arena.allocate(4096, 4096), 51);
            dev.write(2 * MIB, buf, 4096, false, null, done);
            assertEquals(0, done.awaitNext(0), "the new blocks take writes");
        }
    }

    /** Attaches a loop device over a new zero-filled temp file, or skips the test saying why it cannot. */
    private String setUpLoop(long size, int sectorSize) throws Exception {
        Path image = dir.resolve("loop-" + loops.size() + ".img");
        try (RandomAccessFile raf = new RandomAccessFile(image.toFile(), "rw")) {
            raf.setLength(size);
        }
        Result r;
        try {
            r = run("losetup", "-f", "--show", "-b", Integer.toString(sectorSize), image.toString());
        } catch (IOException e) {
            r = new Result(-1, e.toString());
        }
        Assumptions.assumeTrue(r.rc == 0 && r.output.startsWith("/dev/loop"),
                "block-device I/O tests skipped: no loop device could be set up (needs root and losetup): "
                        + r.output.trim());
        String loop = r.output.trim();
        loops.add(loop);
        return loop;
    }

    private Path loopBacking(String loop) throws Exception {
        return Path.of(Files.readString(Path.of("/sys/block/" + Path.of(loop).getFileName() + "/loop/backing_file"))
                .trim());
    }

    private record Result(int rc, String output) {
    }

    private static Result run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Result(-1, "timed out: " + String.join(" ", command));
        }
        return new Result(p.exitValue(), out);
    }
}
