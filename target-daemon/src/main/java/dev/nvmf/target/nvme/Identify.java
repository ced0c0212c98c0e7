package dev.nvmf.target.nvme;

/** The Identify command (admin 06h): CDW10 CNS bits 7:0, CNTID bits 31:16; CDW11 CSI bits 31:24 (NVMe Base 2.0 5.17). */
public final class Identify {
    public static final int DATA_SIZE = 4096;

    public static final int CNS_NAMESPACE = 0x00;
    public static final int CNS_CONTROLLER = 0x01;
    public static final int CNS_ACTIVE_NAMESPACE_LIST = 0x02;
    public static final int CNS_NAMESPACE_DESCRIPTORS = 0x03;
    public static final int CNS_NVM_SET_LIST = 0x04;
    public static final int CNS_CS_NAMESPACE = 0x05;
    public static final int CNS_CS_CONTROLLER = 0x06;
    public static final int CNS_CS_ACTIVE_NAMESPACE_LIST = 0x07;
    public static final int CNS_CS_INDEPENDENT_NAMESPACE = 0x08;

    /** NSID value meaning "all namespaces" (broadcast). */
    public static final int NSID_ALL = 0xFFFF_FFFF;

    public static int cns(int cdw10) { return cdw10 & 0xFF; }

    public static int cntid(int cdw10) { return cdw10 >>> 16; }

    public static int csi(int cdw11) { return cdw11 >>> 24; }

    private Identify() {
    }
}
