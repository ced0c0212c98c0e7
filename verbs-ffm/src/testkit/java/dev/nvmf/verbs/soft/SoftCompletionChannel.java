package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.VerbsException;

import java.util.ArrayDeque;

/** A completion channel: armed CQs report here; a waiter blocks on the fabric condition, never spinning. */
final class SoftCompletionChannel implements CompletionChannel {
    final SoftDevice context;
    final SoftFabric fabric;
    private final ArrayDeque<SoftCompletionQueue> events = new ArrayDeque<>();
    private boolean wakeupPending;
    int cqs;
    private boolean closed;
    /** An injected ibv_get_cq_event failure (errno), permanent once set. */
    int failedErrno;
    private SoftCompletionQueue eventQueue;
    private final Readiness readiness;
    private final java.util.function.BooleanSupplier ready = () -> wakeupPending || failedErrno != 0 || !events.isEmpty();

    SoftCompletionChannel(SoftDevice context) {
        this.context = context;
        this.fabric = context.fabric;
        this.readiness = new Readiness(fabric, context.name() + " completion channel");
    }

    private boolean pending() { return failedErrno != 0 || !events.isEmpty(); }

    @Override
    public int fd() { return -1; }

    @Override
    public int readinessFd() { return readiness.readinessFd(this::pending); }

    void notify(SoftCompletionQueue cq) {
        events.add(cq);
        readiness.update(true);
        fabric.signalAll();
    }

    void forget(SoftCompletionQueue cq) {
        events.removeIf(c -> c == cq);
        readiness.update(pending());
    }

    @Override
    public CompletionQueue awaitEvent(long timeoutMillis) {
        int rc = nextEvent(timeoutMillis);
        if (rc < 0) throw new VerbsException("ibv_get_cq_event", -rc, "injected channel failure");
        return rc == EVENT ? eventQueue : null;
    }

    @Override
    public int nextEvent(long timeoutMillis) {
        fabric.lock.lock();
        try {
            fabric.await(ready, timeoutMillis);
            if (failedErrno != 0) return -failedErrno;
            if (wakeupPending) {
                wakeupPending = false;
                return 0;
            }
            SoftCompletionQueue cq = events.poll();
            readiness.update(pending());
            if (cq == null) return 0;
            eventQueue = cq;
            return EVENT;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public CompletionQueue eventQueue() {
        fabric.lock.lock();
        try {
            return eventQueue;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** The channel fails (a fault): every later get-event returns -errno; a waiter wakes to see it. */
    void fail(int errno) {
        failedErrno = errno;
        readiness.update(true);
        fabric.signalAll();
    }

    @Override
    public void wakeup() {
        fabric.lock.lock();
        try {
            wakeupPending = true;
            fabric.signalAll();
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public void close() {
        fabric.lock.lock();
        try {
            if (closed) return;
            if (cqs > 0) throw new VerbsException("ibv_destroy_comp_channel", Errno.EBUSY, "Device or resource busy");
            closed = true;
            readiness.close();
            context.children--;
            fabric.resources.remove(SoftResources.Kind.COMP_CHANNEL, this);
        } finally {
            fabric.lock.unlock();
        }
    }
}
