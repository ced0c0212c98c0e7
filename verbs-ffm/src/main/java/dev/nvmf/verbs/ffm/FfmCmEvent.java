package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.ConnectionParameters;

import java.lang.foreign.MemorySegment;

/** A copied rdma_cm_event; {@link #ack()} releases the native event (rdma_ack_cm_event) exactly once. */
final class FfmCmEvent implements CmEvent {
    private final Rdma rdma;
    private final MemorySegment event;
    private final CmEventType type;
    private final int status;
    private final FfmCmId id;
    private final FfmCmId listenId;
    private final ConnectionParameters parameters;
    private boolean acked;

    FfmCmEvent(Rdma rdma, MemorySegment event, CmEventType type, int status, FfmCmId id, FfmCmId listenId,
               ConnectionParameters parameters) {
        this.rdma = rdma;
        this.event = event;
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

    /** The event's conn params for CONNECT_REQUEST, CONNECT_RESPONSE, ESTABLISHED and REJECTED; else null. */
    @Override
    public ConnectionParameters parameters() { return parameters; }

    @Override
    public synchronized void ack() {
        if (acked) return;
        acked = true;
        rdma.check("rdma_ack_cm_event", event);
    }

    @Override
    public String toString() {
        return "CmEvent[" + type + ", status=" + status + ", id=" + id + "]";
    }
}
