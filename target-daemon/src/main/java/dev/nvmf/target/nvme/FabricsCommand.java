package dev.nvmf.target.nvme;

/**
 * Field offsets of Fabrics commands inside the 64-byte SQE (NVMe-oF 1.1, 3.3-3.5), and of the 1024-byte Connect
 * data. Opcode 0x7F at byte 0, FCTYPE at byte 4 (where the NSID would be).
 */
public final class FabricsCommand {
    public static final int FCTYPE = 4;

    // Connect (FCTYPE 0x01)
    public static final int CONNECT_RECFMT = 40;
    public static final int CONNECT_QID = 42;
    /** Submission queue size, 0's based. */
    public static final int CONNECT_SQSIZE = 44;
    /** Connect attributes: bit 2 = disable SQ flow control (the host wants SQHD 0xFFFF), bits 1:0 priority. */
    public static final int CONNECT_CATTR = 46;
    public static final int CATTR_DISABLE_SQ_FLOW_CONTROL = 1 << 2;
    /** Keep Alive Timeout in milliseconds (admin queue only). */
    public static final int CONNECT_KATO = 48;

    // Connect data (1024 bytes, host to controller)
    public static final int CONNECT_DATA_SIZE = 1024;
    public static final int DATA_HOSTID = 0;
    public static final int DATA_HOSTID_LENGTH = 16;
    public static final int DATA_CNTLID = 16;
    public static final int DATA_SUBNQN = 256;
    public static final int DATA_HOSTNQN = 512;
    public static final int NQN_FIELD_LENGTH = 256;
    /** CNTLID in the Connect data of an admin queue asking for a controller of the dynamic model. */
    public static final int CNTLID_DYNAMIC = 0xFFFF;

    /**
     * DW0 of a failed Connect with "Invalid Parameters": IPO (byte offset of the bad field) in bits 15:0, IATTR in
     * bit 16 (0 = the offset is in the SQE, 1 = in the Connect data). NVMe-oF 1.1 figure 32.
     */
    public static int invalidParameterSqe(int offset) {
        return offset & 0xFFFF;
    }

    public static int invalidParameterData(int offset) {
        return (offset & 0xFFFF) | (1 << 16);
    }

    // Property Get / Set (FCTYPE 0x04 / 0x00)
    /** ATTRIB bits 2:0: 0 = 4-byte property, 1 = 8-byte property. */
    public static final int PROPERTY_ATTRIB = 40;
    public static final int PROPERTY_OFFSET = 44;
    public static final int PROPERTY_VALUE = 48;
    public static final int ATTRIB_SIZE_4 = 0;
    public static final int ATTRIB_SIZE_8 = 1;

    // Disconnect (FCTYPE 0x08)
    public static final int DISCONNECT_RECFMT = 40;

    private FabricsCommand() {
    }
}
