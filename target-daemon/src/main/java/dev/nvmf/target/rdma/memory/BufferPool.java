package dev.nvmf.target.rdma.memory;

import java.lang.foreign.MemorySegment;

/**
 * Fixed-size registered data buffers carved from one {@link RegisteredRegion}, and the requests waiting for one,
 * in arrival order. Owned by one poller thread: no locks, no allocation (acquire and release move an int on a
 * stack; waiters are linked through themselves). A buffer is released only after a completion shows the HCA is
 * done with it (thread "two initiators").
 */
public final class BufferPool {
    /** A request that waits for a buffer: linked into the pool's FIFO through itself, told when it has one. */
    public interface Waiter {
        /** Buffer {@code index} of {@code pool} is now this waiter's (called on the poller thread). */
        void bufferGranted(BufferPool pool, int index);

        Waiter nextWaiter();

        void nextWaiter(Waiter next);
    }

    private final RegisteredRegion region;
    private final int bufferSize;
    private final MemorySegment[] buffers;
    private final int[] freeStack;
    private final boolean[] inUse;
    private int freeCount;
    private Waiter head;
    private Waiter tail;
    private int waiting;

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

    /** Requests waiting for a buffer. */
    public int waiters() { return waiting; }

    public int lkey() { return region.lkey(); }

    public RegisteredRegion region() { return region; }

    /**
     * A free buffer for {@code waiter}: its index, or -1 when none is free or others wait already. Then the waiter
     * joins the FIFO and {@link Waiter#bufferGranted} tells it when a released buffer is its turn.
     */
    public int acquire(Waiter waiter) {
        if (head == null && freeCount > 0) return take();
        waiter.nextWaiter(null);
        if (tail == null) head = waiter; else tail.nextWaiter(waiter);
        tail = waiter;
        waiting++;
        return -1;
    }

    /** Takes {@code waiter} out of the FIFO (its queue is closing); false if it was not waiting. */
    public boolean cancel(Waiter waiter) {
        Waiter prev = null;
        for (Waiter w = head; w != null; prev = w, w = w.nextWaiter()) {
            if (w != waiter) continue;
            Waiter next = w.nextWaiter();
            if (prev == null) head = next; else prev.nextWaiter(next);
            if (tail == w) tail = prev;
            w.nextWaiter(null);
            waiting--;
            return true;
        }
        return false;
    }

    public MemorySegment buffer(int index) { return buffers[index]; }

    /** Gives a buffer back and hands free buffers to the waiters, first come first served. */
    public void release(int index) {
        if (!inUse[index]) throw new IllegalStateException("buffer " + index + " released twice");
        inUse[index] = false;
        freeStack[freeCount++] = index;
        while (head != null && freeCount > 0) {
            Waiter w = head;
            head = w.nextWaiter();
            if (head == null) tail = null;
            w.nextWaiter(null);
            waiting--;
            w.bufferGranted(this, take());
        }
    }

    private int take() {
        int i = freeStack[--freeCount];
        inUse[i] = true;
        return i;
    }
}
