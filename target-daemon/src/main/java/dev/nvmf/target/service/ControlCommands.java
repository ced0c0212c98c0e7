package dev.nvmf.target.service;

import java.util.List;

import dev.nvmf.target.nvme.AnaLog;
import dev.nvmf.target.nvme.AnaState;

/**
 * The requests the control socket takes, written and read here for both ends: {@code ana set PORT GROUP STATE}
 * (planned failover: a group's state on one port, now) and {@code ana show} (every port's state of every group in
 * use). {@link #execute} runs on the service's control thread.
 */
public final class ControlCommands {
    private ControlCommands() {}

    /** The request line of {@code nvmf-target ana set}. */
    public static String anaSet(int portId, int groupId, AnaState state) {
        return "ana set " + portId + " " + groupId + " " + state.configName();
    }

    /** The request line of {@code nvmf-target ana show}. */
    public static final String ANA_SHOW = "ana show";

    /**
     * Runs one request against the runtime; the output lines.
     *
     * @throws IllegalArgumentException for a request it does not know, or arguments the runtime refuses
     */
    static List<String> execute(TargetRuntime runtime, String line) {
        String[] w = line.trim().split("\\s+");
        if (w.length == 2 && w[0].equals("ana") && w[1].equals("show")) {
            return runtime.anaStates();
        }
        if (w.length == 5 && w[0].equals("ana") && w[1].equals("set")) {
            int port = number(w[2], "PORT");
            int group = number(w[3], "GROUP");
            if (group < 1 || group > AnaLog.MAX_GROUP_ID) {
                throw new IllegalArgumentException("GROUP must be 1.." + AnaLog.MAX_GROUP_ID + ", found " + group);
            }
            AnaState state = AnaState.ofName(w[4]);
            if (state == null) {
                throw new IllegalArgumentException("'" + w[4] + "' is not an ANA state; expected one of "
                        + AnaState.names());
            }
            return List.of(runtime.setAnaState(port, group, state));
        }
        throw new IllegalArgumentException("unknown request '" + truncate(line) + "'; expected 'ana set PORT GROUP "
                + "STATE' or 'ana show'");
    }

    private static int number(String text, String what) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " must be a number, found '" + truncate(text) + "'");
        }
    }

    /** At most 80 characters of what a client sent, control characters replaced: safe to log and echo. */
    private static String truncate(String s) {
        String t = s.length() > 80 ? s.substring(0, 80) + "..." : s;
        return t.replaceAll("\\p{Cntrl}", "?");
    }
}
