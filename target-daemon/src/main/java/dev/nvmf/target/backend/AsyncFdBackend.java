package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.ffm.Libc;

import org.agrona.concurrent.ManyToManyConcurrentArrayQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The asynchronous engine under {@link FileBackend} and {@link BlockDeviceBackend}: an open file descriptor served by
 * a small pool of I/O worker threads through libc (pread/pwrite/pwritev2/fdatasync/fallocate/ioctl) as FFM downcalls.
 *
 * <h2>Threads and hand-off</h2>
 * The caller (a poller thread) never makes a system call here. It takes a preallocated {@link IoOperation} from a
 * free pool, fills it and puts it on a bounded submission queue (both Agrona many-to-many array queues: lock-free and
 * allocation-free), then releases one permit of a {@link Semaphore} on which idle workers block (no spinning: an idle
 * backend burns no CPU, and {@code release()} allocates nothing on the caller). A worker takes the operation, does
 * it, returns the descriptor to the pool and invokes the callback on its own thread.
 *
 * <h2>When every descriptor is in use</h2>
 * The pool holds {@code maxInFlight} descriptors (the submission queue is at least as large, so a submission that got
 * a descriptor is never refused). A submission that finds the pool empty is neither queued nor blocked: its callback
 * is invoked at once, on the caller's thread, with {@code -EAGAIN}, and the caller may retry later (the NVMe core
 * can answer "Namespace Not Ready"/retry, or hold the request). Size {@code maxInFlight} to the sum of the queue
 * depths of the I/O queues that can reach this namespace and it never happens.
 *
 * <h2>Errors</h2>
 * Nothing throws into the caller. Checks that need no system call complete inline with a negative errno (see
 * {@link Errno}); a system call's failure arrives as {@code -errno} in the callback. Short reads and writes are
 * continued and EINTR retried; a read that meets end of file (the file was truncated under us) gives {@code -EIO}.
 *
 * <h2>Durability</h2>
 * Flush is fdatasync. A FUA write is pwritev2(RWF_DSYNC) when {@link FuaMode#RWF_DSYNC} is chosen and the kernel
 * accepts it (one system call; for O_DIRECT on a device the kernel can send the write with the FUA bit), otherwise
 * pwrite followed by fdatasync. {@link #fdatasyncCalls()} and {@link #dsyncWrites()} count both for tests and metrics.
 * RWF_DSYNC is the default because it is one system call instead of two, and because fdatasync flushes the whole
 * device cache while a DSYNC write on an O_DIRECT descriptor can go to the device as one write with FUA set; a
 * measurement found neither mode faster than the other's noise (docs/performance.md, "FUA writes").
 */
public abstract class AsyncFdBackend implements BlockBackend {
    /** How a Force Unit Access write is made durable. */
    public enum FuaMode {
        /** pwritev2(..., RWF_DSYNC): one system call; falls back to {@link #FDATASYNC} if the kernel refuses. */
        RWF_DSYNC,
        /** pwrite, then fdatasync. */
        FDATASYNC
    }

    /** Defaults: a few workers (they block in system calls, they do not compute) and a generous descriptor pool. */
    public static final int DEFAULT_IO_WORKERS = 4;
    public static final int DEFAULT_MAX_IN_FLIGHT = 1024;

    /** Zeroes written when the medium cannot zero a range by itself (Write Zeroes only), and the per-worker O_DIRECT
     * bounce buffer. */
    static final int ZERO_BUFFER_BYTES = 1 << 20;
    static final int BOUNCE_BUFFER_BYTES = 256 * 1024;

    private final String description;
    private final int fd;
    /** The capacity; changes only by {@link #revalidateSize}. */
    private volatile long sizeBytes;
    private final boolean readOnly;
    private final boolean blockDevice;
    private final boolean directIo;
    private final int logicalBlockSize;
    private final int maxInFlight;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment zeroes;
    private final ManyToManyConcurrentArrayQueue<IoOperation> free;
    private final ManyToManyConcurrentArrayQueue<IoOperation> submitted;
    private final Semaphore work = new Semaphore(0);
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Thread[] workers;

    private final AtomicLong fdatasyncCalls = new AtomicLong();
    private final AtomicLong dsyncWrites = new AtomicLong();
    private final AtomicLong emulatedZeroes = new AtomicLong();
    private final AtomicLong zeroOutIoctls = new AtomicLong();
    private final AtomicLong discards = new AtomicLong();
    private final AtomicLong punchedHoles = new AtomicLong();

    private volatile boolean useDsyncWrites;
    private volatile boolean zeroRangeUnsupported;
    private volatile boolean punchHoleUnsupported;
    private volatile boolean zeroOutIoctlUnsupported;
    private volatile boolean discardUnsupported;
    /** A file: fallocate(PUNCH_HOLE) worked when probed at open, so deallocated ranges read back zeroes. */
    private final boolean punchHoleProbed;
    /** A file whose namespace is the whole file: {@link #revalidateSize} follows the file's size. */
    private volatile boolean sizeFollowsMedium;
    private volatile boolean closing;
    private volatile Thread closer;
    private volatile boolean stopping;
    private boolean closed;

    /**
     * @param fd               an open descriptor, owned from now on (closed by {@link #close()})
     * @param blockDevice      true for a block device (BLKZEROOUT is then tried before writing zeroes)
     * @param directIo         true if opened O_DIRECT: offsets, lengths and buffer addresses must be aligned to
     *                         {@code logicalBlockSize} (misaligned buffers go through a bounce buffer)
     * @param ioWorkers        worker thread count (at least 1)
     * @param maxInFlight      descriptor pool size (at least 1)
     */
    AsyncFdBackend(String description, int fd, long sizeBytes, boolean readOnly, boolean blockDevice,
                   boolean directIo, int logicalBlockSize, FuaMode fuaMode, int ioWorkers, int maxInFlight) {
        if (ioWorkers < 1 || maxInFlight < 1) {
            throw new IllegalArgumentException("ioWorkers and maxInFlight must be at least 1: " + ioWorkers + ", "
                    + maxInFlight);
        }
        this.description = description;
        this.fd = fd;
        this.sizeBytes = sizeBytes;
        this.readOnly = readOnly;
        this.blockDevice = blockDevice;
        this.directIo = directIo;
        this.logicalBlockSize = Math.max(1, logicalBlockSize);
        this.maxInFlight = maxInFlight;
        this.useDsyncWrites = fuaMode == FuaMode.RWF_DSYNC && Libc.hasPwritev2();
        this.zeroes = arena.allocate(ZERO_BUFFER_BYTES, 4096);
        // Twice the pool: an offer to a slot whose previous occupant's consumer has not yet finished its poll
        // (the only way these queues refuse an offer below capacity) then needs a consumer stalled for a full lap.
        this.free = new ManyToManyConcurrentArrayQueue<>(2 * maxInFlight);
        this.submitted = new ManyToManyConcurrentArrayQueue<>(2 * maxInFlight);
        for (int i = 0; i < maxInFlight; i++) {
            free.offer(new IoOperation());
        }
        this.punchHoleProbed = !blockDevice && !readOnly && probePunchHole(fd);
        this.workers = new Thread[ioWorkers];
        String name = "nvmf-io-" + description;
        for (int i = 0; i < ioWorkers; i++) {
            Worker worker = new Worker();
            workers[i] = Thread.ofPlatform().daemon().name(name + "-" + i).unstarted(worker);
        }
        for (Thread t : workers) {
            t.start();
        }
    }

    @Override
    public final long sizeBytes() {
        return sizeBytes;
    }

    @Override
    public final boolean readOnly() {
        return readOnly;
    }

    @Override
    public String describe() {
        return description;
    }

    /**
     * The smallest unit the medium accepts: a namespace's LBA size must be a multiple of it. 1 for a buffered
     * file; the device's logical block size (BLKSSZGET) for a block device.
     */
    public int logicalBlockSize() {
        return logicalBlockSize;
    }

    /** True if the descriptor was opened O_DIRECT (the page cache is bypassed). */
    public boolean directIo() {
        return directIo;
    }

    /** How many operations can be outstanding before submissions complete with {@code -EAGAIN}. */
    public int maxInFlight() {
        return maxInFlight;
    }

    /** Operations submitted and not yet completed (callbacks included). */
    public int inFlight() {
        return inFlight.get();
    }

    /** fdatasync calls made (Flush, and FUA writes in {@link FuaMode#FDATASYNC} mode). */
    public long fdatasyncCalls() {
        return fdatasyncCalls.get();
    }

    /** FUA writes made durable by pwritev2(RWF_DSYNC) (one per write system call). */
    public long dsyncWrites() {
        return dsyncWrites.get();
    }

    /** Write Zeroes operations that fell back to writing zero buffers (Deallocate never does). */
    public long emulatedZeroes() {
        return emulatedZeroes.get();
    }

    /** Deallocate operations done by ioctl(BLKDISCARD) (block devices). */
    public long discards() {
        return discards.get();
    }

    /** Deallocate and Write Zeroes operations done by fallocate(PUNCH_HOLE). */
    public long punchedHoles() {
        return punchedHoles.get();
    }

    /**
     * A file: deallocation punches holes, which read back zeroes, if the file system punched one when probed at
     * open (and has not refused since). A block device: see {@link BlockDeviceBackend}.
     */
    @Override
    public boolean deallocatedReadsZeroes() {
        return punchHoleProbed && !punchHoleUnsupported;
    }

    /** True once the medium refused BLKDISCARD (block devices; deallocation then does nothing). */
    final boolean discardUnsupported() {
        return discardUnsupported;
    }

    /** A file namespace that is the whole file: {@link #revalidateSize} reads the file's size again. */
    final void followMediumSize() {
        sizeFollowsMedium = true;
    }

    /**
     * A block device's size from ioctl(BLKGETSIZE64), a whole-file namespace's from lseek(SEEK_END); any other file
     * namespace keeps the size it was opened with. A read that fails keeps the old size.
     */
    @Override
    public long revalidateSize() {
        if (!blockDevice && !sizeFollowsMedium) {
            return sizeBytes;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Libc.allocateCapture(a);
            long size;
            if (blockDevice) {
                MemorySegment value = a.allocate(ValueLayout.JAVA_LONG);
                size = Libc.ioctl(errno, fd, Libc.BLKGETSIZE64, value.address()) == 0
                        ? value.get(ValueLayout.JAVA_LONG, 0) : -1;
            } else {
                size = Libc.lseek(errno, fd, 0, Libc.SEEK_END);
            }
            if (size > 0) {
                sizeBytes = size;
            }
            return sizeBytes;
        }
    }

    /**
     * Does the file system punch holes (so that a deallocated range reads back zeroes)? Probed on 4 KiB past the end
     * of the file, with KEEP_SIZE: no byte of the file, and not its size, can change (kernel vfs_fallocate refuses
     * a file system without the mode before it looks at the range).
     */
    private static boolean probePunchHole(int fd) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment errno = Libc.allocateCapture(a);
            long end = Libc.lseek(errno, fd, 0, Libc.SEEK_END);
            if (end < 0) {
                return false;
            }
            long past = (end + 4095) & ~4095L;
            return Libc.fallocate(errno, fd, Libc.FALLOC_FL_PUNCH_HOLE | Libc.FALLOC_FL_KEEP_SIZE, past, 4096) == 0;
        }
    }

    /** The FUA mode now in effect (RWF_DSYNC may have fallen back to FDATASYNC). */
    public FuaMode fuaMode() {
        return useDsyncWrites ? FuaMode.RWF_DSYNC : FuaMode.FDATASYNC;
    }

    /**
     * Test hook: behave as if the medium lacked fallocate (ZERO_RANGE, PUNCH_HOLE) and, if {@code noZeroOutIoctl},
     * BLKZEROOUT and BLKDISCARD too, so that the fallbacks can be exercised on media that have them.
     */
    final void disableOffloads(boolean noZeroOutIoctl) {
        zeroRangeUnsupported = true;
        punchHoleUnsupported = true;
        zeroOutIoctlUnsupported = noZeroOutIoctl;
        discardUnsupported = noZeroOutIoctl;
    }

    /** Write Zeroes done by ioctl(BLKZEROOUT). */
    public long zeroOutIoctls() {
        return zeroOutIoctls.get();
    }

    /** The descriptor, for tests (to see that close released it). */
    final int fd() {
        return fd;
    }

    // ---------------------------------------------------------------- submission (caller's thread)

    @Override
    public final void read(long offset, MemorySegment destination, int length, Object attachment,
                           BackendCallback callback) {
        int status = checkTransfer(offset, destination, length);
        if (status != 0) {
            callback.backendDone(attachment, status);
            return;
        }
        submit(IoOperation.READ, offset, destination, length, false, attachment, callback);
    }

    @Override
    public final void write(long offset, MemorySegment source, int length, boolean forceUnitAccess,
                            Object attachment, BackendCallback callback) {
        int status = readOnly ? -Errno.EROFS : checkTransfer(offset, source, length);
        if (status != 0) {
            callback.backendDone(attachment, status);
            return;
        }
        submit(IoOperation.WRITE, offset, source, length, forceUnitAccess, attachment, callback);
    }

    @Override
    public final void flush(Object attachment, BackendCallback callback) {
        submit(IoOperation.FLUSH, 0, null, 0, false, attachment, callback);
    }

    @Override
    public final void writeZeroes(long offset, long length, Object attachment, BackendCallback callback) {
        writeZeroes(offset, length, false, attachment, callback);
    }

    @Override
    public final void writeZeroes(long offset, long length, boolean mayDeallocate, Object attachment,
                                  BackendCallback callback) {
        int status = readOnly ? -Errno.EROFS : checkRange(offset, length);
        if (status != 0) {
            callback.backendDone(attachment, status);
            return;
        }
        submit(mayDeallocate ? IoOperation.WRITE_ZEROES_MAY_DEALLOCATE : IoOperation.WRITE_ZEROES, offset, null,
                length, false, attachment, callback);
    }

    @Override
    public final void deallocate(long offset, long length, Object attachment, BackendCallback callback) {
        int status = readOnly ? -Errno.EROFS : checkRange(offset, length);
        if (status != 0) {
            callback.backendDone(attachment, status);
            return;
        }
        submit(IoOperation.DEALLOCATE, offset, null, length, false, attachment, callback);
    }

    private int checkTransfer(long offset, MemorySegment buffer, int length) {
        int status = buffer == null ? -Errno.EINVAL : checkRange(offset, length);
        if (status != 0) {
            return status;
        }
        status = Ranges.checkTransfer(offset, buffer, length, sizeBytes);
        if (status != 0) {
            return status;
        }
        if (!buffer.isNative()) {
            return -Errno.EFAULT; // a heap array has no stable address for the kernel
        }
        return 0;
    }

    private int checkRange(long offset, long length) {
        int status = Ranges.check(offset, length, sizeBytes);
        if (status != 0) {
            return status;
        }
        if (directIo && ((offset | length) & (logicalBlockSize - 1)) != 0) {
            return -Errno.EINVAL; // O_DIRECT: the device cannot address less than a logical block
        }
        return 0;
    }

    private void submit(int opcode, long offset, MemorySegment segment, long length, boolean fua, Object attachment,
                        BackendCallback callback) {
        // Counted before the closing check so close() cannot miss an operation that passed it (see close()).
        inFlight.getAndIncrement();
        if (closing) {
            finishRefused(attachment, callback, -Errno.ENODEV);
            return;
        }
        IoOperation op = takeDescriptor();
        if (op == null) {
            finishRefused(attachment, callback, -Errno.EAGAIN);
            return;
        }
        op.set(opcode, offset, segment, length, fua, attachment, callback);
        // Holding fewer elements than its capacity, the queue refuses only while a consumer is between claiming a
        // slot a lap ago and releasing it: a few instructions, so retry.
        while (!submitted.offer(op)) {
            Thread.onSpinWait();
        }
        work.release();
    }

    /**
     * A free descriptor, or null if all are in flight. The queue's poll also answers null while a worker is midway
     * through returning the descriptor at its head; a few retries cover that, so that -EAGAIN means exhausted.
     */
    private IoOperation takeDescriptor() {
        IoOperation op = free.poll();
        for (int spins = 0; op == null && spins < 100 && !free.isEmpty(); spins++) {
            Thread.onSpinWait();
            op = free.poll();
        }
        return op;
    }

    private void finishRefused(Object attachment, BackendCallback callback, int status) {
        completed();
        callback.backendDone(attachment, status);
    }

    private void completed() {
        if (inFlight.decrementAndGet() == 0 && closing) {
            Thread t = closer;
            if (t != null) {
                LockSupport.unpark(t);
            }
        }
    }

    // ---------------------------------------------------------------- close (control path)

    /**
     * Refuses new operations ({@code -ENODEV}), waits until every operation in flight has completed and its
     * callback returned, stops the workers, then closes the descriptor. Idempotent; call it from a control thread,
     * not from a callback.
     */
    @Override
    public final void close() {
        for (Thread t : workers) {
            if (t == Thread.currentThread()) {
                throw new IllegalStateException("close() from a backend callback would wait for itself");
            }
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closer = Thread.currentThread();
        closing = true;
        boolean interrupted = false;
        while (inFlight.get() != 0) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(50));
            interrupted |= Thread.interrupted();
        }
        stopping = true;
        for (Thread t : workers) {
            t.interrupt();
        }
        for (Thread t : workers) {
            while (t.isAlive()) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        try (Arena a = Arena.ofConfined()) {
            Libc.close(Libc.allocateCapture(a), fd);
        }
        arena.close();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- workers

    /** One I/O thread: its own errno capture, iovec and O_DIRECT bounce buffer, so workers share nothing mutable. */
    private final class Worker implements Runnable {
        private final MemorySegment errno;
        private final MemorySegment iovec;
        private final MemorySegment range;
        private final MemorySegment bounce;

        Worker() {
            errno = Libc.allocateCapture(arena);
            iovec = arena.allocate(16, 8);
            range = arena.allocate(16, 8);
            bounce = directIo ? arena.allocate(BOUNCE_BUFFER_BYTES, 4096) : MemorySegment.NULL;
        }

        @Override
        public void run() {
            while (!stopping) {
                try {
                    work.acquire();
                } catch (InterruptedException e) {
                    continue; // stopping is set before workers are interrupted
                }
                // A permit means an operation was queued; poll answers null only while another submitter, which
                // claimed an earlier slot, is still publishing it: wait for it.
                IoOperation op;
                while ((op = submitted.poll()) == null) {
                    Thread.onSpinWait();
                }
                int status;
                try {
                    status = execute(op);
                } catch (Throwable t) {
                    status = -Errno.EIO; // a bug or a linkage failure: report it, never lose the operation
                }
                BackendCallback callback = op.callback;
                Object attachment = op.attachment;
                op.clear();
                while (!free.offer(op)) {
                    Thread.onSpinWait(); // as for submitted.offer: transient only
                }
                try {
                    callback.backendDone(attachment, status);
                } catch (Throwable t) {
                    Thread.UncaughtExceptionHandler h = Thread.currentThread().getUncaughtExceptionHandler();
                    h.uncaughtException(Thread.currentThread(), t);
                } finally {
                    completed();
                }
            }
        }

        private int execute(IoOperation op) {
            return switch (op.opcode) {
                case IoOperation.READ -> read(op.offset, op.segment, op.address, op.length);
                case IoOperation.WRITE -> write(op.offset, op.segment, op.address, op.length, op.forceUnitAccess);
                case IoOperation.FLUSH -> fdatasync();
                case IoOperation.WRITE_ZEROES -> writeZeroes(op.offset, op.length);
                case IoOperation.WRITE_ZEROES_MAY_DEALLOCATE -> writeZeroesMayDeallocate(op.offset, op.length);
                case IoOperation.DEALLOCATE -> deallocate(op.offset, op.length);
                default -> -Errno.EINVAL;
            };
        }

        private boolean needsBounce(long address) {
            return directIo && (address & (logicalBlockSize - 1)) != 0;
        }

        private int read(long offset, MemorySegment buffer, long address, long length) {
            if (needsBounce(address)) {
                long done = 0;
                while (done < length) {
                    int n = (int) Math.min(BOUNCE_BUFFER_BYTES, length - done);
                    int status = preadFully(offset + done, bounce.address(), n);
                    if (status != 0) {
                        return status;
                    }
                    MemorySegment.copy(bounce, 0, buffer, done, n);
                    done += n;
                }
                return 0;
            }
            return preadFully(offset, address, length);
        }

        private int preadFully(long offset, long address, long length) {
            long done = 0;
            while (done < length) {
                long r = Libc.pread(errno, fd, address + done, length - done, offset + done);
                if (r > 0) {
                    done += r;
                } else if (r == 0) {
                    return -Errno.EIO; // end of file inside the namespace: the file shrank under us
                } else {
                    int e = Libc.errno(errno);
                    if (e != Errno.EINTR) {
                        return -e;
                    }
                }
            }
            return 0;
        }

        private int write(long offset, MemorySegment buffer, long address, long length, boolean fua) {
            boolean dsync = fua && useDsyncWrites;
            int status;
            if (needsBounce(address)) {
                status = 0;
                long done = 0;
                while (status == 0 && done < length) {
                    int n = (int) Math.min(BOUNCE_BUFFER_BYTES, length - done);
                    MemorySegment.copy(buffer, done, bounce, 0, n);
                    status = pwriteFully(offset + done, bounce.address(), n, dsync);
                    done += n;
                }
            } else {
                status = pwriteFully(offset, address, length, dsync);
            }
            if (status == -Errno.EOPNOTSUPP && dsync) {
                useDsyncWrites = false; // this kernel or file system refuses RWF_DSYNC: pwrite + fdatasync from now on
                return write(offset, buffer, address, length, fua);
            }
            if (status == 0 && fua && !dsync) {
                status = fdatasync();
            }
            return status;
        }

        private int pwriteFully(long offset, long address, long length, boolean dsync) {
            long done = 0;
            while (done < length) {
                long r;
                if (dsync) {
                    iovec.set(ValueLayout.JAVA_LONG, 0, address + done);
                    iovec.set(ValueLayout.JAVA_LONG, 8, length - done);
                    r = Libc.pwritev2(errno, fd, iovec.address(), 1, offset + done, Libc.RWF_DSYNC);
                    if (r >= 0) {
                        dsyncWrites.incrementAndGet();
                    }
                } else {
                    r = Libc.pwrite(errno, fd, address + done, length - done, offset + done);
                }
                if (r > 0) {
                    done += r;
                } else if (r == 0) {
                    return -Errno.EIO;
                } else {
                    int e = Libc.errno(errno);
                    if (e != Errno.EINTR) {
                        return -e;
                    }
                }
            }
            return 0;
        }

        private int fdatasync() {
            while (true) {
                fdatasyncCalls.incrementAndGet();
                if (Libc.fdatasync(errno, fd) == 0) {
                    return 0;
                }
                int e = Libc.errno(errno);
                if (e != Errno.EINTR) {
                    return -e;
                }
            }
        }

        private int writeZeroes(long offset, long length) {
            if (length == 0) {
                return 0;
            }
            if (!zeroRangeUnsupported) {
                int status = fallocate(Libc.FALLOC_FL_ZERO_RANGE, offset, length);
                if (!unsupported(status)) {
                    return status;
                }
                zeroRangeUnsupported = true;
            }
            if (blockDevice && !zeroOutIoctlUnsupported) {
                range.set(ValueLayout.JAVA_LONG, 0, offset);
                range.set(ValueLayout.JAVA_LONG, 8, length);
                int status = ioctl(Libc.BLKZEROOUT, range.address());
                if (!unsupported(status)) {
                    zeroOutIoctls.incrementAndGet();
                    return status;
                }
                zeroOutIoctlUnsupported = true;
            }
            emulatedZeroes.incrementAndGet();
            long done = 0;
            while (done < length) {
                long n = Math.min(ZERO_BUFFER_BYTES, length - done);
                int status = pwriteFully(offset + done, zeroes.address(), n, false);
                if (status != 0) {
                    return status;
                }
                done += n;
            }
            return 0;
        }

        /**
         * Write Zeroes with DEAC: fallocate(PUNCH_HOLE) first, which frees the blocks and still reads back zeroes
         * (a file: a hole; a block device: the kernel turns it into an unmapping write-zeroes, which it refuses where
         * the device cannot guarantee zeroes); where refused, the plain Write Zeroes.
         */
        private int writeZeroesMayDeallocate(long offset, long length) {
            if (length != 0 && !punchHoleUnsupported) {
                int status = punchHole(offset, length);
                if (!unsupported(status)) {
                    return status;
                }
            }
            return writeZeroes(offset, length);
        }

        /**
         * Deallocate is advisory and never writes (kernel io-cmd-bdev.c discards; io-cmd-file.c punches holes): a
         * file punches a hole (KEEP_SIZE); a block device gets ioctl(BLKDISCARD), whose later reads return whatever
         * the device says (often the old data: {@link #deallocatedReadsZeroes}), and never
         * fallocate(PUNCH_HOLE), which on a device without write-zeroes unmapping would write the whole range. A
         * medium that has neither answers {@code -EOPNOTSUPP} at once.
         */
        private int deallocate(long offset, long length) {
            if (length == 0) {
                return 0;
            }
            if (blockDevice) {
                if (discardUnsupported) {
                    return -Errno.EOPNOTSUPP;
                }
                range.set(ValueLayout.JAVA_LONG, 0, offset);
                range.set(ValueLayout.JAVA_LONG, 8, length);
                int status = ioctl(Libc.BLKDISCARD, range.address());
                if (unsupported(status)) {
                    discardUnsupported = true;
                    return -Errno.EOPNOTSUPP;
                }
                if (status == 0) {
                    discards.incrementAndGet();
                }
                return status;
            }
            if (punchHoleUnsupported) {
                return -Errno.EOPNOTSUPP;
            }
            int status = punchHole(offset, length);
            return unsupported(status) ? -Errno.EOPNOTSUPP : status;
        }

        /** fallocate(PUNCH_HOLE | KEEP_SIZE); remembers a refusal. */
        private int punchHole(long offset, long length) {
            int status = fallocate(Libc.FALLOC_FL_PUNCH_HOLE | Libc.FALLOC_FL_KEEP_SIZE, offset, length);
            if (unsupported(status)) {
                punchHoleUnsupported = true;
            } else if (status == 0) {
                punchedHoles.incrementAndGet();
            }
            return status;
        }

        private boolean unsupported(int status) {
            return status == -Errno.EOPNOTSUPP || status == -Errno.ENOSYS || status == -Errno.ENOTTY;
        }

        private int fallocate(int mode, long offset, long length) {
            while (true) {
                if (Libc.fallocate(errno, fd, mode, offset, length) == 0) {
                    return 0;
                }
                int e = Libc.errno(errno);
                if (e != Errno.EINTR) {
                    return -e;
                }
            }
        }

        private int ioctl(long request, long argument) {
            while (true) {
                if (Libc.ioctl(errno, fd, request, argument) == 0) {
                    return 0;
                }
                int e = Libc.errno(errno);
                if (e != Errno.EINTR) {
                    return -e;
                }
            }
        }
    }
}
