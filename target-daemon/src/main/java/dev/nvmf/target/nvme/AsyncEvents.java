package dev.nvmf.target.nvme;

/**
 * Asynchronous Event Request (admin 0Ch) completion DW0 (NVMe Base 2.0 figure 147): event type bits 2:0, event
 * information bits 15:8, log page identifier bits 23:16; and the Asynchronous Event Configuration feature bits.
 */
public final class AsyncEvents {
    public static final int TYPE_ERROR = 0;
    public static final int TYPE_SMART = 1;
    public static final int TYPE_NOTICE = 2;

    public static final int NOTICE_NAMESPACE_ATTRIBUTE_CHANGED = 0x00;
    public static final int NOTICE_FIRMWARE_ACTIVATION = 0x01;
    /** Notice 03h: an ANA group's state changed on this controller (read the ANA log page). */
    public static final int NOTICE_ANA_CHANGE = 0x03;
    public static final int NOTICE_DISCOVERY_LOG_CHANGE = 0xF0;

    /** SMART / Health event information 01h: a temperature crossed a threshold (Temperature Threshold feature). */
    public static final int SMART_TEMPERATURE_THRESHOLD = 0x01;

    /**
     * AEC (feature 0Bh) bits 4:0: SMART / Health critical warnings (spare, temperature, reliability, read only,
     * volatile memory backup) that raise an event.
     */
    public static final int CONFIG_SMART_CRITICAL_WARNINGS = 0x1F;
    /** AEC bit 1: the temperature critical warning. */
    public static final int CONFIG_SMART_TEMPERATURE = 1 << 1;
    /** AEC (feature 0Bh) bit 8: send namespace attribute notices. */
    public static final int CONFIG_NAMESPACE_ATTRIBUTE = 1 << 8;
    /** AEC bit 11: send Asymmetric Namespace Access change notices. */
    public static final int CONFIG_ANA_CHANGE = 1 << 11;
    /** AEC bit 31: send discovery log page change notices. */
    public static final int CONFIG_DISCOVERY_LOG_CHANGE = 1 << 31;

    public static int completionDw0(int type, int info, int logPage) {
        return (type & 0x7) | ((info & 0xFF) << 8) | ((logPage & 0xFF) << 16);
    }

    /** DW0 of the namespace attribute changed notice (points at the changed namespace list). */
    public static final int NAMESPACE_CHANGED =
            completionDw0(TYPE_NOTICE, NOTICE_NAMESPACE_ATTRIBUTE_CHANGED, LogPages.LID_CHANGED_NAMESPACE_LIST);
    /** DW0 of the SMART / Health temperature threshold event (points at the SMART log). */
    public static final int SMART_TEMPERATURE =
            completionDw0(TYPE_SMART, SMART_TEMPERATURE_THRESHOLD, LogPages.LID_SMART_HEALTH);
    /** DW0 of the ANA change notice (points at the ANA log page). */
    public static final int ANA_CHANGED =
            completionDw0(TYPE_NOTICE, NOTICE_ANA_CHANGE, LogPages.LID_ASYMMETRIC_NAMESPACE_ACCESS);
    /** DW0 of the discovery log change notice. */
    public static final int DISCOVERY_LOG_CHANGED =
            completionDw0(TYPE_NOTICE, NOTICE_DISCOVERY_LOG_CHANGE, LogPages.LID_DISCOVERY);

    private AsyncEvents() {
    }
}
