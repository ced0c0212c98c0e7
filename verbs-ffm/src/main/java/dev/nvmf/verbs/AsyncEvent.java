package dev.nvmf.verbs;

/**
 * An affiliated or unaffiliated asynchronous event (enum ibv_event_type), read from a device context
 * ({@link Device#pollAsyncEvent}). What it is about depends on its {@link Type#affiliation()} (ibv_get_async_event(3)):
 * a QP ({@link #qpNum()}), a CQ ({@link #cq()}), a port ({@link #portNum()}) or the whole device. QP numbers are
 * unique per device only: key QP events by the device they were read from and the number.
 *
 * @param type    the event type
 * @param qpNum   the QP number for QP events, else -1
 * @param portNum the port number (from 1) for port events, else -1
 * @param cq      the completion queue for CQ_ERR, else null
 */
public record AsyncEvent(Type type, int qpNum, int portNum, CompletionQueue cq) {
    /** What an event type is about. */
    public enum Affiliation { QP, CQ, SRQ, WQ, PORT, DEVICE }

    public enum Type {
        CQ_ERR(0, Affiliation.CQ), QP_FATAL(1, Affiliation.QP), QP_REQ_ERR(2, Affiliation.QP),
        QP_ACCESS_ERR(3, Affiliation.QP), COMM_EST(4, Affiliation.QP), SQ_DRAINED(5, Affiliation.QP),
        PATH_MIG(6, Affiliation.QP), PATH_MIG_ERR(7, Affiliation.QP), DEVICE_FATAL(8, Affiliation.DEVICE),
        PORT_ACTIVE(9, Affiliation.PORT), PORT_ERR(10, Affiliation.PORT), LID_CHANGE(11, Affiliation.PORT),
        PKEY_CHANGE(12, Affiliation.PORT), SM_CHANGE(13, Affiliation.PORT), SRQ_ERR(14, Affiliation.SRQ),
        SRQ_LIMIT_REACHED(15, Affiliation.SRQ), QP_LAST_WQE_REACHED(16, Affiliation.QP),
        CLIENT_REREGISTER(17, Affiliation.PORT), GID_CHANGE(18, Affiliation.PORT), WQ_FATAL(19, Affiliation.WQ),
        UNKNOWN(-1, Affiliation.DEVICE);

        public final int value;
        private final Affiliation affiliation;

        Type(int value, Affiliation affiliation) {
            this.value = value;
            this.affiliation = affiliation;
        }

        /** The object the event is about: which of qpNum, cq, portNum is set. */
        public Affiliation affiliation() { return affiliation; }

        public static Type of(int value) {
            for (Type t : values()) {
                if (t.value == value) return t;
            }
            return UNKNOWN;
        }
    }

    /** An event about a QP ({@code portNum} -1, no CQ). */
    public AsyncEvent(Type type, int qpNum) {
        this(type, qpNum, -1, null);
    }

    /** An event about a port: PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, CLIENT_REREGISTER, GID_CHANGE. */
    public static AsyncEvent ofPort(Type type, int portNum) {
        return new AsyncEvent(type, -1, portNum, null);
    }

    /** CQ_ERR on {@code cq}. */
    public static AsyncEvent ofCompletionQueue(Type type, CompletionQueue cq) {
        return new AsyncEvent(type, -1, -1, cq);
    }

    /** An event about the whole device (DEVICE_FATAL): every resource on it is unusable. */
    public static AsyncEvent ofDevice(Type type) {
        return new AsyncEvent(type, -1, -1, null);
    }
}
