package dev.nvmf.target.rdma.memory;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Registered memory of one device: large page-aligned slabs, each registered once (ibv_reg_mr) and kept until the
 * device is released, carved into regions for queues (receive and response buffers) and pollers (data buffer
 * pools). Regions that come back are kept by size and reused for the next region of that size, so reconnecting
 * hosts never trigger a registration. Nothing here runs on the I/O path; the methods are synchronized because the
 * CM thread and pollers both allocate (control path only).
 */
public final class SlabAllocator implements AutoCloseable {
    public static final long DEFAULT_SLAB_SIZE = 16L << 20;
    private static final long PAGE = 4096;

    private final ProtectionDomain pd;
    private final long slabSize;
    private final Arena arena = Arena.ofShared();
    private final List<MemoryRegion> registrations = new ArrayList<>();
    private final Map<Long, ArrayDeque<RegisteredRegion>> freeBySize = new HashMap<>();
    private MemorySegment current;
    private int currentLkey;
    private long currentUsed;
    private long bytesRegistered;
    private long regionsOut;
    private boolean closed;

    public SlabAllocator(ProtectionDomain pd, long slabSize) {
        this.pd = pd;
        this.slabSize = slabSize;
    }

    public SlabAllocator(ProtectionDomain pd) {
        this(pd, DEFAULT_SLAB_SIZE);
    }

    public ProtectionDomain protectionDomain() { return pd; }

    /** A zeroed region of at least {@code size} bytes (rounded up to 64), page-aligned when size >= a page. */
    public synchronized RegisteredRegion allocate(long size) {
        if (closed) throw new IllegalStateException("slab allocator closed");
        long rounded = roundUp(size, size >= PAGE ? PAGE : 64);
        ArrayDeque<RegisteredRegion> free = freeBySize.get(rounded);
        RegisteredRegion r = free == null ? null : free.pollFirst();
        if (r == null) {
            long align = rounded >= PAGE ? PAGE : 64;
            long start = current == null ? 0 : roundUp(currentUsed, align);
            if (current == null || start + rounded > current.byteSize()) {
                newSlab(Math.max(slabSize, roundUp(rounded, PAGE)));
                start = 0;
            }
            r = new RegisteredRegion(current.asSlice(start, rounded), currentLkey);
            currentUsed = start + rounded;
        }
        r.segment().fill((byte) 0);
        regionsOut++;
        return r;
    }

    /** Gives a region back for reuse. Only once nothing (no posted WR) refers to it any more. */
    public synchronized void release(RegisteredRegion region) {
        if (closed || region == null) return;
        freeBySize.computeIfAbsent(region.length(), k -> new ArrayDeque<>()).addFirst(region);
        regionsOut--;
    }

    private void newSlab(long size) {
        MemorySegment slab = arena.allocate(size, PAGE);
        MemoryRegion mr = pd.register(slab, Access.LOCAL_WRITE);
        registrations.add(mr);
        bytesRegistered += size;
        current = slab;
        currentLkey = mr.lkey();
        currentUsed = 0;
    }

    private static long roundUp(long v, long to) {
        return (v + to - 1) / to * to;
    }

    /** Number of registrations (slabs) so far: registration happens only when a slab fills up. */
    public synchronized int slabCount() { return registrations.size(); }

    public synchronized long bytesRegistered() { return bytesRegistered; }

    /** Regions handed out and not yet released. */
    public synchronized long regionsOutstanding() { return regionsOut; }

    /** Deregisters every slab and frees the memory. Only after every queue on the device is drained. */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        for (MemoryRegion mr : registrations) {
            try {
                mr.close();
            } catch (RuntimeException e) {
                System.getLogger(SlabAllocator.class.getName()).log(System.Logger.Level.WARNING,
                        "ibv_dereg_mr failed: " + e.getMessage());
            }
        }
        registrations.clear();
        freeBySize.clear();
        arena.close();
    }
}
