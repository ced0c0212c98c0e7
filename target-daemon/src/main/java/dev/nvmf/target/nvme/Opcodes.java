package dev.nvmf.target.nvme;

/**
 * Command opcodes (NVMe Base 2.0 figure 141 admin, NVM Command Set 1.0 figure 16 I/O, NVMe-oF 1.1 figure 22
 * Fabrics command types). Bits 1:0 of an opcode give the data direction (01b host to controller, 10b controller to
 * host); Fabrics commands take the direction from bits 1:0 of FCTYPE instead.
 */
public final class Opcodes {
    // Admin
    public static final int ADMIN_DELETE_IO_SQ = 0x00;
    public static final int ADMIN_CREATE_IO_SQ = 0x01;
    public static final int ADMIN_GET_LOG_PAGE = 0x02;
    public static final int ADMIN_DELETE_IO_CQ = 0x04;
    public static final int ADMIN_CREATE_IO_CQ = 0x05;
    public static final int ADMIN_IDENTIFY = 0x06;
    public static final int ADMIN_ABORT = 0x08;
    public static final int ADMIN_SET_FEATURES = 0x09;
    public static final int ADMIN_GET_FEATURES = 0x0A;
    public static final int ADMIN_ASYNC_EVENT_REQUEST = 0x0C;
    public static final int ADMIN_NAMESPACE_MANAGEMENT = 0x0D;
    public static final int ADMIN_FIRMWARE_COMMIT = 0x10;
    public static final int ADMIN_FIRMWARE_DOWNLOAD = 0x11;
    public static final int ADMIN_KEEP_ALIVE = 0x18;
    public static final int ADMIN_FORMAT_NVM = 0x80;

    // I/O (NVM command set)
    public static final int IO_FLUSH = 0x00;
    public static final int IO_WRITE = 0x01;
    public static final int IO_READ = 0x02;
    public static final int IO_WRITE_UNCORRECTABLE = 0x04;
    public static final int IO_COMPARE = 0x05;
    public static final int IO_WRITE_ZEROES = 0x08;
    public static final int IO_DATASET_MANAGEMENT = 0x09;

    /** The Fabrics command opcode, on any queue; the command type is FCTYPE at byte 4. */
    public static final int FABRICS = 0x7F;

    // Fabrics command types (FCTYPE)
    public static final int FCTYPE_PROPERTY_SET = 0x00;
    public static final int FCTYPE_CONNECT = 0x01;
    public static final int FCTYPE_PROPERTY_GET = 0x04;
    public static final int FCTYPE_AUTHENTICATION_SEND = 0x05;
    public static final int FCTYPE_AUTHENTICATION_RECEIVE = 0x06;
    public static final int FCTYPE_DISCONNECT = 0x08;

    /** Data direction bits of an opcode (or FCTYPE): 0 none, 1 host to controller, 2 controller to host, 3 both. */
    public static int direction(int opcodeOrFctype) {
        return opcodeOrFctype & 0x3;
    }

    private Opcodes() {
    }
}
