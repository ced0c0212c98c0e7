package dev.nvmf.verbs;

/**
 * A CM event ({@code struct rdma_cm_event}), with its data copied out of native memory.
 *
 * <p>For CONNECT_REQUEST, {@link #id()} is the new CM id of the incoming connection and {@link #listenId()} the
 * listener it arrived on; for every other event {@code id()} is the id the event is about.
 */
public interface CmEvent {
    CmEventType type();

    /** The event status: 0, a negative errno, or for REJECTED the reject reason the CM reports. */
    int status();

    CmId id();

    /** The listening id for CONNECT_REQUEST, else null. */
    CmId listenId();

    /** Connection parameters carried by CONNECT_REQUEST, CONNECT_RESPONSE, ESTABLISHED and REJECTED. */
    ConnectionParameters parameters();

    /** Acknowledges the event (rdma_ack_cm_event). Idempotent. */
    void ack();
}
