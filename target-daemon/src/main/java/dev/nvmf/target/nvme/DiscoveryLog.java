package dev.nvmf.target.nvme;

/**
 * Discovery Log Page (log identifier 70h, NVMe-oF 1.1 figure 39/40): a 1024-byte header then 1024-byte entries.
 */
public final class DiscoveryLog {
    public static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";

    public static final int HEADER_SIZE = 1024;
    public static final int ENTRY_SIZE = 1024;

    // Header
    public static final int GENCTR = 0;
    public static final int NUMREC = 8;
    public static final int RECFMT = 16;

    // Entry
    public static final int TRTYPE = 0;
    public static final int ADRFAM = 1;
    public static final int SUBTYPE = 2;
    public static final int TREQ = 3;
    public static final int PORTID = 4;
    public static final int CNTLID = 6;
    public static final int ASQSZ = 8;
    public static final int EFLAGS = 10;
    public static final int TRSVCID = 32;
    public static final int TRSVCID_LENGTH = 32;
    public static final int SUBNQN = 256;
    public static final int SUBNQN_LENGTH = 256;
    public static final int TRADDR = 512;
    public static final int TRADDR_LENGTH = 256;
    public static final int TSAS = 768;
    /** RDMA TSAS: QP type byte 0 (1 = reliable connected), provider type byte 1, CM service byte 2 (1 = RDMA_CM). */
    public static final int TSAS_RDMA_QPTYPE = 768;
    public static final int TSAS_RDMA_PRTYPE = 769;
    public static final int TSAS_RDMA_CMS = 770;
    public static final int TSAS_RDMA_PKEY = 776;

    public static final int TRTYPE_RDMA = 1;
    public static final int TRTYPE_FC = 2;
    public static final int TRTYPE_TCP = 3;
    public static final int ADRFAM_IPV4 = 1;
    public static final int ADRFAM_IPV6 = 2;
    public static final int ADRFAM_IB = 3;
    public static final int SUBTYPE_REFERRAL = 1;
    public static final int SUBTYPE_NVM = 2;
    public static final int SUBTYPE_CURRENT_DISCOVERY = 3;
    /** TREQ bits 1:0 secure channel: 0 not specified; bit 2: SQ flow control disable supported. */
    public static final int TREQ_NOT_SPECIFIED = 0;
    public static final int TREQ_DISABLE_SQ_FLOW = 1 << 2;
    /** EFLAGS bit 0 duplicate returned information, bit 1 explicit persistent connection support. */
    public static final int EFLAGS_DUPLICATE_RETURNED_INFO = 1;
    public static final int EFLAGS_EXPLICIT_PERSISTENT_CONNECTION = 1 << 1;
    public static final int RDMA_QPTYPE_CONNECTED = 1;
    public static final int RDMA_PRTYPE_NOT_SPECIFIED = 1;
    public static final int RDMA_CMS_RDMA_CM = 1;

    private DiscoveryLog() {
    }
}
