package dev.nvmf.target.service;

/**
 * The context prefix of an event line: {@code subsys=NQN host=NQN qid=N: message}, with absent parts left out,
 * so that journalctl -g can follow one host or one subsystem. Control path only (it builds a string).
 */
public final class LogContext {
    private LogContext() {}

    public static String format(String subsystemNqn, String hostNqn, int qid, String message) {
        StringBuilder sb = new StringBuilder(96);
        if (subsystemNqn != null) {
            sb.append("subsys=").append(subsystemNqn);
        }
        if (hostNqn != null) {
            sb.append(sb.isEmpty() ? "" : " ").append("host=").append(hostNqn);
        }
        if (qid >= 0) {
            sb.append(sb.isEmpty() ? "" : " ").append("qid=").append(qid);
        }
        return sb.isEmpty() ? message : sb.append(": ").append(message).toString();
    }

    public static String format(String subsystemNqn, String hostNqn, String message) {
        return format(subsystemNqn, hostNqn, -1, message);
    }
}
