package dev.nvmf.verbs;

/**
 * An affiliated or unaffiliated asynchronous event (enum ibv_event_type).
 *
 * @param type      the event type
 * @param qpNum     the QP number for QP events, else -1
 */
public record AsyncEvent(Type type, int qpNum) {
    public enum Type {
        CQ_ERR(0), QP_FATAL(1), QP_REQ_ERR(2), QP_ACCESS_ERR(3), COMM_EST(4), SQ_DRAINED(5), PATH_MIG(6),
        PATH_MIG_ERR(7), DEVICE_FATAL(8), PORT_ACTIVE(9), PORT_ERR(10), LID_CHANGE(11), PKEY_CHANGE(12),
        SM_CHANGE(13), SRQ_ERR(14), SRQ_LIMIT_REACHED(15), QP_LAST_WQE_REACHED(16), CLIENT_REREGISTER(17),
        GID_CHANGE(18), WQ_FATAL(19), UNKNOWN(-1);

        public final int value;

        Type(int value) { this.value = value; }

        public static Type of(int value) {
            for (Type t : values()) {
                if (t.value == value) return t;
            }
            return UNKNOWN;
        }
    }
}
