package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.MemoryRegion;

import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/** An ibv_mr; keys and range are read once at registration. */
final class FfmMemoryRegion implements MemoryRegion {
    private final FfmDevice device;
    private final MemorySegment mr;
    private final MemorySegment segment;
    private final long address;
    private final long length;
    private final int lkey;
    private final int rkey;
    private boolean closed;

    FfmMemoryRegion(FfmDevice device, MemorySegment mr, MemorySegment segment) {
        this.device = device;
        this.mr = mr.reinterpret(NativeLayout.IBV_MR_SIZE);
        this.segment = segment;
        this.address = this.mr.get(JAVA_LONG, NativeLayout.IBV_MR_ADDR);
        this.length = this.mr.get(JAVA_LONG, NativeLayout.IBV_MR_LENGTH);
        this.lkey = this.mr.get(JAVA_INT, NativeLayout.IBV_MR_LKEY);
        this.rkey = this.mr.get(JAVA_INT, NativeLayout.IBV_MR_RKEY);
    }

    @Override
    public MemorySegment segment() { return segment; }

    @Override
    public long address() { return address; }

    @Override
    public long length() { return length; }

    @Override
    public int lkey() { return lkey; }

    @Override
    public int rkey() { return rkey; }

    /** The native struct ibv_mr *, as bind_mw.bind_info.mr wants it. */
    @Override
    public long handle() { return mr.address(); }

    @Override
    public synchronized void close() {
        if (closed) return;
        device.rdma().check("ibv_dereg_mr", mr);
        closed = true;
    }
}
