package dev.nvmf.target.rdma.memory;

import java.lang.foreign.MemorySegment;

/**
 * Fixed-size registered data buffers carved from one {@link RegisteredRegion}; owned by one poller thread (no
 * locks, no allocation: acquire and release move an int on a stack). A buffer is released only after a
 * completion proves the HCA is done with it (shared/seeds/003).
 */
public final class BufferPool {
    private final RegisteredRegion region;
    private final int bufferSize;
    private final MemorySegment[] buffers;
    private final int[] freeStack;
    private final boolean[] inUse;
    private int freeCount;

    public BufferPool(RegisteredRegion region, int bufferSize) {
        this.region = region;
        this.bufferSize = bufferSize;
        int count = (int) (region.length() / bufferSize);
        if (count < 1) throw new IllegalArgumentException("region too small for one buffer");
        buffers = new MemorySegment[count];
        freeStack = new int[count];
        inUse = new boolean[count];
        for (int i = 0; i < count; i++) {
            buffers[i] = region.segment().asSlice((long) i * bufferSize, bufferSize);
            freeStack[i] = count - 1 - i;
        }
        freeCount = count;
    }

    public int bufferSize() { return bufferSize; }

    public int capacity() { return buffers.length; }

    public int available() { return freeCount; }

    public int lkey() { return region.lkey(); }

    public RegisteredRegion region() { return region; }

    /** Takes a free buffer: its index, or -1 when none is free (the caller waits in FIFO order). */
    public int acquire() {
        if (freeCount == 0) return -1;
        int i = freeStack[--freeCount];
        inUse[i] = true;
        return i;
    }

    public MemorySegment buffer(int index) { return buffers[index]; }

    public void release(int index) {
        if (!inUse[index]) throw new IllegalStateException("buffer " + index + " released twice");
        inUse[index] = false;
        freeStack[freeCount++] = index;
    }
}
