package dev.nvmf.verbs;

/**
 * The part of a {@link CmEvent} every provider shares: the event's data, copied out when it was read. Providers
 * add only how {@link #ack()} releases the event.
 */
public abstract class CopiedCmEvent implements CmEvent {
    private final CmEventType type;
    private final int status;
    private final CmId id;
    private final CmId listenId;
    private final ConnectionParameters parameters;

    protected CopiedCmEvent(CmEventType type, int status, CmId id, CmId listenId, ConnectionParameters parameters) {
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

    /** The event's connection parameters for CONNECT_REQUEST, CONNECT_RESPONSE, ESTABLISHED and REJECTED; else null. */
    @Override
    public ConnectionParameters parameters() { return parameters; }

    @Override
    public String toString() {
        return "CmEvent[" + type + ", status=" + status + ", id=" + id + "]";
    }
}
