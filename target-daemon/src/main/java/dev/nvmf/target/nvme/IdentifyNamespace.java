package dev.nvmf.target.nvme;

/**
 * Identify Namespace data structures: the NVM command set Identify Namespace (CNS 00h, NVM Command Set 1.0
 * figure 97), the I/O Command Set Independent Identify Namespace (CNS 08h, NVMe Base 2.0 figure 280), and
 * Namespace Identification Descriptors (CNS 03h, figure 278). 4096 bytes each.
 */
public final class IdentifyNamespace {
    public static final int SIZE = 4096;

    public static final int NSZE = 0;
    public static final int NCAP = 8;
    public static final int NUSE = 16;
    public static final int NSFEAT = 24;
    public static final int NLBAF = 25;
    public static final int FLBAS = 26;
    public static final int MC = 27;
    public static final int DPC = 28;
    public static final int DPS = 29;
    public static final int NMIC = 30;
    public static final int RESCAP = 31;
    public static final int FPI = 32;
    public static final int DLFEAT = 33;
    public static final int NAWUN = 34;
    public static final int NAWUPF = 36;
    public static final int NACWU = 38;
    public static final int NOIOB = 46;
    public static final int NPWG = 64;
    public static final int NPWA = 66;
    public static final int NPDG = 68;
    public static final int NPDA = 70;
    public static final int NOWS = 72;
    public static final int ANAGRPID = 92;
    public static final int NSATTR = 99;
    public static final int NVMSETID = 100;
    public static final int ENDGID = 102;
    public static final int NGUID = 104;
    public static final int EUI64 = 120;
    /** LBA Format 0: MS bits 15:0, LBADS (log2 of the block size) bits 23:16, RP bits 25:24. */
    public static final int LBAF0 = 128;
    public static final int LBAF_LBADS_SHIFT = 16;

    /** NSFEAT bit 0 (THINP): thin provisioning (NCAP may be less than NSZE). */
    public static final int NSFEAT_THIN_PROVISIONING = 1;
    /** NSFEAT bit 1 (NSABP): NAWUN, NAWUPF and NACWU are valid for this namespace. */
    public static final int NSFEAT_ATOMICS = 1 << 1;
    /**
     * NSFEAT bit 2 (DAE): reads of deallocated or unwritten blocks may fail with "Deallocated or Unwritten Logical
     * Block". Never set here: a deallocated block reads back as DLFEAT says, without an error.
     */
    public static final int NSFEAT_DEALLOCATED_ERROR = 1 << 2;
    /** NSFEAT bit 4 (OPTPERF): NPWG, NPWA, NPDG, NPDA and NOWS are valid for this namespace. */
    public static final int NSFEAT_OPTIMAL_PERFORMANCE = 1 << 4;
    /** NMIC bit 0: the namespace may be attached to two or more controllers. */
    public static final int NMIC_SHARED = 1;
    /** NSATTR bit 0: the namespace is write protected. */
    public static final int NSATTR_WRITE_PROTECTED = 1;
    /**
     * DLFEAT bits 2:0: what a read of a deallocated block returns: 000b not reported (maybe the old data), 001b
     * zeroes; bit 3 (WZDS): Write Zeroes may deallocate when the host sets DEAC.
     */
    public static final int DLFEAT_READ_NOT_REPORTED = 0;
    public static final int DLFEAT_READ_ZEROES = 1;
    public static final int DLFEAT_WRITE_ZEROES_DEALLOCATE = 1 << 3;

    // I/O Command Set Independent Identify Namespace (CNS 08h)
    public static final int INDEP_NSFEAT = 0;
    public static final int INDEP_NMIC = 1;
    public static final int INDEP_RESCAP = 2;
    public static final int INDEP_FPI = 3;
    public static final int INDEP_ANAGRPID = 4;
    public static final int INDEP_NSATTR = 8;
    public static final int INDEP_NVMSETID = 10;
    public static final int INDEP_ENDGID = 12;
    public static final int INDEP_NSTAT = 14;
    /** NSTAT bit 0: namespace ready. */
    public static final int NSTAT_READY = 1;

    // Namespace Identification Descriptor (CNS 03h): NIDT byte 0, NIDL byte 1, 2 reserved, then NIDL bytes
    public static final int DESC_NIDT = 0;
    public static final int DESC_NIDL = 1;
    public static final int DESC_HEADER_SIZE = 4;
    public static final int NIDT_EUI64 = 1;
    public static final int NIDT_NGUID = 2;
    public static final int NIDT_UUID = 3;
    public static final int NIDT_CSI = 4;
    public static final int NIDL_EUI64 = 8;
    public static final int NIDL_NGUID = 16;
    public static final int NIDL_UUID = 16;
    public static final int NIDL_CSI = 1;

    /** Command Set Identifier of the NVM command set. */
    public static final int CSI_NVM = 0;

    private IdentifyNamespace() {
    }
}
