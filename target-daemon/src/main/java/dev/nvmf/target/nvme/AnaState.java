package dev.nvmf.target.nvme;

import java.util.Locale;

/**
 * An ANA group's Asymmetric Namespace Access state as one controller reports it (NVMe Base 2.0, 8.1.2 "ANA
 * States"; the ANA log page's descriptor byte 16, bits 3:0), with the names the kernel target's configfs uses
 * ({@code ports/N/ana_groups/G/ana_state}: kernel configfs.c, {@code nvmet_ana_state}), which the YAML and the
 * {@code ana set} command take as well.
 *
 * <p>Each state says what a command to a namespace of the group gets on that controller (kernel core.c,
 * {@code nvmet_check_ana_state}): optimized and non-optimized serve I/O; inaccessible, persistent loss and change
 * answer the path related status codes (SCT 3h) without DNR, so that a multipath host retries another path
 * ({@link #ioStatus}).
 */
public enum AnaState {
    /** 01h: the path serves I/O at its best. */
    OPTIMIZED(0x01, "optimized", Status.SUCCESS),
    /** 02h: the path serves I/O, possibly slower (a host prefers an optimized path). */
    NON_OPTIMIZED(0x02, "non-optimized", Status.SUCCESS),
    /** 03h: not served on this path for now (Asymmetric Access Inaccessible, 02h). */
    INACCESSIBLE(0x03, "inaccessible", Status.ANA_INACCESSIBLE),
    /** 04h: never again on this path (Asymmetric Access Persistent Loss, 01h). */
    PERSISTENT_LOSS(0x04, "persistent-loss", Status.ANA_PERSISTENT_LOSS),
    /** 0Fh: moving between states, within ANATT (Asymmetric Access Transition, 03h). */
    CHANGE(0x0F, "change", Status.ANA_TRANSITION);

    private final int code;
    private final String configName;
    private final int ioStatus;

    AnaState(int code, String configName, int ioStatus) {
        this.code = code;
        this.configName = configName;
        this.ioStatus = ioStatus;
    }

    /** The state's value in the ANA log page (bits 3:0 of the descriptor's state byte). */
    public int code() { return code; }

    /** "optimized", "non-optimized", "inaccessible", "persistent-loss" or "change". */
    public String configName() { return configName; }

    /** What an I/O command to a namespace in this state gets: 0, or a path related status without DNR. */
    public int ioStatus() { return ioStatus; }

    /** Whether the namespace's data is reachable through this path now (NUSE is reported, I/O is served). */
    public boolean accessible() { return ioStatus == Status.SUCCESS; }

    /** The state of a configuration name (case-insensitive), or null. */
    public static AnaState ofName(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (AnaState s : values()) {
            if (s.configName.equals(n)) {
                return s;
            }
        }
        return null;
    }

    /** The state of a log page code, or null for a value the specification reserves. */
    public static AnaState ofCode(int code) {
        for (AnaState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        return null;
    }

    /** "optimized, non-optimized, inaccessible, persistent-loss, change", for messages. */
    public static String names() {
        StringBuilder b = new StringBuilder();
        for (AnaState s : values()) {
            b.append(b.isEmpty() ? "" : ", ").append(s.configName);
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return configName;
    }
}
