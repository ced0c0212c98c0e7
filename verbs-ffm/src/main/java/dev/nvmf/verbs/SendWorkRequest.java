package dev.nvmf.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * Flyweight over a native {@code struct ibv_send_wr} (x86_64 rdma-core layout, 128 bytes; the offsets are
 * checked against the C headers by a test). Build once, patch fields per I/O, chain with {@link #next}.
 */
public final class SendWorkRequest {
    public static final int SIZE = 128;
    public static final int ALIGNMENT = 8;
    public static final int WR_ID_OFFSET = 0;
    public static final int NEXT_OFFSET = 8;
    public static final int SG_LIST_OFFSET = 16;
    public static final int NUM_SGE_OFFSET = 24;
    public static final int OPCODE_OFFSET = 28;
    public static final int SEND_FLAGS_OFFSET = 32;
    /** Union of imm_data (network order) and invalidate_rkey. */
    public static final int INVALIDATE_RKEY_OFFSET = 36;
    public static final int REMOTE_ADDR_OFFSET = 40;
    public static final int RKEY_OFFSET = 48;
    /** wr.bind_mw.mw: the window (struct ibv_mw *) an IBV_WR_BIND_MW binds. */
    public static final int BIND_MW_MW_OFFSET = 80;
    /** wr.bind_mw.rkey: the key the window gets (its low 8 bits chosen by the consumer). */
    public static final int BIND_MW_RKEY_OFFSET = 88;
    /** wr.bind_mw.bind_info.mr: the region (struct ibv_mr *) under the window. */
    public static final int BIND_MW_MR_OFFSET = 96;
    /** wr.bind_mw.bind_info.addr: first byte of the window (a virtual address inside the region). */
    public static final int BIND_MW_ADDR_OFFSET = 104;
    /** wr.bind_mw.bind_info.length. */
    public static final int BIND_MW_LENGTH_OFFSET = 112;
    /** wr.bind_mw.bind_info.mw_access_flags: {@link Access} flags the window grants. */
    public static final int BIND_MW_ACCESS_OFFSET = 120;

    private final MemorySegment segment;

    /** Wraps an existing native structure of at least {@link #SIZE} bytes. */
    public SendWorkRequest(MemorySegment segment) {
        if (segment.byteSize() < SIZE) throw new IllegalArgumentException("ibv_send_wr needs " + SIZE + " bytes");
        this.segment = segment.asSlice(0, SIZE);
    }

    public static SendWorkRequest allocate(Arena arena) {
        return new SendWorkRequest(arena.allocate(SIZE, ALIGNMENT));
    }

    public MemorySegment segment() { return segment; }

    public long address() { return segment.address(); }

    public long wrId() { return segment.get(JAVA_LONG_UNALIGNED, WR_ID_OFFSET); }

    public SendWorkRequest wrId(long v) { segment.set(JAVA_LONG_UNALIGNED, WR_ID_OFFSET, v); return this; }

    public long nextAddress() { return segment.get(JAVA_LONG_UNALIGNED, NEXT_OFFSET); }

    /** Chains {@code next} after this request; null ends the chain. */
    public SendWorkRequest next(SendWorkRequest next) {
        segment.set(JAVA_LONG_UNALIGNED, NEXT_OFFSET, next == null ? 0L : next.address());
        return this;
    }

    public long sgListAddress() { return segment.get(JAVA_LONG_UNALIGNED, SG_LIST_OFFSET); }

    public int numSge() { return segment.get(JAVA_INT_UNALIGNED, NUM_SGE_OFFSET); }

    /** Points the request at {@code count} scatter/gather entries starting at {@code first}. */
    public SendWorkRequest sgList(ScatterGatherEntry first, int count) {
        segment.set(JAVA_LONG_UNALIGNED, SG_LIST_OFFSET, first == null ? 0L : first.address());
        segment.set(JAVA_INT_UNALIGNED, NUM_SGE_OFFSET, count);
        return this;
    }

    public int opcode() { return segment.get(JAVA_INT_UNALIGNED, OPCODE_OFFSET); }

    /** @param v one of {@link WrOpcode}'s constants */
    public SendWorkRequest opcode(int v) { segment.set(JAVA_INT_UNALIGNED, OPCODE_OFFSET, v); return this; }

    public int sendFlags() { return segment.get(JAVA_INT_UNALIGNED, SEND_FLAGS_OFFSET); }

    /** @param v bitwise OR of {@link SendFlags} */
    public SendWorkRequest sendFlags(int v) { segment.set(JAVA_INT_UNALIGNED, SEND_FLAGS_OFFSET, v); return this; }

    public int invalidateRkey() { return segment.get(JAVA_INT_UNALIGNED, INVALIDATE_RKEY_OFFSET); }

    public SendWorkRequest invalidateRkey(int v) {
        segment.set(JAVA_INT_UNALIGNED, INVALIDATE_RKEY_OFFSET, v);
        return this;
    }

    public long remoteAddress() { return segment.get(JAVA_LONG_UNALIGNED, REMOTE_ADDR_OFFSET); }

    public int rkey() { return segment.get(JAVA_INT_UNALIGNED, RKEY_OFFSET); }

    /** Sets wr.rdma.remote_addr and wr.rdma.rkey (RDMA READ and WRITE). */
    public SendWorkRequest remote(long remoteAddress, int rkey) {
        segment.set(JAVA_LONG_UNALIGNED, REMOTE_ADDR_OFFSET, remoteAddress);
        segment.set(JAVA_INT_UNALIGNED, RKEY_OFFSET, rkey);
        return this;
    }

    public long bindMwHandle() { return segment.get(JAVA_LONG_UNALIGNED, BIND_MW_MW_OFFSET); }

    public int bindMwRkey() { return segment.get(JAVA_INT_UNALIGNED, BIND_MW_RKEY_OFFSET); }

    public long bindMwRegionHandle() { return segment.get(JAVA_LONG_UNALIGNED, BIND_MW_MR_OFFSET); }

    public long bindMwAddress() { return segment.get(JAVA_LONG_UNALIGNED, BIND_MW_ADDR_OFFSET); }

    public long bindMwLength() { return segment.get(JAVA_LONG_UNALIGNED, BIND_MW_LENGTH_OFFSET); }

    public int bindMwAccess() { return segment.get(JAVA_INT_UNALIGNED, BIND_MW_ACCESS_OFFSET); }

    /**
     * Makes this an IBV_WR_BIND_MW (no scatter/gather entries) binding {@code window} to
     * {@code [address, address + length)} of {@code region} with key {@code rkey} and {@code access}. After a
     * successful post call {@link MemoryWindow#bindPosted}, or use {@link MemoryWindow#bind}, which does both.
     */
    public SendWorkRequest bindMemoryWindow(MemoryWindow window, int rkey, MemoryRegion region, long address,
                                            long length, int access) {
        return bindMemoryWindow(window.handle(), rkey, region.handle(), address, length, access);
    }

    /** The raw form of {@link #bindMemoryWindow(MemoryWindow, int, MemoryRegion, long, long, int)}. */
    public SendWorkRequest bindMemoryWindow(long windowHandle, int rkey, long regionHandle, long address, long length,
                                            int access) {
        opcode(WrOpcode.BIND_MW);
        segment.set(JAVA_LONG_UNALIGNED, SG_LIST_OFFSET, 0L);
        segment.set(JAVA_INT_UNALIGNED, NUM_SGE_OFFSET, 0);
        segment.set(JAVA_INT_UNALIGNED, INVALIDATE_RKEY_OFFSET, 0);
        segment.set(JAVA_LONG_UNALIGNED, BIND_MW_MW_OFFSET, windowHandle);
        segment.set(JAVA_INT_UNALIGNED, BIND_MW_RKEY_OFFSET, rkey);
        segment.set(JAVA_LONG_UNALIGNED, BIND_MW_MR_OFFSET, regionHandle);
        segment.set(JAVA_LONG_UNALIGNED, BIND_MW_ADDR_OFFSET, address);
        segment.set(JAVA_LONG_UNALIGNED, BIND_MW_LENGTH_OFFSET, length);
        segment.set(JAVA_INT_UNALIGNED, BIND_MW_ACCESS_OFFSET, access);
        return this;
    }
}
