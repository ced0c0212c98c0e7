package dev.nvmf.target.backend.rbd;

import dev.nvmf.target.backend.BackendCallback;
import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.verbs.Errno;
import dev.nvmf.target.backend.Ranges;
import org.agrona.concurrent.ManyToManyConcurrentArrayQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Logger;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A namespace on a Ceph RBD image, through librbd's asynchronous C API ({@code rbd_aio_read}, {@code rbd_aio_write},
 * {@code rbd_aio_flush}, {@code rbd_aio_discard}, {@code rbd_aio_write_zeroes}) bound with FFM.
 *
 * <h2>Threads and the I/O path</h2>
 * The caller (a poller) takes a preallocated {@link RbdOperation} slot from a lock-free pool, asks librbd for a
 * completion whose argument is the slot's index and whose callback is one upcall stub made at open, and starts the
 * operation; with {@code rbd_non_blocking_aio} (forced on) librbd queues it to its own thread and returns at once.
 * librbd calls the stub on its thread when the operation is done; the stub reads the result, releases the
 * completion, returns the slot and invokes the {@link BackendCallback} there (the core hands the request to its
 * poller). Nothing on the Java heap is allocated per operation once warm; librbd itself allocates its completion
 * object natively. The upcall never throws into librbd (an exception escaping an upcall ends the JVM: JEP 454):
 * anything thrown is caught and counted ({@link #upcallFailures()}).
 *
 * <p>When all {@code maxInFlight} slots are in use, a submission completes at once, on the caller's thread, with
 * {@code -EAGAIN} (as {@code AsyncFdBackend} does). Size it to the sum of the queue depths that reach the namespace.
 *
 * <h2>Semantics</h2>
 * <ul>
 *   <li>Addressing is by byte: librbd has no alignment rule, so any offset and length inside the image works; the
 *       namespace's LBA size ({@link #logicalBlockSize()}, 512 unless configured 4096) is a choice for hosts.</li>
 *   <li>Flush is {@code rbd_aio_flush}: librbd's cache (on by default, write-around) acknowledges writes before the
 *       OSDs have them, and a flush waits until every completed write is on all replicas (Ceph librbd settings).
 *       A FUA write is the write, then that flush, issued from the write's completion; its callback comes after
 *       both.</li>
 *   <li>Write Zeroes is {@code rbd_aio_write_zeroes} without thick provisioning: whole objects are deallocated,
 *       partial ones zeroed; the range reads back as zeroes. Deallocate is {@code rbd_aio_discard}: whole objects are
 *       removed, parts of objects zeroed: {@link RadosConnection} turns {@code rbd_skip_partial_discard} off, which
 *       would otherwise skip pieces smaller than {@code rbd_discard_granularity_bytes} (64 KiB) and leave their old
 *       data (Ceph librbd settings), so deallocated blocks read back as zeroes ({@link #deallocatedReadsZeroes()},
 *       which the core reports as DLFEAT 001b).</li>
 *   <li>Resize by another client is noticed ({@link ImageSizeMonitor}), {@link #sizeBytes()} follows it and the
 *       {@link CapacityListener} is told; I/O beyond the current end fails with {@code -ERANGE}. A read-only
 *       namespace is opened with {@code rbd_open} too (writes are refused before any call) so that this holds for
 *       it as well, unless the user's caps are read-only (see {@link #watchesHeader()}).</li>
 * </ul>
 *
 * <h2>Errors</h2>
 * librbd's negative errno is passed to the callback unchanged (an operation librbd cut short at the image's end,
 * which happens only when the image shrank under it, gives {@code -ERANGE}). The ones that matter: {@code -EIO}, {@code -ENOSPC}
 * and {@code -EDQUOT} (cluster or pool quota full), {@code -EROFS} (a snapshot, a read-only open, or a mirrored
 * non-primary image), {@code -EPERM}/{@code -EACCES} (the cephx user's caps), {@code -ETIMEDOUT} (no OSD answer within
 * {@code osd_op_timeout}), {@code -ESHUTDOWN} (this client was blocklisted), {@code -ENOENT} (the image was removed).
 * Checks that need no call complete inline: {@code -ERANGE} outside the image or the buffer, {@code -EINVAL} for
 * negative numbers or a null buffer, {@code -EFAULT} for a heap buffer, {@code -EROFS} for writes to a read-only
 * namespace, {@code -ENODEV} once closing.
 */
public final class RbdBackend implements BlockBackend {
    private static final Logger LOG = Logger.getLogger(RbdBackend.class.getName());

    public static final int DEFAULT_MAX_IN_FLIGHT = 1024;

    /** Told when the image's size changes; called on the backend's size-monitor thread, and must not block. */
    @FunctionalInterface
    public interface CapacityListener {
        void capacityChanged(RbdBackend backend, long oldSizeBytes, long newSizeBytes);
    }

    private final RbdSpec spec;
    private final String description;
    private final RadosConnection connection;
    private final long image;
    private final boolean readOnly;
    private final long objectSize;
    private final int order;
    private final long features;
    private final int maxInFlight;

    private final Arena arena = Arena.ofShared();
    /** One {@code rbd_completion_t} out-parameter per slot, at {@code 8 * index}. */
    private final MemorySegment completionCells;
    private final long completionCellsAddress;
    private final long callbackStub;
    private final RbdOperation[] slots;
    private final ManyToManyConcurrentArrayQueue<RbdOperation> free;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final ImageSizeMonitor sizeMonitor;

    private volatile long sizeBytes;
    private volatile CapacityListener capacityListener;
    private volatile boolean closing;
    private volatile Thread closer;
    private boolean closed;

    private final AtomicLong fuaFlushes = new AtomicLong();
    private final AtomicLong upcallFailures = new AtomicLong();
    private final AtomicLong callbackFailures = new AtomicLong();

    private RbdBackend(RbdSpec spec, RadosConnection connection, long image, boolean readOnly, long sizeBytes,
                       long objectSize, int order, long features, int maxInFlight, boolean watchable) {
        this.spec = spec;
        this.description = spec.describe();
        this.connection = connection;
        this.image = image;
        this.readOnly = readOnly;
        this.sizeBytes = sizeBytes;
        this.objectSize = objectSize;
        this.order = order;
        this.features = features;
        this.maxInFlight = maxInFlight;
        this.completionCells = arena.allocate((long) RbdLayout.RBD_COMPLETION_SIZE * maxInFlight,
                RbdLayout.POINTER_SIZE);
        this.completionCellsAddress = completionCells.address();
        this.slots = new RbdOperation[maxInFlight];
        // Twice the pool, as in AsyncFdBackend: an offer then never meets a slot still being vacated by a poll.
        this.free = new ManyToManyConcurrentArrayQueue<>(2 * maxInFlight);
        for (int i = 0; i < maxInFlight; i++) {
            slots[i] = new RbdOperation(i);
            free.offer(slots[i]);
        }
        try {
            MethodHandle target = MethodHandles.lookup().findVirtual(RbdBackend.class, "rbdCompleted",
                    MethodType.methodType(void.class, long.class, long.class)).bindTo(this);
            this.callbackStub = Linker.nativeLinker().upcallStub(target, CephNative.RBD_CALLBACK, arena).address();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        this.sizeMonitor = new ImageSizeMonitor(description, image, watchable, spec.sizePollInterval(), arena,
                this::sizeRead);
    }

    /**
     * Connects to the cluster, opens the image (read-only for a snapshot or when {@code readOnly}) and reads its
     * size and layout. Blocks for at most the spec's connect timeout plus a few monitor/OSD round trips.
     *
     * @param maxInFlight operation slots (at least 1); beyond them submissions complete with {@code -EAGAIN}
     * @throws RbdOpenException naming the image, the failing step and its errno
     */
    public static RbdBackend open(RbdSpec spec, boolean readOnly, int maxInFlight) throws RbdOpenException {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight must be at least 1: " + maxInFlight);
        }
        String name = spec.describe();
        boolean ro = readOnly || spec.snapshot() != null;
        RadosConnection connection = RadosConnection.open(spec);
        long image = 0;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            MemorySegment imageName = a.allocateFrom(spec.image());
            MemorySegment snap = spec.snapshot() == null ? MemorySegment.NULL : a.allocateFrom(spec.snapshot());
            // rbd_open even for a read-only namespace (writes are refused here, before any call): only it sets the
            // header watch through which librbd learns of a resize; rbd_open_read_only never refreshes the size.
            // A cephx user with read-only caps cannot set the watch: it gets rbd_open_read_only and no resizes.
            int rc = CephNative.rbdOpen(connection.ioctx(), imageName, out, snap);
            boolean watchable = true;
            String call = "rbd_open";
            if (ro && (rc == -Errno.EPERM || rc == -Errno.EACCES)) {
                rc = CephNative.rbdOpenReadOnly(connection.ioctx(), imageName, out, snap);
                watchable = false;
                call = "rbd_open_read_only";
            }
            if (rc < 0) {
                throw new RbdOpenException(name, call, rc, openHint(rc, spec));
            }
            image = out.get(JAVA_LONG, 0);
            MemorySegment info = a.allocate(RbdLayout.RBD_IMAGE_INFO_SIZE, RbdLayout.RBD_IMAGE_INFO_ALIGNMENT);
            rc = CephNative.rbdStat(image, info, RbdLayout.RBD_IMAGE_INFO_SIZE);
            if (rc < 0) {
                throw new RbdOpenException(name, "rbd_stat", rc, null);
            }
            long size = info.get(JAVA_LONG, RbdLayout.RBD_IMAGE_INFO_SIZE_OFFSET);
            long objectSize = info.get(JAVA_LONG, RbdLayout.RBD_IMAGE_INFO_OBJ_SIZE);
            int order = info.get(java.lang.foreign.ValueLayout.JAVA_INT, RbdLayout.RBD_IMAGE_INFO_ORDER);
            rc = CephNative.rbdGetFeatures(image, out);
            long features = rc < 0 ? 0 : out.get(JAVA_LONG, 0);
            if (size < spec.blockSize()) {
                throw new RbdOpenException(name, "rbd_stat", 0, "the image (" + size
                        + " bytes) is smaller than one " + spec.blockSize() + "-byte block");
            }
            RbdBackend b = new RbdBackend(spec, connection, image, ro, size, objectSize, order, features, maxInFlight,
                    watchable);
            LOG.info(name + ": opened" + (ro ? " read-only" : "") + ", " + size + " bytes, " + objectSize
                    + "-byte objects, client." + spec.id() + (b.sizeMonitor.watching() ? ""
                    : ", without a header watch (read-only caps): resizes are not seen until it is reopened"));
            return b;
        } catch (RbdOpenException | RuntimeException e) {
            if (image != 0) {
                CephNative.rbdClose(image);
            }
            connection.close();
            throw e;
        }
    }

    private static String openHint(int rc, RbdSpec spec) {
        return switch (-rc) {
            case Errno.ENOENT -> spec.snapshot() == null ? "no such image in pool " + spec.pool()
                    + (spec.namespace() == null ? "" : " namespace " + spec.namespace())
                    : "no such image or snapshot";
            case Errno.EPERM, Errno.EACCES -> "client." + spec.id() + " lacks the caps (e.g. mon 'profile rbd', "
                    + "osd 'profile rbd pool=" + spec.pool() + "')";
            case Errno.ETIMEDOUT -> "no OSD answered within " + spec.osdOpTimeout().getSeconds()
                    + " s (osd_op_timeout)";
            default -> null;
        };
    }

    // ---------------------------------------------------------------- what the namespace needs

    /** The image's current size in bytes (follows resizes). */
    @Override
    public long sizeBytes() {
        return sizeBytes;
    }

    @Override
    public boolean readOnly() {
        return readOnly;
    }

    /** "rbd:pool/image" (with namespace and snapshot when given); never credentials. */
    @Override
    public String describe() {
        return description;
    }

    /** The LBA size the namespace should use: 512 unless the spec says 4096. librbd itself takes any byte range. */
    public int logicalBlockSize() {
        return spec.blockSize();
    }

    /** The image's object size (bytes, 2^order): the natural unit for optimal I/O and deallocation hints. */
    public long objectSize() {
        return objectSize;
    }

    /** log2 of {@link #objectSize()}. */
    public int order() {
        return order;
    }

    /** True if the image has the exclusive-lock feature: concurrent writers from several clients take turns. */
    public boolean exclusiveLock() {
        return (features & RbdLayout.RBD_FEATURE_EXCLUSIVE_LOCK) != 0;
    }

    /**
     * True if librbd watches the image header (and so sees resizes); false when the cephx user's read-only caps
     * forced {@code rbd_open_read_only}, which never refreshes the size.
     */
    public boolean watchesHeader() {
        return sizeMonitor.watching();
    }

    /** Sets (or clears, with null) who is told about resizes. A resize before this call shows in sizeBytes(). */
    public void capacityListener(CapacityListener listener) {
        this.capacityListener = listener;
    }

    public int maxInFlight() {
        return maxInFlight;
    }

    /** Operations submitted and not yet completed (callbacks included). */
    public int inFlight() {
        return inFlight.get();
    }

    /** Flushes issued to make FUA writes durable. */
    public long fuaFlushes() {
        return fuaFlushes.get();
    }

    /** Completion upcalls that caught a throwable (an operation may then be lost); should stay 0. */
    public long upcallFailures() {
        return upcallFailures.get();
    }

    /** Callbacks that threw (caught, counted; the operation was still accounted complete). */
    public long callbackFailures() {
        return callbackFailures.get();
    }

    private void sizeRead(long newSize) {
        long old = sizeBytes;
        if (newSize == old) {
            return;
        }
        sizeBytes = newSize;
        LOG.info(description + ": resized from " + old + " to " + newSize + " bytes");
        CapacityListener l = capacityListener;
        if (l != null) {
            l.capacityChanged(this, old, newSize);
        }
    }

    // ---------------------------------------------------------------- submission (caller's thread)

    @Override
    public void read(long offset, MemorySegment destination, int length, Object attachment, BackendCallback callback) {
        int status = checkTransfer(offset, destination, length);
        if (status != 0) {
            callback.backendDone(attachment, status);
            return;
        }
        submit(RbdOperation.READ, offset, destination.address(), length, attachment, callback);
    }

    @Override
    public void write(long offset, MemorySegment source, int length, boolean forceUnitAccess, Object attachment,
                      BackendCallback callback) {
        int status = readOnly ? -Errno.EROFS : checkTransfer(offset, source, length);
        if (status != 0) {
            callback.backendDone(attachment, status);
            return;
        }
        submit(forceUnitAccess ? RbdOperation.WRITE_FUA : RbdOperation.WRITE, offset, source.address(), length,
                attachment, callback);
    }

    @Override
    public void flush(Object attachment, BackendCallback callback) {
        submit(RbdOperation.FLUSH, 0, 0, 0, attachment, callback);
    }

    @Override
    public void writeZeroes(long offset, long length, Object attachment, BackendCallback callback) {
        submitRange(RbdOperation.WRITE_ZEROES, offset, length, attachment, callback);
    }

    @Override
    public void deallocate(long offset, long length, Object attachment, BackendCallback callback) {
        submitRange(RbdOperation.DISCARD, offset, length, attachment, callback);
    }

    /** Discarded ranges read back zeroes: partial-object discards zero their part (see the class comment). */
    @Override
    public boolean deallocatedReadsZeroes() {
        return true;
    }

    private void submitRange(int opcode, long offset, long length, Object attachment, BackendCallback callback) {
        int status = readOnly ? -Errno.EROFS : Ranges.check(offset, length, sizeBytes);
        if (status != 0) {
            callback.backendDone(attachment, status);
            return;
        }
        submit(opcode, offset, 0, length, attachment, callback);
    }

    private int checkTransfer(long offset, MemorySegment buffer, int length) {
        int status = Ranges.checkTransfer(offset, buffer, length, sizeBytes);
        if (status == 0 && !buffer.isNative()) {
            return -Errno.EFAULT; // a heap array has no stable address for librbd's thread
        }
        return status;
    }

    private void submit(int opcode, long offset, long address, long length, Object attachment,
                        BackendCallback callback) {
        // Counted before the closing check so that close() cannot miss an operation that passed it.
        inFlight.getAndIncrement();
        if (closing) {
            finishRefused(attachment, callback, -Errno.ENODEV);
            return;
        }
        RbdOperation op = take();
        if (op == null) {
            finishRefused(attachment, callback, -Errno.EAGAIN);
            return;
        }
        op.set(opcode, offset, address, length, attachment, callback);
        int rc = start(op, RbdOperation.PHASE_MAIN);
        if (rc < 0) {
            finish(op, rc);
        }
    }

    /**
     * Creates the slot's completion and issues the librbd call of {@code phase}. Returns the call's refusal (then no
     * upcall will come, and the slot is still the caller's), or 0: from then on the slot belongs to the upcall,
     * which may already have run and handed it to another operation, so the caller must not touch it.
     */
    private int start(RbdOperation op, int phase) {
        int index = op.index;
        long cell = completionCellsAddress + (long) index * RbdLayout.RBD_COMPLETION_SIZE;
        int rc = CephNative.rbdAioCreateCompletion(index, callbackStub, cell);
        if (rc < 0) {
            return rc;
        }
        long completion = completionCells.get(JAVA_LONG, (long) index * RbdLayout.RBD_COMPLETION_SIZE);
        int opcode = op.opcode;
        long offset = op.offset;
        long address = op.address;
        long length = op.length;
        op.phase = phase; // publishes the slot to the upcall's thread (volatile write before the call)
        if (phase == RbdOperation.PHASE_FUA_FLUSH) {
            rc = CephNative.rbdAioFlush(image, completion);
        } else {
            rc = switch (opcode) {
                case RbdOperation.READ -> CephNative.rbdAioRead(image, offset, length, address, completion);
                case RbdOperation.WRITE, RbdOperation.WRITE_FUA ->
                        CephNative.rbdAioWrite(image, offset, length, address, completion);
                case RbdOperation.FLUSH -> CephNative.rbdAioFlush(image, completion);
                case RbdOperation.WRITE_ZEROES -> CephNative.rbdAioWriteZeroes(image, offset, length, completion,
                        RbdLayout.RBD_WRITE_ZEROES_FLAGS_NONE, RbdLayout.LIBRADOS_OP_FLAGS_NONE);
                case RbdOperation.DISCARD -> CephNative.rbdAioDiscard(image, offset, length, completion);
                default -> -Errno.EINVAL;
            };
        }
        if (rc < 0) {
            // librbd refused it: no callback will come for this completion.
            CephNative.rbdAioRelease(completion);
        }
        return rc;
    }

    /** A free slot, or null if all are in flight (a few retries cover a slot midway through being returned). */
    private RbdOperation take() {
        RbdOperation op = free.poll();
        for (int spins = 0; op == null && spins < 100 && !free.isEmpty(); spins++) {
            Thread.onSpinWait();
            op = free.poll();
        }
        return op;
    }

    // ---------------------------------------------------------------- completion (librbd's thread)

    /**
     * The upcall: {@code rbd_callback_t(completion, arg)} with {@code arg} the slot index. Never throws.
     */
    private void rbdCompleted(long completion, long arg) {
        try {
            long value = CephNative.rbdAioGetReturnValue(completion);
            CephNative.rbdAioRelease(completion);
            RbdOperation op = slots[(int) arg];
            int phase = op.phase; // acquire: the submitter's fields are visible from here on
            if (value >= 0 && phase == RbdOperation.PHASE_MAIN && op.opcode == RbdOperation.WRITE_FUA) {
                fuaFlushes.incrementAndGet();
                int rc = start(op, RbdOperation.PHASE_FUA_FLUSH);
                if (rc >= 0) {
                    return; // the flush's own completion finishes the operation
                }
                value = rc;
            }
            finish(op, result(op, phase, value));
        } catch (Throwable t) {
            upcallFailures.incrementAndGet();
        }
    }

    /**
     * librbd's return value as the callback's result: 0 or a negative errno. librbd clips an operation at the
     * image's end (the image shrank under the request): a read then returns fewer bytes than asked, and any
     * operation that reports a byte count reports fewer; either is {@code -ERANGE}, never a silent partial success.
     */
    private static int result(RbdOperation op, int phase, long value) {
        if (value < 0) {
            return (int) Math.max(value, Integer.MIN_VALUE);
        }
        if (phase == RbdOperation.PHASE_MAIN && op.opcode != RbdOperation.FLUSH && value < op.length
                && (value > 0 || op.opcode == RbdOperation.READ)) {
            return -Errno.ERANGE;
        }
        return 0;
    }

    private void finish(RbdOperation op, int result) {
        Object attachment = op.attachment;
        BackendCallback callback = op.callback;
        op.clear();
        // Holding fewer slots than its capacity, the queue refuses only while a poller is mid-poll on this slot
        // a lap ago: a few instructions.
        while (!free.offer(op)) {
            Thread.onSpinWait();
        }
        try {
            callback.backendDone(attachment, result);
        } catch (Throwable t) {
            callbackFailures.incrementAndGet();
        } finally {
            completed();
        }
    }

    private void finishRefused(Object attachment, BackendCallback callback, int status) {
        try {
            callback.backendDone(attachment, status);
        } finally {
            completed();
        }
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
     * Refuses new operations ({@code -ENODEV}), waits for those in flight (each is bounded by the OSD op timeout),
     * stops the size monitor, closes the image and the cluster connection, then frees the slots' native memory and
     * the upcall stubs. Call it from a control thread, never from a callback. Idempotent.
     *
     * <p>If operations are still outstanding after the image is closed (librbd lost them: it should not), the native
     * memory and stubs are deliberately left allocated, since librbd could still call them, and a warning is logged.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        closer = Thread.currentThread();
        closing = true;
        long bound = TimeUnit.SECONDS.toNanos(spec.osdOpTimeout().getSeconds() * 2 + 10);
        long deadline = System.nanoTime() + bound;
        while (inFlight.get() > 0 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(100));
        }
        boolean monitorStopped = sizeMonitor.close(Duration.ofSeconds(spec.monOpTimeout().getSeconds() + 10));
        int rc = CephNative.rbdClose(image);
        if (rc < 0) {
            LOG.warning(description + ": rbd_close: " + Errno.describe(rc));
        }
        connection.close();
        int left = inFlight.get();
        if (left == 0 && monitorStopped) {
            arena.close();
        } else {
            LOG.warning(description + ": closed with " + left + " operation(s) still in flight"
                    + (monitorStopped ? "" : " and the size monitor still running")
                    + "; their native memory is left allocated");
        }
    }
}
