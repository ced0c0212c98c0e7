package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CopiedCmEvent;
import dev.nvmf.verbs.ConnectionParameters;

/** A CM event; polling it counts against its id until acknowledged (rdma_destroy_id waits for acks). */
final class SoftCmEvent extends CopiedCmEvent {
    final SoftCmId id;
    boolean polled;
    private boolean acked;

    SoftCmEvent(CmEventType type, int status, SoftCmId id, SoftCmId listenId, ConnectionParameters parameters) {
        super(type, status, id, listenId, parameters);
        this.id = id;
    }

    @Override
    public void ack() {
        SoftFabric f = id.fabric;
        f.lock.lock();
        try {
            if (acked) return;
            acked = true;
            if (polled) id.unacked--;
            f.signalAll();
        } finally {
            f.lock.unlock();
        }
    }

    @Override
    public String toString() { return type() + (status() != 0 ? "(" + status() + ")" : "") + " on " + id; }
}
