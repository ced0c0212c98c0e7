package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmId;

import java.util.ArrayDeque;

/** A CM event channel: a queue of events; pollEvent blocks on the fabric condition and honours wakeup(). */
final class SoftCmEventChannel implements CmEventChannel {
    final SoftFabric fabric;
    private final ArrayDeque<SoftCmEvent> queue = new ArrayDeque<>();
    private boolean wakeupPending;
    private boolean closed;
    private final Readiness readiness;
    private final java.util.function.BooleanSupplier ready = () -> wakeupPending || !queue.isEmpty();

    SoftCmEventChannel(SoftFabric fabric) {
        this.fabric = fabric;
        this.readiness = new Readiness(fabric, "soft CM event channel");
    }

    @Override
    public CmId createId(Object context) {
        fabric.lock.lock();
        try {
            fabric.faults.checkControl("rdma_create_id");
            SoftCmId id = new SoftCmId(this, context);
            fabric.resources.add(SoftResources.Kind.CM_ID, id, "cm_id " + id.serial);
            return id;
        } finally {
            fabric.lock.unlock();
        }
    }

    void enqueue(SoftCmEvent e) {
        if (closed) return;
        queue.add(e);
        readiness.update(true);
        fabric.signalAll();
    }

    /** rdma_destroy_id discards the events of the id that were not retrieved yet. */
    void discard(SoftCmId id) {
        queue.removeIf(e -> e.id == id);
        readiness.update(!queue.isEmpty());
    }

    @Override
    public CmEvent pollEvent(long timeoutMillis) {
        fabric.lock.lock();
        try {
            fabric.await(ready, timeoutMillis);
            if (wakeupPending) {
                wakeupPending = false;
                return null;
            }
            SoftCmEvent e = queue.poll();
            readiness.update(!queue.isEmpty());
            if (e != null) {
                e.polled = true;
                e.id.unacked++;
            }
            return e;
        } finally {
            fabric.lock.unlock();
        }
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
    public int fd() { return -1; }

    @Override
    public int readinessFd() { return readiness.readinessFd(() -> !queue.isEmpty()); }

    @Override
    public void close() {
        fabric.lock.lock();
        try {
            if (closed) return;
            closed = true;
            queue.clear();
            readiness.close();
            fabric.resources.remove(SoftResources.Kind.EVENT_CHANNEL, this);
        } finally {
            fabric.lock.unlock();
        }
    }
}
