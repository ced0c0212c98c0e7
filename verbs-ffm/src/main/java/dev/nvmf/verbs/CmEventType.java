package dev.nvmf.verbs;

/** enum rdma_cm_event_type, with rdma-core's numeric values. */
public enum CmEventType {
    ADDR_RESOLVED(0), ADDR_ERROR(1), ROUTE_RESOLVED(2), ROUTE_ERROR(3), CONNECT_REQUEST(4), CONNECT_RESPONSE(5),
    CONNECT_ERROR(6), UNREACHABLE(7), REJECTED(8), ESTABLISHED(9), DISCONNECTED(10), DEVICE_REMOVAL(11),
    MULTICAST_JOIN(12), MULTICAST_ERROR(13), ADDR_CHANGE(14), TIMEWAIT_EXIT(15), UNKNOWN(-1);

    public final int value;

    CmEventType(int value) { this.value = value; }

    public static CmEventType of(int value) {
        for (CmEventType t : values()) {
            if (t.value == value) return t;
        }
        return UNKNOWN;
    }
}
