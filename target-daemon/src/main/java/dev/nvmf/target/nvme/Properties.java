package dev.nvmf.target.nvme;

/**
 * Controller properties reached with Property Get/Set on fabrics (NVMe Base 2.0, 3.1.3 "Controller Properties"),
 * with their field layouts.
 */
public final class Properties {
    public static final int CAP = 0x00;
    public static final int VS = 0x08;
    public static final int INTMS = 0x0C;
    public static final int INTMC = 0x10;
    public static final int CC = 0x14;
    public static final int CSTS = 0x1C;
    public static final int NSSR = 0x20;
    public static final int AQA = 0x24;

    // CAP
    public static final int CAP_MQES_MASK = 0xFFFF;
    public static final long CAP_CQR = 1L << 16;
    public static final int CAP_TO_SHIFT = 24;
    public static final int CAP_CSS_SHIFT = 37;
    public static final long CAP_CSS_NVM = 1L << 37;
    public static final int CAP_MPSMIN_SHIFT = 48;
    public static final int CAP_MPSMAX_SHIFT = 52;

    // CC
    public static final int CC_EN = 1;
    public static final int CC_CSS_SHIFT = 4;
    public static final int CC_CSS_MASK = 0x7;
    public static final int CC_MPS_SHIFT = 7;
    public static final int CC_MPS_MASK = 0xF;
    public static final int CC_AMS_SHIFT = 11;
    public static final int CC_AMS_MASK = 0x7;
    public static final int CC_SHN_SHIFT = 14;
    public static final int CC_SHN_MASK = 0x3;
    public static final int CC_IOSQES_SHIFT = 16;
    public static final int CC_IOCQES_SHIFT = 20;
    public static final int CC_QES_MASK = 0xF;

    // CSTS
    public static final int CSTS_RDY = 1;
    public static final int CSTS_CFS = 1 << 1;
    public static final int CSTS_SHST_SHIFT = 2;
    public static final int CSTS_SHST_MASK = 0x3 << 2;
    /** Shutdown processing occurring (SHST = 01b). */
    public static final int CSTS_SHST_PROCESSING = 1 << 2;
    /** Shutdown processing complete (SHST = 10b). */
    public static final int CSTS_SHST_COMPLETE = 2 << 2;
    public static final int CSTS_NSSRO = 1 << 4;
    public static final int CSTS_PP = 1 << 5;

    /** VS encoding: major 31:16, minor 15:8, tertiary 7:0. */
    public static int version(int major, int minor, int tertiary) {
        return (major << 16) | (minor << 8) | tertiary;
    }

    public static final int VERSION_2_0 = version(2, 0, 0);

    private Properties() {
    }
}
