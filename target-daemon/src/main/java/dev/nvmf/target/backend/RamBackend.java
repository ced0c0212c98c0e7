package dev.nvmf.target.backend;

import dev.nvmf.verbs.Errno;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A namespace in native memory: the fastest backend, used for tests and for benchmarks of the fabric.
 *
 * <p>The memory is one segment from a shared arena, allocated (and zeroed) at creation, so the capacity is committed
 * up front and no I/O ever allocates. Every operation completes inline, on the caller's thread, before the call
 * returns; the callback is invoked exactly once. Write Zeroes and Deallocate both fill zeroes (a deallocated range
 * reads back as zeroes: {@link #deallocatedReadsZeroes()}).
 *
 * <p>Bad ranges never throw: they complete with {@code -ERANGE} (outside the capacity or the caller's buffer) or
 * {@code -EINVAL} (negative numbers, a null buffer); writes to a read-only instance with {@code -EROFS}, and every
 * operation after {@link #close()} with {@code -ENODEV}.
 */
public final class RamBackend implements BlockBackend {
    /** Zero source for Write Zeroes and Deallocate: copying from it allocates nothing (unlike asSlice().fill()). */
    private static final long ZERO_CHUNK = 64 * 1024;

    private final MemorySegment memory;
    /** The memory and who holds it: freed when the last hold goes, never before a transport deregistered it. */
    private final MemoryMedium medium;
    private final MemorySegment zeroes;
    private final long sizeBytes;
    private final boolean readOnly;
    private volatile boolean closed;

    /** A writable RAM namespace of {@code sizeBytes} bytes, all zero. */
    public RamBackend(long sizeBytes) {
        this(sizeBytes, false);
    }

    /**
     * @param sizeBytes capacity in bytes (more than zero)
     * @param readOnly  refuse writes (an all-zero read-only namespace is of use only to tests)
     * @throws IllegalArgumentException if the size is not positive
     * @throws OutOfMemoryError         if the memory cannot be allocated
     */
    public RamBackend(long sizeBytes, boolean readOnly) {
        if (sizeBytes <= 0) {
            throw new IllegalArgumentException("RAM backend size must be positive: " + sizeBytes);
        }
        Arena arena = Arena.ofShared();
        try {
            // Page-aligned: a device registers whole pages (ibv_reg_mr(3)) and the transport may register it.
            this.memory = arena.allocate(sizeBytes, 4096);
            this.zeroes = arena.allocate(ZERO_CHUNK, 4096);
        } catch (RuntimeException | Error e) {
            arena.close();
            throw e;
        }
        this.medium = new MemoryMedium(arena, memory);
        this.sizeBytes = sizeBytes;
        this.readOnly = readOnly;
    }

    @Override
    public long sizeBytes() {
        return sizeBytes;
    }

    @Override
    public boolean readOnly() {
        return readOnly;
    }

    @Override
    public String describe() {
        return "ram";
    }

    /** The memory itself: a transport may register it and move data straight in and out ({@link #read}). */
    @Override
    public MemoryMedium memoryMedium() {
        return medium;
    }

    /**
     * Copies the range into {@code destination}; when {@code destination} is the medium itself ({@link
     * MemoryMedium#segment()}) the transport sends the bytes from where they are, and nothing is copied.
     */
    @Override
    public void read(long offset, MemorySegment destination, int length, Object attachment, BackendCallback callback) {
        int status = checkTransfer(offset, destination, length);
        if (status == 0 && destination != memory) {
            try {
                MemorySegment.copy(memory, offset, destination, 0, length);
            } catch (IllegalStateException | IndexOutOfBoundsException e) {
                // Closed concurrently (the arena's handshake) or the destination's arena was closed: not our caller's crash.
                status = closed ? -Errno.ENODEV : -Errno.EFAULT;
            }
        }
        callback.backendDone(attachment, status);
    }

    @Override
    public void write(long offset, MemorySegment source, int length, boolean forceUnitAccess, Object attachment,
                      BackendCallback callback) {
        int status = readOnly ? -Errno.EROFS : checkTransfer(offset, source, length);
        // The medium itself as the source: the transport already put the host's bytes in place (zero copy).
        if (status == 0 && source != memory) {
            try {
                // Memory is the medium: FUA has nothing further to wait for.
                MemorySegment.copy(source, 0, memory, offset, length);
            } catch (IllegalStateException | IndexOutOfBoundsException e) {
                status = closed ? -Errno.ENODEV : -Errno.EFAULT;
            }
        }
        callback.backendDone(attachment, status);
    }

    @Override
    public void flush(Object attachment, BackendCallback callback) {
        callback.backendDone(attachment, closed ? -Errno.ENODEV : 0);
    }

    @Override
    public void writeZeroes(long offset, long length, Object attachment, BackendCallback callback) {
        callback.backendDone(attachment, zero(offset, length));
    }

    /** Memory has no allocation to free: deallocating zeroes the range, at memory speed. */
    @Override
    public void deallocate(long offset, long length, Object attachment, BackendCallback callback) {
        callback.backendDone(attachment, zero(offset, length));
    }

    /** A deallocated range reads back zeroes: {@link #deallocate} zeroes it. */
    @Override
    public boolean deallocatedReadsZeroes() {
        return true;
    }

    private int zero(long offset, long length) {
        if (closed) {
            return -Errno.ENODEV;
        }
        if (readOnly) {
            return -Errno.EROFS;
        }
        int status = checkRange(offset, length);
        if (status != 0) {
            return status;
        }
        try {
            long done = 0;
            while (done < length) {
                long n = Math.min(ZERO_CHUNK, length - done);
                MemorySegment.copy(zeroes, 0, memory, offset + done, n);
                done += n;
            }
            return 0;
        } catch (IllegalStateException e) {
            return -Errno.ENODEV;
        }
    }

    private int checkTransfer(long offset, MemorySegment buffer, int length) {
        if (closed) {
            return -Errno.ENODEV;
        }
        return Ranges.checkTransfer(offset, buffer, length, sizeBytes);
    }

    private int checkRange(long offset, long length) {
        return Ranges.check(offset, length, sizeBytes);
    }

    /**
     * Operations issued afterwards complete with {@code -ENODEV}; the memory is freed at once, or, while a
     * transport has it registered, once that transport deregistered it ({@link MemoryMedium}). Idempotent.
     */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            medium.retire();
        }
    }
}
