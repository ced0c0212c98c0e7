package dev.nvmf.verbs;

/** enum ibv_qp_state. */
public enum QpState {
    RESET(0), INIT(1), RTR(2), RTS(3), SQD(4), SQE(5), ERR(6), UNKNOWN(7);

    public final int value;

    QpState(int value) { this.value = value; }

    public static QpState of(int value) {
        for (QpState s : values()) {
            if (s.value == value) return s;
        }
        return UNKNOWN;
    }
}
