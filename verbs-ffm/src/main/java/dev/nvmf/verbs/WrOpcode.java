package dev.nvmf.verbs;

/** enum ibv_wr_opcode: what a send work request does. */
public final class WrOpcode {
    public static final int RDMA_WRITE = 0;
    public static final int RDMA_WRITE_WITH_IMM = 1;
    public static final int SEND = 2;
    public static final int SEND_WITH_IMM = 3;
    public static final int RDMA_READ = 4;
    public static final int ATOMIC_CMP_AND_SWP = 5;
    public static final int ATOMIC_FETCH_AND_ADD = 6;
    public static final int LOCAL_INV = 7;
    public static final int BIND_MW = 8;
    public static final int SEND_WITH_INV = 9;

    private WrOpcode() {}

    public static String name(int opcode) {
        return switch (opcode) {
            case RDMA_WRITE -> "RDMA_WRITE";
            case RDMA_WRITE_WITH_IMM -> "RDMA_WRITE_WITH_IMM";
            case SEND -> "SEND";
            case SEND_WITH_IMM -> "SEND_WITH_IMM";
            case RDMA_READ -> "RDMA_READ";
            case LOCAL_INV -> "LOCAL_INV";
            case BIND_MW -> "BIND_MW";
            case SEND_WITH_INV -> "SEND_WITH_INV";
            default -> "OPCODE_" + opcode;
        };
    }
}
