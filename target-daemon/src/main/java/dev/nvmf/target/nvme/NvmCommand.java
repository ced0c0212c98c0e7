package dev.nvmf.target.nvme;

/**
 * Fields of NVM command set I/O commands (NVM Command Set 1.0, section 3): Read/Write/Compare: SLBA CDW10-11, NLB
 * (0's based) CDW12 15:0, FUA CDW12 bit 30, LR bit 31; Write Zeroes adds DEAC CDW12 bit 25; Dataset Management:
 * NR (0's based number of ranges) CDW10 7:0, attributes CDW11 (IDR 0, IDW 1, AD 2), ranges of 16 bytes in the data.
 */
public final class NvmCommand {
    public static final int CDW12_FUA = 1 << 30;
    public static final int CDW12_LIMITED_RETRY = 1 << 31;
    public static final int CDW12_DEAC = 1 << 25;

    public static final int DSM_ATTRIBUTE_DEALLOCATE = 1 << 2;
    public static final int DSM_RANGE_SIZE = 16;
    public static final int DSM_RANGE_CONTEXT_ATTRIBUTES = 0;
    public static final int DSM_RANGE_LENGTH = 4;
    public static final int DSM_RANGE_SLBA = 8;
    public static final int DSM_MAX_RANGES = 256;

    private NvmCommand() {
    }
}
