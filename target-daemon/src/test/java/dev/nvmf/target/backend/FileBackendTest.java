package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;

import dev.nvmf.target.backend.RamBackendTest.Patterns;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

// A lost operation would hang close(): fail instead, on a separate thread so the hang cannot hold the build.
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileBackendTest {
    private static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private final Completions done = new Completions();

    @AfterEach
    void closeArena() {
        arena.close();
    }

    /** O_DIRECT, the default. */
    private FileBackend create(long size) throws Exception {
        return FileBackend.open(BackendSpec.file(dir.resolve("ns.img"), size, true));
    }

    /** Through the page cache (buffered_io): any byte offset and length. */
    private FileBackend createBuffered(long size) throws Exception {
        return FileBackend.open(BackendSpec.file(dir.resolve("ns.img"), size, true).withBufferedIo(true));
    }

    /** The file status flags of an open descriptor, from /proc/self/fdinfo (octal, as the kernel prints them). */
    static int openFlags(int fd) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc/self/fdinfo/" + fd))) {
            if (line.startsWith("flags:")) {
                return Integer.parseInt(line.substring(6).trim(), 8);
            }
        }
        throw new AssertionError("no flags in /proc/self/fdinfo/" + fd);
    }

    @Test
    void oDirectIsTheDefaultAsInTheKernelTarget() throws Exception {
        try (FileBackend file = create(4 * MIB)) {
            assertTrue(file.directIo());
            assertFalse(file.directIoRefused());
            assertEquals(dev.nvmf.verbs.ffm.Libc.O_DIRECT, openFlags(file.fd()) & dev.nvmf.verbs.ffm.Libc.O_DIRECT,
                    "the descriptor really is O_DIRECT");
            assertEquals("file:" + dir.resolve("ns.img"), file.describe());
            int unit = file.logicalBlockSize();
            assertTrue(unit == 512 || unit == 1024 || unit == 2048 || unit == 4096, "alignment " + unit);

            // A buffer at an odd address (in-capsule data sits 64 bytes into a receive buffer) goes through the
            // bounce buffer; aligned offsets and lengths work at any address.
            MemorySegment capsule = arena.allocate(64 + 3 * 4096, 4096);
            MemorySegment data = Patterns.fill(capsule.asSlice(64, 3 * 4096), 21);
            file.write(8192, data, 3 * 4096, true, null, done);
            assertEquals(0, done.awaitNext(0));
            MemorySegment back = arena.allocate(64 + 3 * 4096, 4096).asSlice(64, 3 * 4096);
            file.read(8192, back, 3 * 4096, null, done);
            assertEquals(0, done.awaitNext(1));
            assertEquals(-1, data.mismatch(back));
            MemorySegment aligned = Patterns.fill(arena.allocate(4096, 4096), 22);
            file.write(4 * MIB - 4096, aligned, 4096, false, null, done);
            assertEquals(0, done.awaitNext(2));

            // O_DIRECT cannot address less than its unit: refused before any system call.
            file.write(unit / 2, aligned, unit, false, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult());
            file.read(0, aligned, unit + 1, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult());
        }
        // The data is on the file, as a buffered reader sees it.
        byte[] onDisk = Files.readAllBytes(dir.resolve("ns.img"));
        byte[] expected = Patterns.fill(arena.allocate(3 * 4096), 21).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        assertEquals(-1, java.util.Arrays.mismatch(expected, java.util.Arrays.copyOfRange(onDisk, 8192, 8192 + 3 * 4096)));
    }

    @Test
    void bufferedIoOpensThroughThePageCache() throws Exception {
        try (FileBackend file = createBuffered(MIB)) {
            assertFalse(file.directIo());
            assertFalse(file.directIoRefused());
            assertEquals(0, openFlags(file.fd()) & dev.nvmf.verbs.ffm.Libc.O_DIRECT);
            assertEquals(1, file.logicalBlockSize(), "any byte offset");
            assertEquals("file:" + dir.resolve("ns.img") + " (buffered)", file.describe());
        }
    }

    /**
     * A file system that refuses O_DIRECT (tmpfs before Linux 6.6, as in the lab's Debian 12 guest; this build
     * machine's tmpfs takes it, so the refusal is simulated at the open call): the file is served through the page
     * cache and says so.
     */
    @Test
    void aFileSystemThatRefusesODirectIsServedBufferedAndSaysSo() throws Exception {
        java.util.List<Integer> tried = new java.util.ArrayList<>();
        FileBackend.Opener refusesDirect = (path, flags, mode) -> {
            tried.add(flags);
            return (flags & dev.nvmf.verbs.ffm.Libc.O_DIRECT) != 0 ? -Errno.EINVAL : Fds.open(path, flags, mode);
        };
        try (FileBackend file = FileBackend.open(BackendSpec.file(dir.resolve("t.img"), MIB, true), refusesDirect)) {
            assertEquals(2, tried.size(), "O_DIRECT first, then without");
            assertTrue(file.directIoRefused());
            assertFalse(file.directIo());
            assertEquals(1, file.logicalBlockSize());
            assertEquals(0, openFlags(file.fd()) & dev.nvmf.verbs.ffm.Libc.O_DIRECT);
            assertEquals("file:" + dir.resolve("t.img") + " (buffered: the file system refuses O_DIRECT)",
                    file.describe());
            MemorySegment buf = Patterns.fill(arena.allocate(1000), 5);
            file.write(100, buf, 1000, false, null, done);
            assertEquals(0, done.awaitNext(0), "byte-granular I/O works through the page cache");
        }
        // Another error is not taken for a refusal of O_DIRECT.
        FileBackend.Opener denied = (path, flags, mode) -> -Errno.EACCES;
        BackendOpenException e = assertThrows(BackendOpenException.class,
                () -> FileBackend.open(BackendSpec.file(dir.resolve("u.img"), MIB, true), denied));
        assertTrue(e.getMessage().contains("open(O_RDWR|O_CREAT|O_DIRECT): EACCES"), e.getMessage());
    }

    @Test
    void roundTripsPatternsOnAWorkerThread() throws Exception {
        try (FileBackend file = createBuffered(4 * MIB)) {
            assertEquals(4 * MIB, file.sizeBytes());
            assertEquals(4 * MIB, Files.size(dir.resolve("ns.img")));
            assertFalse(file.readOnly());
            assertEquals("file:" + dir.resolve("ns.img") + " (buffered)", file.describe());
            int[] offsets = {0, 512, 4096 * 3, 3 * MIB + 100, 4 * MIB - 8192};
            int[] lengths = {512, 4096, 131072, 777, 8192};
            MemorySegment[] written = new MemorySegment[offsets.length];
            for (int i = 0; i < offsets.length; i++) {
                written[i] = Patterns.fill(arena.allocate(lengths[i]), i + 1);
                Object tag = "write" + i;
                int before = done.count();
                file.write(offsets[i], written[i], lengths[i], false, tag, done);
                assertEquals(0, done.awaitNext(before));
                assertSame(tag, done.lastAttachment());
                assertNotSame(Thread.currentThread(), done.lastThread());
                assertTrue(done.lastThread().getName().startsWith("nvmf-io-file:"), done.lastThread().getName());
            }
            for (int i = 0; i < offsets.length; i++) {
                MemorySegment in = arena.allocate(lengths[i]);
                int before = done.count();
                file.read(offsets[i], in, lengths[i], null, done);
                assertEquals(0, done.awaitNext(before));
                assertNotSame(Thread.currentThread(), done.lastThread());
                assertEquals(-1, written[i].mismatch(in), "range " + i);
            }
        }
        // The data is in the file itself, where another reader sees it.
        byte[] onDisk = Files.readAllBytes(dir.resolve("ns.img"));
        MemorySegment expected = Patterns.fill(arena.allocate(4096), 2);
        assertEquals(-1, MemorySegment.ofArray(onDisk).asSlice(512, 4096).mismatch(expected));
    }

    @Test
    void manyConcurrentSubmittersKeepTheirData() throws Exception {
        int threads = 4;
        int blocks = 64;
        int block = 4096;
        try (FileBackend file = FileBackend.open(
                BackendSpec.file(dir.resolve("c.img"), (long) threads * blocks * block, true).withIoWorkers(3))) {
            Thread[] ts = new Thread[threads];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                ts[t] = new Thread(() -> {
                    try {
                        Completions mine = new Completions();
                        MemorySegment all = Patterns.fill(arena.allocate((long) blocks * block), 100 + id);
                        for (int b = 0; b < blocks; b++) {
                            file.write((long) (b * threads + id) * block, all.asSlice((long) b * block, block), block,
                                    false, null, mine);
                        }
                        mine.awaitCount(blocks);
                        MemorySegment back = arena.allocate((long) blocks * block);
                        for (int b = 0; b < blocks; b++) {
                            file.read((long) (b * threads + id) * block, back.asSlice((long) b * block, block), block,
                                    null, mine);
                        }
                        mine.awaitCount(2 * blocks);
                        for (Completions.Done d : mine.all()) {
                            assertEquals(0, d.result());
                        }
                        assertEquals(-1, all.mismatch(back));
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertEquals(0, file.inFlight());
        }
    }

    @Test
    void flushAndFuaReachFdatasync() throws Exception {
        try (FileBackend file = FileBackend.open(BackendSpec.file(dir.resolve("f.img"), MIB, true)
                .withFuaMode(AsyncFdBackend.FuaMode.FDATASYNC))) {
            MemorySegment buf = Patterns.fill(arena.allocate(4096), 5);
            int n = done.count();
            file.write(0, buf, 4096, false, null, done);
            assertEquals(0, done.awaitNext(n));
            assertEquals(0, file.fdatasyncCalls(), "a plain write does not sync");
            file.write(4096, buf, 4096, true, null, done);
            assertEquals(0, done.awaitNext(n + 1));
            assertEquals(1, file.fdatasyncCalls(), "FUA write synced");
            file.flush(null, done);
            assertEquals(0, done.awaitNext(n + 2));
            assertEquals(2, file.fdatasyncCalls(), "flush synced");
            assertEquals(0, file.dsyncWrites());
        }
    }

    @Test
    void fuaInDsyncModeIsOneDsyncWrite() throws Exception {
        try (FileBackend file = create(MIB)) {
            assertEquals(AsyncFdBackend.FuaMode.RWF_DSYNC, file.fuaMode());
            MemorySegment buf = Patterns.fill(arena.allocate(65536), 6);
            file.write(8192, buf, 65536, true, null, done);
            assertEquals(0, done.awaitNext(0));
            // Either the kernel took RWF_DSYNC, or it refused it and the write fell back to pwrite + fdatasync.
            assertEquals(1, file.dsyncWrites() + file.fdatasyncCalls());
            file.write(0, buf, 4096, false, null, done);
            assertEquals(0, done.awaitNext(1));
            assertEquals(1, file.dsyncWrites() + file.fdatasyncCalls(), "a plain write is not synced");
            MemorySegment in = arena.allocate(65536);
            file.read(8192, in, 65536, null, done);
            assertEquals(0, done.awaitNext(2));
            assertEquals(-1, buf.mismatch(in));
        }
    }

    @Test
    void writeZeroesAndDeallocateReadBackZeroes() throws Exception {
        try (FileBackend file = createBuffered(2 * MIB)) {
            MemorySegment pattern = Patterns.fill(arena.allocate(2 * MIB), 9);
            file.write(0, pattern, 2 * MIB, false, null, done);
            assertEquals(0, done.awaitNext(0));
            file.writeZeroes(4096, 65536, null, done);
            assertEquals(0, done.awaitNext(1));
            file.writeZeroes(100_001, 999, null, done); // not block-aligned: still exactly these bytes
            assertEquals(0, done.awaitNext(2));
            file.deallocate(MIB, 256 * 1024, null, done);
            assertEquals(0, done.awaitNext(3));
            file.deallocate(MIB + 300_000, 5000, null, done);
            assertEquals(0, done.awaitNext(4));
            MemorySegment in = arena.allocate(2 * MIB);
            file.read(0, in, 2 * MIB, null, done);
            assertEquals(0, done.awaitNext(5));
            Patterns.assertSame(pattern, in, 0, 4096);
            Patterns.assertZero(in, 4096, 65536);
            Patterns.assertSame(pattern, in, 4096 + 65536, 100_001 - 4096 - 65536);
            Patterns.assertZero(in, 100_001, 999);
            Patterns.assertSame(pattern, in, 101_000, MIB - 101_000);
            Patterns.assertZero(in, MIB, 256 * 1024);
            Patterns.assertSame(pattern, in, MIB + 256 * 1024, 300_000 - 256 * 1024);
            Patterns.assertZero(in, MIB + 300_000, 5000);
            Patterns.assertSame(pattern, in, MIB + 305_000, MIB - 305_000);
            assertEquals(2 * MIB, Files.size(dir.resolve("ns.img")), "deallocate keeps the size");
        }
    }

    @Test
    void withoutFallocateWriteZeroesWritesAndDeallocateDoesNothing() throws Exception {
        try (FileBackend file = createBuffered(3 * MIB)) {
            assertTrue(file.deallocatedReadsZeroes(), "ext4/xfs/tmpfs punch holes: the probe at open saw it");
            file.disableOffloads(true);
            assertFalse(file.deallocatedReadsZeroes(), "no hole punching: a deallocated range keeps its data");
            MemorySegment pattern = Patterns.fill(arena.allocate(3 * MIB), 12);
            file.write(0, pattern, 3 * MIB, false, null, done);
            assertEquals(0, done.awaitNext(0));
            // Longer than the zero buffer, so it is written in several pieces.
            file.writeZeroes(1000, AsyncFdBackend.ZERO_BUFFER_BYTES + 5000, null, done);
            assertEquals(0, done.awaitNext(1));
            // Deallocate is advisory: it never falls back to writing zeroes (a whole-disk discard would run past
            // the host's I/O timeout), it answers EOPNOTSUPP at once.
            file.deallocate(2 * MIB, 8192, null, done);
            assertEquals(-Errno.EOPNOTSUPP, done.awaitNext(2));
            assertEquals(1, file.emulatedZeroes(), "only Write Zeroes wrote zeroes");
            // Write Zeroes with DEAC still zeroes (it may not deallocate here).
            file.writeZeroes(2 * MIB + 65536, 4096, true, null, done);
            assertEquals(0, done.awaitNext(3));
            assertEquals(2, file.emulatedZeroes());
            MemorySegment in = arena.allocate(3 * MIB);
            file.read(0, in, 3 * MIB, null, done);
            assertEquals(0, done.awaitNext(4));
            Patterns.assertSame(pattern, in, 0, 1000);
            Patterns.assertZero(in, 1000, AsyncFdBackend.ZERO_BUFFER_BYTES + 5000);
            long end = 1000 + AsyncFdBackend.ZERO_BUFFER_BYTES + 5000;
            Patterns.assertSame(pattern, in, end, 2 * MIB - end);
            Patterns.assertSame(pattern, in, 2 * MIB, 65536); // the deallocated range: untouched
            Patterns.assertZero(in, 2 * MIB + 65536, 4096);
            Patterns.assertSame(pattern, in, 2 * MIB + 69632, MIB - 69632);
        }
    }

    @Test
    void deallocateAndWriteZeroesWithDeacPunchHoles() throws Exception {
        Path path = dir.resolve("ns.img");
        try (FileBackend file = create(4 * MIB)) {
            MemorySegment pattern = Patterns.fill(arena.allocate(4 * MIB), 14);
            file.write(0, pattern, 4 * MIB, false, null, done);
            assertEquals(0, done.awaitNext(0));
            file.flush(null, done);
            assertEquals(0, done.awaitNext(1));
            long allocated = allocatedBytes(path);
            file.deallocate(0, 2 * MIB, null, done);
            assertEquals(0, done.awaitNext(2));
            file.writeZeroes(2 * MIB, MIB, true, null, done);
            assertEquals(0, done.awaitNext(3));
            assertEquals(2, file.punchedHoles());
            assertEquals(0, file.emulatedZeroes());
            MemorySegment in = arena.allocate(4 * MIB);
            file.read(0, in, 4 * MIB, null, done);
            assertEquals(0, done.awaitNext(4));
            Patterns.assertZero(in, 0, 3 * MIB);
            Patterns.assertSame(pattern, in, 3 * MIB, MIB);
            assertTrue(allocatedBytes(path) <= allocated - 3 * MIB, "the blocks were freed: " + allocated + " -> "
                    + allocatedBytes(path));
            assertEquals(4 * MIB, Files.size(path), "the size stays");
        }
    }

    @Test
    void aFileNamespaceKeepsItsSizeUnlessItFollowsTheFile() throws Exception {
        Path path = dir.resolve("ns.img");
        try (FileBackend file = create(MIB)) {
            try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
                raf.setLength(2 * MIB);
            }
            assertEquals(MIB, file.revalidateSize(), "a namespace of a configured size keeps it");
            file.followMediumSize();
            assertEquals(2 * MIB, file.revalidateSize(), "a whole-file namespace follows the file");
            assertEquals(2 * MIB, file.sizeBytes());
        }
    }

    /** st_blocks x 512 of a file (stat(1): the JDK has no view of st_blocks). */
    private static long allocatedBytes(Path path) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("stat", "-c", "%b", path.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertEquals(0, p.waitFor(), out);
        return Long.parseLong(out) * 512;
    }

    @Test
    void theProbeForHolePunchingChangesNeitherDataNorSize() throws Exception {
        Path path = dir.resolve("probe.img");
        byte[] content = new byte[10_000];
        new java.util.Random(3).nextBytes(content);
        Files.write(path, content);
        try (FileBackend file = FileBackend.open(BackendSpec.file(path).withBufferedIo(true))) {
            assertTrue(file.deallocatedReadsZeroes());
        }
        assertArrayEquals(content, Files.readAllBytes(path));
        try (FileBackend ro = FileBackend.open(BackendSpec.file(path).withBufferedIo(true).withReadOnly(true))) {
            assertFalse(ro.deallocatedReadsZeroes(), "read only: nothing is ever deallocated, nothing probed");
        }
    }

    @Test
    void closeFromACallbackIsRefusedNotADeadlock() throws Exception {
        try (FileBackend file = create(MIB)) {
            AsyncFdBackend same = file;
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            file.flush(null, (a, r) -> {
                try {
                    same.close();
                } catch (Throwable t) {
                    thrown.set(t);
                }
                done.backendDone(a, r);
            });
            done.awaitCount(1);
            assertTrue(thrown.get() instanceof IllegalStateException, String.valueOf(thrown.get()));
        }
    }

    @Test
    void errorsComeBackAsNegativeErrnoNotExceptions() throws Exception {
        Path path = dir.resolve("ns.img");
        try (FileBackend file = create(MIB)) {
            MemorySegment buf = arena.allocate(8192);
            file.read(MIB - 4096, buf, 8192, null, done);
            assertEquals(-Errno.ERANGE, done.lastResult(), "past the end, caught before any system call");
            file.write(-512, buf, 512, false, null, done);
            assertEquals(-Errno.EINVAL, done.lastResult());
            file.read(0, MemorySegment.ofArray(new byte[512]), 512, null, done);
            assertEquals(-Errno.EFAULT, done.lastResult(), "heap segments have no address for the kernel");
            file.writeZeroes(MIB - 10, 11, null, done);
            assertEquals(-Errno.ERANGE, done.lastResult());

            // The file shrinks under the backend: a read of the lost range meets end of file.
            try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw")) {
                raf.setLength(4096);
            }
            int n = done.count();
            file.read(65536, buf, 4096, null, done);
            assertEquals(-Errno.EIO, done.awaitNext(n));
            assertNotSame(Thread.currentThread(), done.lastThread(), "the kernel's answer came on a worker");
        }
        try (FileBackend ro = FileBackend.open(BackendSpec.file(path).withReadOnly(true))) {
            assertTrue(ro.readOnly());
            assertEquals(4096, ro.sizeBytes());
            MemorySegment buf = arena.allocate(4096);
            ro.write(0, buf, 4096, false, null, done);
            assertEquals(-Errno.EROFS, done.lastResult());
            ro.deallocate(0, 4096, null, done);
            assertEquals(-Errno.EROFS, done.lastResult());
            int n = done.count();
            ro.read(0, buf, 4096, null, done);
            assertEquals(0, done.awaitNext(n));
        }
    }

    @Test
    void openErrorsNameThePathAndTheErrno() throws Exception {
        Path missing = dir.resolve("missing.img");
        BackendOpenException e = assertThrows(BackendOpenException.class,
                () -> BlockBackends.open(BackendSpec.file(missing)));
        assertTrue(e.getMessage().startsWith(missing.toString()), e.getMessage());
        assertTrue(e.getMessage().contains("ENOENT (No such file or directory)"), e.getMessage());
        assertEquals(Errno.ENOENT, e.errno());

        e = assertThrows(BackendOpenException.class, () -> BlockBackends.open(BackendSpec.file(dir)));
        assertTrue(e.getMessage().contains("not a regular file but a directory"), e.getMessage());

        Path empty = Files.createFile(dir.resolve("empty.img"));
        e = assertThrows(BackendOpenException.class, () -> BlockBackends.open(BackendSpec.file(empty)));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());

        e = assertThrows(BackendOpenException.class,
                () -> BlockBackends.open(BackendSpec.file(empty, MIB, false).withReadOnly(true)));
        assertTrue(e.getMessage().contains("cannot be extended"), e.getMessage());

        Path inMissingDir = dir.resolve("no/such/dir/x.img");
        e = assertThrows(BackendOpenException.class,
                () -> BlockBackends.open(BackendSpec.file(inMissingDir, MIB, true)));
        assertTrue(e.getMessage().contains("O_RDWR|O_CREAT") && e.getMessage().contains("ENOENT"), e.getMessage());

        // An existing file is used at its size; a larger configured size extends it (sparse).
        try (BlockBackend b = BlockBackends.open(BackendSpec.file(empty, 3 * MIB, false))) {
            assertEquals(3 * MIB, b.sizeBytes());
        }
        try (BlockBackend b = BlockBackends.open(BackendSpec.file(empty))) {
            assertEquals(3 * MIB, b.sizeBytes());
        }
    }

    @Test
    void closeWaitsForOperationsInFlightThenReleasesTheDescriptor() throws Exception {
        Path path = dir.resolve("ns.img");
        FileBackend file = FileBackend.open(BackendSpec.file(path, MIB, true).withIoWorkers(2));
        int fd = file.fd();
        Path fdLink = Path.of("/proc/self/fd/" + fd);
        assertEquals(path.toRealPath(), fdLink.toRealPath());

        CountDownLatch inCallback = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MemorySegment buf = Patterns.fill(arena.allocate(4096), 1);
        file.write(0, buf, 4096, false, null, (attachment, result) -> {
            inCallback.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            done.backendDone(attachment, result);
        });
        assertTrue(inCallback.await(30, TimeUnit.SECONDS));
        assertEquals(1, file.inFlight());

        Thread closer = new Thread(file::close, "closer");
        closer.start();
        // close() must not return while the callback is still running.
        closer.join(300);
        assertTrue(closer.isAlive(), "close returned with an operation in flight");
        assertEquals(path.toRealPath(), fdLink.toRealPath(), "descriptor still open");
        // New submissions are refused while closing.
        Completions late = new Completions();
        file.read(0, arena.allocate(4096), 4096, null, late);
        late.awaitCount(1);
        assertEquals(-Errno.ENODEV, late.lastResult());

        release.countDown();
        closer.join(TimeUnit.SECONDS.toMillis(30));
        assertFalse(closer.isAlive());
        assertEquals(0, done.lastResult());
        assertEquals(0, file.inFlight());
        assertFalse(Files.exists(fdLink) && Files.isSameFile(fdLink, path), "descriptor released");
        file.close(); // idempotent
        file.flush(null, late);
        assertEquals(-Errno.ENODEV, late.lastResult());
    }

    @Test
    void exhaustedPoolAnswersEagainInlineAndRecovers() throws Exception {
        try (FileBackend file = FileBackend.open(BackendSpec.file(dir.resolve("p.img"), MIB, true)
                .withIoWorkers(1).withMaxInFlight(2))) {
            CountDownLatch release = new CountDownLatch(1);
            BackendCallback blocking = (attachment, result) -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                done.backendDone(attachment, result);
            };
            file.flush("a", blocking);
            file.flush("b", blocking);
            Completions refused = new Completions();
            file.flush("c", refused);
            assertEquals(1, refused.count(), "answered before the call returned");
            assertEquals(-Errno.EAGAIN, refused.lastResult());
            assertSame(Thread.currentThread(), refused.lastThread());
            release.countDown();
            done.awaitCount(2);
            for (Completions.Done d : done.all()) {
                assertEquals(0, d.result());
            }
            // Descriptors came back: the next operation goes through.
            while (file.inFlight() != 0) {
                Thread.onSpinWait();
            }
            file.flush("d", refused);
            refused.awaitCount(2);
            assertEquals(0, refused.lastResult());
        }
    }

    @Test
    void smallPoolUnderManySubmittersLosesNothing() throws Exception {
        int threads = 4;
        int perThread = 20_000;
        try (FileBackend file = FileBackend.open(BackendSpec.file(dir.resolve("s.img"), MIB, true)
                .withIoWorkers(3).withMaxInFlight(4))) {
            AtomicReference<Throwable> failure = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicLong ok = new java.util.concurrent.atomic.AtomicLong();
            java.util.concurrent.atomic.AtomicLong again = new java.util.concurrent.atomic.AtomicLong();
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                ts[t] = new Thread(() -> {
                    try {
                        MemorySegment buf = arena.allocate(512);
                        java.util.concurrent.atomic.AtomicInteger mine = new java.util.concurrent.atomic.AtomicInteger();
                        BackendCallback cb = (a, r) -> {
                            if (r == 0) {
                                ok.incrementAndGet();
                            } else if (r == -Errno.EAGAIN) {
                                again.incrementAndGet();
                            } else {
                                failure.compareAndSet(null, new AssertionError("result " + r));
                            }
                            mine.incrementAndGet();
                        };
                        for (int i = 0; i < perThread; i++) {
                            file.read((i % 2048) * 512L, buf, 512, null, cb);
                        }
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                        while (mine.get() < perThread && System.nanoTime() < deadline) {
                            Thread.onSpinWait();
                        }
                        assertEquals(perThread, mine.get(), "every submission answered exactly once");
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(failure.get());
            }
            assertEquals((long) threads * perThread, ok.get() + again.get());
            assertTrue(ok.get() > 0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (file.inFlight() != 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(0, file.inFlight());
            // Every descriptor came back: block the 3 workers in callbacks (their descriptors are returned before
            // the callback runs), then exactly maxInFlight more operations can wait in the queue; one more is refused.
            CountDownLatch entered = new CountDownLatch(3);
            CountDownLatch release = new CountDownLatch(1);
            BackendCallback blocking = (a, r) -> {
                entered.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            };
            try {
                MemorySegment buf = arena.allocate(512);
                for (int i = 0; i < 3; i++) {
                    file.read(0, buf, 512, null, blocking);
                }
                assertTrue(entered.await(30, TimeUnit.SECONDS));
                Completions queued = new Completions();
                for (int i = 0; i < 4; i++) {
                    file.read(0, buf, 512, null, queued);
                }
                assertEquals(0, queued.count(), "queued, not refused");
                Completions refused = new Completions();
                file.read(0, buf, 512, null, refused);
                assertEquals(1, refused.count());
                assertEquals(-Errno.EAGAIN, refused.lastResult());
                release.countDown();
                queued.awaitCount(4);
                for (Completions.Done d : queued.all()) {
                    assertEquals(0, d.result());
                }
            } finally {
                release.countDown();
            }
        }
    }
}
