package dev.nvmf.target.nvme;

/**
 * The Asymmetric Namespace Access log page (LID 0Ch; NVMe Base 2.0, 5.16.1.13, figures "Asymmetric Namespace Access
 * Log Page" and "ANA Group Descriptor format") and the ANA limits this target reports. Byte offsets.
 *
 * <p>The page is a 16-byte header (change count, number of group descriptors) followed by one descriptor per ANA
 * group: 32 bytes (group id, number of NSIDs, change count, state) and then that many NSIDs in ascending order,
 * 4 bytes each. With LSP bit 0 (RGO, Return Groups Only) every descriptor has no NSIDs.
 */
public final class AnaLog {
    public static final int HEADER_CHANGE_COUNT = 0;
    public static final int HEADER_GROUP_DESCRIPTORS = 8;
    public static final int HEADER_SIZE = 16;

    public static final int DESC_GROUP_ID = 0;
    public static final int DESC_NSID_COUNT = 4;
    public static final int DESC_CHANGE_COUNT = 8;
    /** Bits 3:0: the group's {@link AnaState#code()} on the controller that returns the page. */
    public static final int DESC_STATE = 16;
    public static final int DESC_SIZE = 32;
    public static final int NSID_SIZE = 4;

    /** LSP bit 0: Return Groups Only (no NSIDs in the descriptors). */
    public static final int LSP_RGO = 1;

    /**
     * ANA group ids 1 to 128: ANAGRPMAX and NANAGRPID, as the kernel target (nvmet.h, {@code NVMET_MAX_ANAGRPS});
     * group 1 is the default group every namespace is in unless configured otherwise
     * ({@code NVMET_DEFAULT_ANA_GRPID}).
     */
    public static final int MAX_GROUP_ID = 128;
    public static final int DEFAULT_GROUP_ID = 1;

    /**
     * ANATT: seconds a transition through the change state may take before the host gives up on the path and resets
     * the controller (the Linux host waits twice this: kernel host multipath.c, {@code nvme_read_ana_log}). 10 s, as
     * the kernel target reports (admin-cmd.c, {@code nvmet_execute_identify_ctrl}).
     */
    public static final int TRANSITION_TIME_SECONDS = 10;

    /**
     * ANACAP bits 4:0: the controller reports optimized, non-optimized, inaccessible, persistent loss and change
     * (as the kernel target). Bit 6 (group ids do not change while attached) stays 0: a reload may move a namespace
     * to another group.
     */
    public static final int CAPABILITIES = 0x1F;

    /** The largest page: header, every group's descriptor and every NSID of a subsystem in one of them. */
    public static int maxSize(int maxNamespaces) {
        return HEADER_SIZE + MAX_GROUP_ID * DESC_SIZE + maxNamespaces * NSID_SIZE;
    }

    private AnaLog() {
    }
}
