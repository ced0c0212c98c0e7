package dev.nvmf.verbs;

/** enum ibv_wc_opcode: what a completion is for. Receive completions have bit 7 set. */
public final class WcOpcode {
    public static final int SEND = 0;
    public static final int RDMA_WRITE = 1;
    public static final int RDMA_READ = 2;
    public static final int COMP_SWAP = 3;
    public static final int FETCH_ADD = 4;
    public static final int BIND_MW = 5;
    public static final int LOCAL_INV = 6;
    public static final int RECV = 1 << 7;
    public static final int RECV_RDMA_WITH_IMM = RECV + 1;

    private WcOpcode() {}

    public static boolean isReceive(int opcode) { return (opcode & RECV) != 0; }
}
