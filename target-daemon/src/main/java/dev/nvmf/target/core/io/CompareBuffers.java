package dev.nvmf.target.core.io;

import org.agrona.concurrent.ManyToManyConcurrentArrayQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The scratch buffers Compare reads the medium into, shared by every queue of a target: at most {@code capacity}
 * buffers of the largest transfer, allocated the first time that many compares run at once and reused after, so
 * the memory is bounded by how many compares are in flight (not by how many pooled requests ever ran one) and
 * nothing is allocated once warm. Any thread; lock-free.
 */
final class CompareBuffers implements AutoCloseable {
    private final long bufferBytes;
    private final int capacity;
    private final ManyToManyConcurrentArrayQueue<MemorySegment> free;
    private final AtomicInteger allocated = new AtomicInteger();
    private final Arena arena = Arena.ofShared();
    private volatile boolean closed;

    CompareBuffers(long bufferBytes, int capacity) {
        this.bufferBytes = bufferBytes;
        this.capacity = capacity;
        this.free = new ManyToManyConcurrentArrayQueue<>(Math.max(2, capacity));
    }

    /** A buffer of the largest transfer, or null when {@code capacity} are in use (or the target is closed). */
    MemorySegment take() {
        MemorySegment buffer = free.poll();
        if (buffer != null) {
            return buffer;
        }
        for (int n = allocated.get(); n < capacity; n = allocated.get()) {
            if (allocated.compareAndSet(n, n + 1)) {
                synchronized (this) {
                    return closed ? null : arena.allocate(bufferBytes, 4096);
                }
            }
        }
        return null;
    }

    /** Gives back a buffer {@link #take} returned. */
    void give(MemorySegment buffer) {
        free.offer(buffer);
    }

    int capacity() { return capacity; }

    /** Frees every buffer; call once no command is in flight (every queue closed). */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            arena.close();
        }
    }
}
