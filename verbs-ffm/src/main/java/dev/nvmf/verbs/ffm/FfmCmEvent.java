package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CopiedCmEvent;
import dev.nvmf.verbs.ConnectionParameters;

import java.lang.foreign.MemorySegment;

/** A copied rdma_cm_event; {@link #ack()} releases the native event (rdma_ack_cm_event) exactly once. */
final class FfmCmEvent extends CopiedCmEvent {
    private final Rdma rdma;
    private final MemorySegment event;
    private boolean acked;

    FfmCmEvent(Rdma rdma, MemorySegment event, CmEventType type, int status, FfmCmId id, FfmCmId listenId,
               ConnectionParameters parameters) {
        super(type, status, id, listenId, parameters);
        this.rdma = rdma;
        this.event = event;
    }

    @Override
    public synchronized void ack() {
        if (acked) return;
        acked = true;
        rdma.check("rdma_ack_cm_event", event);
    }
}
