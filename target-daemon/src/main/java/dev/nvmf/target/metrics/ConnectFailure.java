package dev.nvmf.target.metrics;

import java.util.Locale;

/** Why a Fabrics Connect command failed (NVMe over Fabrics 1.1 section 3.3, Connect response). */
public enum ConnectFailure {
    /** The subsystem NQN names no configured subsystem (Connect Invalid Parameters, SUBNQN). */
    UNKNOWN_SUBSYSTEM,
    /** The host is not allowed on the subsystem (Connect Invalid Host). */
    HOST_NOT_ALLOWED,
    /** An I/O queue Connect names a controller id that does not exist or belongs to another host. */
    INVALID_CONTROLLER,
    /** Queue id or size out of range, or the queue already exists. */
    INVALID_QUEUE,
    /** The controller is not ready (CC.EN=0) or is shutting down (Connect Controller Busy). */
    CONTROLLER_BUSY,
    /** Malformed Connect data. */
    INVALID_PARAMETERS,
    OTHER;

    /** The {@code reason} label value. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
