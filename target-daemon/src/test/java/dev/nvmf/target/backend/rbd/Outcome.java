package dev.nvmf.target.backend.rbd;

import dev.nvmf.target.backend.BackendCallback;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** One operation's outcome: waits (generously) for exactly one callback and records its result and thread. */
final class Outcome implements BackendCallback {
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicInteger calls = new AtomicInteger();
    private volatile int result;
    private volatile Object attachment;
    private volatile Thread thread;

    @Override
    public void backendDone(Object attachment, int result) {
        this.result = result;
        this.attachment = attachment;
        this.thread = Thread.currentThread();
        calls.incrementAndGet();
        done.countDown();
    }

    /** The result (0 or -errno), after waiting up to 120 s; fails if no callback came. */
    int await() {
        try {
            if (!done.await(120, TimeUnit.SECONDS)) {
                throw new AssertionError("no completion within 120 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted");
        }
        return result;
    }

    /** Callbacks received so far (exactly one once done). */
    int calls() {
        return calls.get();
    }

    Object attachment() {
        return attachment;
    }

    Thread thread() {
        return thread;
    }
}
