package dev.nvmf.target.nvme;

/**
 * Set Features (09h) / Get Features (0Ah) (NVMe Base 2.0, 5.21 and 5.15). CDW10: FID bits 7:0; Set: SV bit 31;
 * Get: SEL bits 10:8 (0 current, 1 default, 2 saved, 3 supported capabilities).
 */
public final class Features {
    public static final int FID_ARBITRATION = 0x01;
    public static final int FID_POWER_MANAGEMENT = 0x02;
    public static final int FID_TEMPERATURE_THRESHOLD = 0x04;
    public static final int FID_ERROR_RECOVERY = 0x05;
    public static final int FID_VOLATILE_WRITE_CACHE = 0x06;
    public static final int FID_NUMBER_OF_QUEUES = 0x07;
    public static final int FID_INTERRUPT_COALESCING = 0x08;
    public static final int FID_WRITE_ATOMICITY = 0x0A;
    public static final int FID_ASYNC_EVENT_CONFIGURATION = 0x0B;
    public static final int FID_KEEP_ALIVE_TIMER = 0x0F;
    public static final int FID_HOST_BEHAVIOR = 0x16;
    public static final int FID_HOST_IDENTIFIER = 0x81;

    public static final int SEL_CURRENT = 0;
    public static final int SEL_DEFAULT = 1;
    public static final int SEL_SAVED = 2;
    public static final int SEL_SUPPORTED_CAPABILITIES = 3;

    /** Supported capabilities (SEL 3) bits: 0 saveable, 1 namespace specific, 2 changeable. */
    public static final int CAPABILITY_CHANGEABLE = 1 << 2;

    /** Host Identifier CDW11 bit 0: EXHID, 128-bit identifier (the only size on fabrics). */
    public static final int HOST_ID_EXHID = 1;
    public static final int HOST_ID_SIZE = 16;

    /** Arbitration CDW11: AB bits 2:0, LPW 15:8, MPW 23:16, HPW 31:24. */
    public static final int ARBITRATION_FIELDS = 0xFFFF_FF07;
    /** Power Management CDW11: PS bits 4:0 (the power state), WH bits 7:5 (workload hint). */
    public static final int POWER_STATE_MASK = 0x1F;
    public static final int POWER_MANAGEMENT_FIELDS = 0xFF;
    /** Temperature Threshold CDW11: TMPTH bits 15:0 (Kelvin), TMPSEL bits 19:16, THSEL bits 21:20. */
    public static final int TMPTH_MASK = 0xFFFF;
    public static final int TMPSEL_SHIFT = 16;
    public static final int TMPSEL_MASK = 0xF;
    public static final int THSEL_SHIFT = 20;
    public static final int THSEL_MASK = 0x3;
    /** TMPSEL 0: the composite temperature; Fh: every sensor (Set Features only). */
    public static final int TMPSEL_COMPOSITE = 0;
    public static final int TMPSEL_ALL = 0xF;
    public static final int THSEL_OVER = 0;
    public static final int THSEL_UNDER = 1;

    public static int fid(int cdw10) { return cdw10 & 0xFF; }

    public static boolean save(int cdw10) { return (cdw10 & (1 << 31)) != 0; }

    public static int select(int cdw10) { return (cdw10 >>> 8) & 0x7; }

    private Features() {
    }
}
