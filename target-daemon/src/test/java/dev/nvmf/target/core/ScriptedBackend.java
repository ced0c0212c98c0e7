package dev.nvmf.target.core;

import dev.nvmf.target.backend.BackendCallback;
import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.backend.RamBackend;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A RAM backend that records what the core asked (FUA, deallocated ranges), can fail the next operation with an
 * errno, and can hold completions back to run them later on another thread (an asynchronous backend).
 */
final class ScriptedBackend implements BlockBackend {
    private final RamBackend ram;
    volatile boolean lastFua;
    volatile int failNext;
    volatile boolean deferred;
    volatile int flushes;
    volatile int writeZeroes;
    volatile int revalidations;
    volatile boolean lastMayDeallocate;
    /** What the medium claims (Identify Namespace DLFEAT, NPWG ...). */
    volatile boolean deallocatedReadsZeroes = true;
    volatile int physicalBlockSize;
    volatile int optimalIoSize;
    volatile int deallocateGranularity;
    /** The capacity the medium reports; starts as the RAM's. */
    volatile long sizeBytes;
    final List<Runnable> held = new ArrayList<>();
    final List<long[]> deallocated = new ArrayList<>();

    ScriptedBackend(long size) {
        this.ram = new RamBackend(size);
        this.sizeBytes = size;
    }

    private boolean intercept(Object attachment, BackendCallback cb) {
        int f = failNext;
        if (f != 0) {
            failNext = 0;
            cb.backendDone(attachment, f);
            return true;
        }
        return false;
    }

    private void done(Runnable r) {
        if (deferred) {
            synchronized (held) {
                held.add(r);
            }
        } else {
            r.run();
        }
    }

    @Override public long sizeBytes() { return sizeBytes; }
    @Override public boolean readOnly() { return false; }
    @Override public String describe() { return "scripted"; }

    @Override
    public void read(long offset, MemorySegment destination, int length, Object a, BackendCallback cb) {
        if (!intercept(a, cb)) {
            done(() -> ram.read(offset, destination, length, a, cb));
        }
    }

    @Override
    public void write(long offset, MemorySegment source, int length, boolean fua, Object a, BackendCallback cb) {
        lastFua = fua;
        if (!intercept(a, cb)) {
            done(() -> ram.write(offset, source, length, fua, a, cb));
        }
    }

    @Override
    public void flush(Object a, BackendCallback cb) {
        flushes++;
        if (!intercept(a, cb)) {
            done(() -> ram.flush(a, cb));
        }
    }

    @Override
    public void writeZeroes(long offset, long length, Object a, BackendCallback cb) {
        writeZeroes(offset, length, false, a, cb);
    }

    @Override
    public void writeZeroes(long offset, long length, boolean mayDeallocate, Object a, BackendCallback cb) {
        lastMayDeallocate = mayDeallocate;
        writeZeroes++;
        if (!intercept(a, cb)) {
            done(() -> ram.writeZeroes(offset, length, a, cb));
        }
    }

    @Override public boolean deallocatedReadsZeroes() { return deallocatedReadsZeroes; }
    @Override public int physicalBlockSize() { return physicalBlockSize; }
    @Override public int optimalIoSize() { return optimalIoSize; }
    @Override public int deallocateGranularity() { return deallocateGranularity; }

    @Override
    public long revalidateSize() {
        revalidations++;
        return sizeBytes();
    }

    @Override
    public void deallocate(long offset, long length, Object a, BackendCallback cb) {
        synchronized (deallocated) {
            deallocated.add(new long[] {offset, length});
        }
        if (!intercept(a, cb)) {
            done(() -> ram.deallocate(offset, length, a, cb));
        }
    }

    /** Runs the held completions on a new thread and waits for it. */
    void releaseOnAnotherThread() throws InterruptedException {
        List<Runnable> list;
        synchronized (held) {
            list = new ArrayList<>(held);
            held.clear();
        }
        Thread t = new Thread(() -> list.forEach(Runnable::run), "backend");
        t.start();
        t.join();
    }

    @Override
    public void close() {
        ram.close();
    }
}
