package dev.nvmf.target.nvme;

/**
 * Identify Controller data structure, CNS 01h, 4096 bytes (NVMe Base 2.0 figure 275; fabrics fields from
 * NVMe-oF 1.1, 4.1). Byte offsets.
 */
public final class IdentifyController {
    public static final int SIZE = 4096;

    public static final int VID = 0;
    public static final int SSVID = 2;
    public static final int SN = 4;
    public static final int SN_LENGTH = 20;
    public static final int MN = 24;
    public static final int MN_LENGTH = 40;
    public static final int FR = 64;
    public static final int FR_LENGTH = 8;
    public static final int RAB = 72;
    public static final int IEEE = 73;
    public static final int CMIC = 76;
    public static final int MDTS = 77;
    public static final int CNTLID = 78;
    public static final int VER = 80;
    public static final int RTD3R = 84;
    public static final int RTD3E = 88;
    public static final int OAES = 92;
    public static final int CTRATT = 96;
    public static final int CNTRLTYPE = 111;
    public static final int FGUID = 112;
    public static final int OACS = 256;
    public static final int ACL = 258;
    public static final int AERL = 259;
    public static final int FRMW = 260;
    public static final int LPA = 261;
    public static final int ELPE = 262;
    public static final int NPSS = 263;
    public static final int AVSCC = 264;
    public static final int WCTEMP = 266;
    public static final int CCTEMP = 268;
    public static final int KAS = 320;
    /** ANA Transition Time (seconds), ANA Capabilities, ANA Group Identifier Maximum, Number of ANA Group Ids. */
    public static final int ANATT = 342;
    public static final int ANACAP = 343;
    public static final int ANAGRPMAX = 344;
    public static final int NANAGRPID = 348;
    public static final int SQES = 512;
    public static final int CQES = 513;
    public static final int MAXCMD = 514;
    public static final int NN = 516;
    public static final int ONCS = 520;
    public static final int FUSES = 522;
    public static final int FNA = 524;
    public static final int VWC = 525;
    public static final int AWUN = 526;
    public static final int AWUPF = 528;
    public static final int ACWU = 532;
    public static final int SGLS = 536;
    public static final int MNAN = 540;
    public static final int SUBNQN = 768;
    public static final int SUBNQN_LENGTH = 256;
    public static final int IOCCSZ = 1792;
    public static final int IORCSZ = 1796;
    public static final int ICDOFF = 1800;
    public static final int FCATT = 1802;
    public static final int MSDBD = 1803;
    public static final int OFCS = 1804;
    public static final int PSD0 = 2048;

    /** CMIC bit 0 (MPORTS): the NVM subsystem may have two or more ports. */
    public static final int CMIC_MULTI_PORT = 1;
    /** CMIC bit 1: the NVM subsystem may have two or more controllers. */
    public static final int CMIC_MULTI_CONTROLLER = 1 << 1;
    /** CMIC bit 3: the controller reports Asymmetric Namespace Access (ANA log page, ANAGRPID, ANA statuses). */
    public static final int CMIC_ANA = 1 << 3;
    /** CTRATT bit 0: 128-bit host identifier supported (required on fabrics). */
    public static final int CTRATT_HOST_ID_128 = 1;
    /** CTRATT bit 6: traffic based keep alive (any command re-arms the timer). */
    public static final int CTRATT_TBKAS = 1 << 6;
    public static final int CNTRLTYPE_IO = 1;
    public static final int CNTRLTYPE_DISCOVERY = 2;
    public static final int CNTRLTYPE_ADMINISTRATIVE = 3;
    /** OAES bit 8: namespace attribute notices. */
    public static final int OAES_NAMESPACE_ATTRIBUTE = 1 << 8;
    /** OAES bit 11: Asymmetric Namespace Access change notices (the Linux host enables only what OAES lists). */
    public static final int OAES_ANA_CHANGE = 1 << 11;
    /** OAES bit 31: discovery log page change notices. */
    public static final int OAES_DISCOVERY_LOG_CHANGE = 1 << 31;
    /** LPA bit 0 SMART per namespace, bit 1 commands supported and effects, bit 2 extended data (NUMDU, LPO). */
    public static final int LPA_SMART_PER_NAMESPACE = 1;
    public static final int LPA_COMMAND_EFFECTS = 1 << 1;
    public static final int LPA_EXTENDED_DATA = 1 << 2;
    /** FRMW bit 0 slot 1 read only, bits 3:1 number of slots. */
    public static final int FRMW_SLOT1_READ_ONLY_ONE_SLOT = 1 | (1 << 1);
    public static final int ONCS_COMPARE = 1;
    public static final int ONCS_DATASET_MANAGEMENT = 1 << 2;
    public static final int ONCS_WRITE_ZEROES = 1 << 3;
    public static final int VWC_PRESENT = 1;
    /** OFCS bit 0: the Disconnect command is supported (NVMe-oF 1.1 figure 34). */
    public static final int OFCS_DISCONNECT = 1;
    /** SQES: required 6 (64 bytes) in bits 3:0 and maximum 6 in bits 7:4. */
    public static final int SQES_64 = 0x66;
    /** CQES: required and maximum 4 (16 bytes). */
    public static final int CQES_16 = 0x44;
    /** SGLS bits 1:0 = 01b: SGLs supported, byte aligned. */
    public static final int SGLS_SUPPORTED = 1;
    /** SGLS bit 2: Keyed SGL Data Block descriptor supported (the Linux RDMA host requires it). */
    public static final int SGLS_KEYED = 1 << 2;
    /** SGLS bit 20: the Offset (in-capsule data) address type for Data Block descriptors is supported. */
    public static final int SGLS_OFFSET = 1 << 20;

    private IdentifyController() {
    }
}
