package dev.nvmf.target.nvme;

/**
 * Get Log Page (admin 02h) fields and the log pages' layouts (NVMe Base 2.0 5.16; discovery: NVMe-oF 1.1, 5.3).
 * CDW10: LID 7:0, LSP 14:8, RAE bit 15, NUMDL 31:16; CDW11: NUMDU 15:0, LSI 31:16; CDW12/13: LPOL/LPOU (byte
 * offset, dword aligned); CDW14: UUID index 6:0, CSI 31:24. The transfer is (NUMDU:NUMDL + 1) dwords.
 */
public final class LogPages {
    public static final int LID_SUPPORTED_LOG_PAGES = 0x00;
    public static final int LID_ERROR_INFORMATION = 0x01;
    public static final int LID_SMART_HEALTH = 0x02;
    public static final int LID_FIRMWARE_SLOT = 0x03;
    public static final int LID_CHANGED_NAMESPACE_LIST = 0x04;
    public static final int LID_COMMANDS_SUPPORTED_EFFECTS = 0x05;
    /** Asymmetric Namespace Access ({@link AnaLog}). */
    public static final int LID_ASYMMETRIC_NAMESPACE_ACCESS = 0x0C;
    public static final int LID_DISCOVERY = 0x70;

    public static int lid(int cdw10) { return cdw10 & 0xFF; }

    public static int lsp(int cdw10) { return (cdw10 >>> 8) & 0x7F; }

    /** Discovery log LSP bit 0 (PLEO, Port Local Entries Only): only the entries of the port the host came in on. */
    public static final int DISCOVERY_LSP_PORT_LOCAL = 1;

    /** Retain Asynchronous Event: when 0, reading the page clears the event that pointed at it. */
    public static boolean rae(int cdw10) { return (cdw10 & (1 << 15)) != 0; }

    /** Number of dwords to transfer (1-based), from NUMDL and NUMDU. */
    public static long numberOfDwords(int cdw10, int cdw11) {
        return (((long) (cdw11 & 0xFFFF) << 16) | (cdw10 >>> 16)) + 1;
    }

    /** Log page offset in bytes (LPOU:LPOL). */
    public static long offset(int cdw12, int cdw13) {
        return ((long) cdw13 << 32) | (cdw12 & 0xFFFF_FFFFL);
    }

    // Supported Log Pages (1024 bytes): one dword per LID; bit 0 LSUPP (supported), bit 1 IOS (index offset)
    public static final int SUPPORTED_LOG_PAGES_SIZE = 1024;
    public static final int LIDS_SUPPORTED = 1;

    // Error Information entry (64 bytes each; the page is ELPE + 1 entries)
    public static final int ERROR_ENTRY_SIZE = 64;
    public static final int ERROR_COUNT = 0;
    public static final int ERROR_SQID = 8;
    public static final int ERROR_CID = 10;
    /** The CQE status field, phase bit in bit 0. */
    public static final int ERROR_STATUS = 12;
    public static final int ERROR_PARAMETER_LOCATION = 14;
    public static final int ERROR_LBA = 16;
    public static final int ERROR_NSID = 24;
    public static final int ERROR_TRTYPE = 29;
    public static final int ERROR_COMMAND_SPECIFIC = 32;

    // SMART / Health Information (512 bytes)
    public static final int SMART_SIZE = 512;
    public static final int SMART_CRITICAL_WARNING = 0;
    /** Critical warning bit 1: a temperature is at or above an over threshold, or at or below an under threshold. */
    public static final int SMART_WARNING_TEMPERATURE = 1 << 1;
    public static final int SMART_COMPOSITE_TEMPERATURE = 1;
    public static final int SMART_AVAILABLE_SPARE = 3;
    public static final int SMART_AVAILABLE_SPARE_THRESHOLD = 4;
    public static final int SMART_PERCENTAGE_USED = 5;
    /** 128-bit counters from here: data units are thousands of 512-byte units, rounded up. */
    public static final int SMART_DATA_UNITS_READ = 32;
    public static final int SMART_DATA_UNITS_WRITTEN = 48;
    public static final int SMART_HOST_READ_COMMANDS = 64;
    public static final int SMART_HOST_WRITE_COMMANDS = 80;
    public static final int SMART_CONTROLLER_BUSY_TIME = 96;
    public static final int SMART_POWER_CYCLES = 112;
    public static final int SMART_POWER_ON_HOURS = 128;
    public static final int SMART_UNSAFE_SHUTDOWNS = 144;
    public static final int SMART_MEDIA_ERRORS = 160;
    public static final int SMART_ERROR_LOG_ENTRIES = 176;

    // Firmware Slot Information (512 bytes)
    public static final int FIRMWARE_SLOT_SIZE = 512;
    /** Active Firmware Info: bits 2:0 the active slot. */
    public static final int FIRMWARE_AFI = 0;
    public static final int FIRMWARE_FRS1 = 8;

    // Changed Namespace List (4096 bytes: up to 1024 NSIDs; 0xFFFFFFFF first if more changed)
    public static final int CHANGED_NAMESPACE_LIST_SIZE = 4096;
    public static final int CHANGED_NAMESPACE_LIST_MAX = 1024;
    public static final int CHANGED_NAMESPACE_OVERFLOW = 0xFFFF_FFFF;

    // Commands Supported and Effects (4096 bytes): ACS[256] at 0, IOCS[256] at 1024, u32 each
    public static final int EFFECTS_SIZE = 4096;
    public static final int EFFECTS_ADMIN = 0;
    public static final int EFFECTS_IO = 1024;
    public static final int EFFECT_CSUPP = 1;
    public static final int EFFECT_LBCC = 1 << 1;
    public static final int EFFECT_NCC = 1 << 2;
    public static final int EFFECT_NIC = 1 << 3;
    public static final int EFFECT_CCC = 1 << 4;

    private LogPages() {
    }
}
