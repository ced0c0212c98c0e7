package dev.nvmf.target.backend;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A test callback that records every completion: its result, attachment and thread. */
final class Completions implements BackendCallback {
    record Done(Object attachment, int result, Thread thread) {
    }

    private final AtomicInteger count = new AtomicInteger();
    private final ConcurrentLinkedQueue<Done> all = new ConcurrentLinkedQueue<>();
    private volatile Done last;

    @Override
    public void backendDone(Object attachment, int result) {
        Done d = new Done(attachment, result, Thread.currentThread());
        all.add(d);
        last = d;
        count.incrementAndGet();
    }

    int count() {
        return count.get();
    }

    int lastResult() {
        return last.result();
    }

    Object lastAttachment() {
        return last.attachment();
    }

    Thread lastThread() {
        return last.thread();
    }

    Iterable<Done> all() {
        return all;
    }

    /** Waits (generously) until {@code n} completions arrived in all; fails otherwise. */
    void awaitCount(int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (count.get() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + count.get() + " of " + n + " completions arrived");
            }
            Thread.onSpinWait();
        }
    }

    /** Waits for the next completion and returns its result. */
    int awaitNext(int before) {
        awaitCount(before + 1);
        return lastResult();
    }
}
