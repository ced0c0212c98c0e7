package dev.nvmf.target.backend;

import java.lang.foreign.MemorySegment;

/**
 * The storage behind one namespace: byte-addressed, asynchronous (kernel: io-cmd-file.c / io-cmd-bdev.c).
 *
 * <p>Every operation returns at once; the outcome arrives through {@link BackendCallback#backendDone} exactly
 * once, on a backend thread or inline (RAM). Calls must never block the caller, which is a poller thread.
 * Implementations allocate nothing per operation once warm. Offsets and lengths are validated by the caller
 * (LBA range checks happen in the core), but a backend must still fail cleanly, not crash, on a bad range.
 */
public interface BlockBackend extends AutoCloseable {
    /** Capacity in bytes. */
    long sizeBytes();

    /** True if writes must be refused (a read-only file or device). */
    boolean readOnly();

    /** A short description for logs and metrics: "ram", "file:/path", "bdev:/dev/x". */
    String describe();

    /** Reads {@code length} bytes at {@code offset} into {@code destination}. */
    void read(long offset, MemorySegment destination, int length, Object attachment, BackendCallback callback);

    /**
     * Writes {@code length} bytes from {@code source} at {@code offset}. With {@code forceUnitAccess} the data is
     * durable on the medium before the callback (NVMe FUA).
     */
    void write(long offset, MemorySegment source, int length, boolean forceUnitAccess, Object attachment,
               BackendCallback callback);

    /** Makes every completed write durable (NVMe Flush with a volatile write cache). */
    void flush(Object attachment, BackendCallback callback);

    /**
     * Writes zeroes over a range (NVMe Write Zeroes): afterwards the range reads back zeroes, always. The backend
     * uses the fastest way the medium offers (zero-range, an offloaded write-zeroes, then written zero buffers).
     */
    void writeZeroes(long offset, long length, Object attachment, BackendCallback callback);

    /**
     * Write Zeroes the host allowed to deallocate (DEAC, NVM Command Set 1.0, 3.2.8): the backend may deallocate the
     * range instead, but only in a way that still guarantees zeroes on later reads. By default the plain
     * {@link #writeZeroes(long, long, Object, BackendCallback)}.
     */
    default void writeZeroes(long offset, long length, boolean mayDeallocate, Object attachment,
                             BackendCallback callback) {
        writeZeroes(offset, length, attachment, callback);
    }

    /**
     * Deallocates a range (NVMe Dataset Management with the AD attribute): an advisory discard that frees what the
     * medium can free and never writes data, so a discard of a whole disk (mkfs, fstrim) finishes in the time the
     * medium takes to unmap, far inside a host's I/O timeout. A medium that cannot discard completes with
     * {@code -EOPNOTSUPP} having done nothing. What later reads of the range return is
     * {@link #deallocatedReadsZeroes()}.
     */
    void deallocate(long offset, long length, Object attachment, BackendCallback callback);

    /**
     * True if blocks {@link #deallocate} freed read back as zeroes (Identify Namespace DLFEAT 001b); false if they
     * may return the old data or anything else (DLFEAT 000b, not reported). Can turn false at runtime, when the
     * medium turns out to refuse deallocation.
     */
    default boolean deallocatedReadsZeroes() {
        return false;
    }

    /**
     * The medium's physical block size in bytes (a 512e disk: 4096), or 0 if not known. Writes smaller than it, or
     * not aligned to it, cost the medium a read-modify-write (Identify Namespace NPWG/NPWA, NAWUPF).
     */
    default int physicalBlockSize() {
        return 0;
    }

    /** The medium's optimal I/O size in bytes (Identify Namespace NOWS), or 0 if not known. */
    default int optimalIoSize() {
        return 0;
    }

    /** The granularity in bytes the medium deallocates in (Identify Namespace NPDG/NPDA), or 0 if not known. */
    default int deallocateGranularity() {
        return 0;
    }

    /**
     * Reads the medium's capacity again (a grown device or file; kernel: {@code nvmet_bdev_ns_revalidate},
     * {@code nvmet_file_ns_revalidate}) and returns it; {@link #sizeBytes()} returns it from then on. Control path:
     * may make a system call. A backend whose capacity cannot change returns {@link #sizeBytes()}.
     */
    default long revalidateSize() {
        return sizeBytes();
    }

    /**
     * The medium as native memory that a transport may register and move data straight into and out of (a RAM
     * namespace), or null (the default: files, block devices, RBD, which keep the transport's buffered path). A
     * backend that returns one treats its {@link MemoryMedium#segment()} passed as the buffer of {@link #read} or
     * {@link #write} as "the data is already in place at offset": nothing is copied.
     */
    default MemoryMedium memoryMedium() {
        return null;
    }

    @Override
    void close();
}
