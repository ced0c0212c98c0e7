package dev.nvmf.target.core.controller;

import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;

import java.lang.foreign.MemorySegment;

/**
 * The Error Information log of one controller (NVMe Base 2.0, 5.16.1.2): a ring of the latest failed commands,
 * reported newest first. Recording happens only for failed commands (never on the successful I/O path); it
 * allocates nothing.
 */
public final class ErrorLog {
    private final int capacity;
    private final long[] count;
    private final int[] sqid;
    private final int[] cid;
    private final int[] status;
    private final int[] location;
    private final long[] lba;
    private final int[] nsid;
    private long errorCount;

    public ErrorLog(int capacity) {
        this.capacity = capacity;
        this.count = new long[capacity];
        this.sqid = new int[capacity];
        this.cid = new int[capacity];
        this.status = new int[capacity];
        this.location = new int[capacity];
        this.lba = new long[capacity];
        this.nsid = new int[capacity];
    }

    public int capacity() { return capacity; }

    /**
     * @param statusValue a {@code Status} value
     * @param paramLocation byte offset in the SQE of the bad field (0xFFFF = not known)
     */
    public synchronized void record(int sq, int commandId, int statusValue, int paramLocation, long lbaValue,
                                    int namespaceId) {
        errorCount++;
        int slot = (int) ((errorCount - 1) % capacity);
        count[slot] = errorCount;
        sqid[slot] = sq;
        cid[slot] = commandId;
        status[slot] = statusValue;
        location[slot] = paramLocation;
        lba[slot] = lbaValue;
        nsid[slot] = namespaceId;
    }

    public synchronized long errorCount() { return errorCount; }

    /** Writes the whole page ({@code capacity} entries of 64 bytes, newest first, unused entries zero). */
    public synchronized void write(MemorySegment page) {
        long n = Math.min(errorCount, capacity);
        for (int i = 0; i < n; i++) {
            int slot = (int) ((errorCount - 1 - i) % capacity);
            long base = (long) i * LogPages.ERROR_ENTRY_SIZE;
            Le.u64(page, base + LogPages.ERROR_COUNT, count[slot]);
            Le.u16(page, base + LogPages.ERROR_SQID, sqid[slot]);
            Le.u16(page, base + LogPages.ERROR_CID, cid[slot]);
            Le.u16(page, base + LogPages.ERROR_STATUS, (status[slot] << 1) & 0xFFFE);
            Le.u16(page, base + LogPages.ERROR_PARAMETER_LOCATION, location[slot]);
            Le.u64(page, base + LogPages.ERROR_LBA, lba[slot]);
            Le.u32(page, base + LogPages.ERROR_NSID, nsid[slot]);
            Le.u8(page, base + LogPages.ERROR_TRTYPE, dev.nvmf.target.nvme.DiscoveryLog.TRTYPE_RDMA);
        }
    }
}
