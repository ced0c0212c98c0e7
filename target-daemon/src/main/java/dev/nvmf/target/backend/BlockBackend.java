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

    /** Writes zeroes over a range (NVMe Write Zeroes); may punch or zero-range where the medium allows. */
    void writeZeroes(long offset, long length, Object attachment, BackendCallback callback);

    /** Deallocates a range (NVMe Dataset Management, AD bit): later reads of it return zeroes. */
    void deallocate(long offset, long length, Object attachment, BackendCallback callback);

    @Override
    void close();
}
