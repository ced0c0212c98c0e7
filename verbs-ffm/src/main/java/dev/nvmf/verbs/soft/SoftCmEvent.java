package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.ConnectionParameters;

/** A CM event; polling it counts against its id until acknowledged (rdma_destroy_id waits for acks). */
final class SoftCmEvent implements CmEvent {
    private final CmEventType type;
    private final int status;
    final SoftCmId id;
    private final SoftCmId listenId;
    private final ConnectionParameters parameters;
    boolean polled;
    private boolean acked;

    SoftCmEvent(CmEventType type, int status, SoftCmId id, SoftCmId listenId, ConnectionParameters parameters) {
        this.type = type;
        this.status = status;
        this.id = id;
        this.listenId = listenId;
        this.parameters = parameters;
    }

    @Override
    public CmEventType type() { return type; }

    @Override
    public int status() { return status; }

    @Override
    public CmId id() { return id; }

    @Override
    public CmId listenId() { return listenId; }

    @Override
    public ConnectionParameters parameters() { return parameters; }

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
    public String toString() { return type + (status != 0 ? "(" + status + ")" : "") + " on " + id; }
}
