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
    /** Each slab's memory, with its registration at the same index: a slab is freed only once it is deregistered. */
    private final List<Arena> slabMemory = new ArrayList<>();
    private final List<MemoryRegion> registrations = new ArrayList<>();
    private final Map<Long, ArrayDeque<RegisteredRegion>> freeBySize = new HashMap<>();
    private MemorySegment current;
    private int currentLkey;
    private long currentUsed;
    private long bytesRegistered;
    private long regionsOut;
    private long bytesLeaked;
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
        Arena arena = Arena.ofShared();
        MemorySegment slab = arena.allocate(size, PAGE);
        MemoryRegion mr;
        try {
            mr = pd.register(slab, Access.LOCAL_WRITE);
        } catch (RuntimeException e) {
            arena.close(); // never registered: nothing but us knows it
            throw e;
        }
        slabMemory.add(arena);
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

    /** Bytes of slabs whose deregistration failed: leaked on purpose by {@link #close()}. */
    public synchronized long bytesLeaked() { return bytesLeaked; }

    /**
     * Deregisters every slab, then frees the memory of each slab whose deregistration succeeded. Only after every QP
     * that used the slabs is destroyed (the order is always QP destroyed, MR deregistered, memory freed). A slab whose
     * ibv_dereg_mr failed may still be reachable by the device through its registration: its memory is leaked on
     * purpose and logged, never freed nor reused; unless the failure says the kernel destroyed the region already
     * ({@link Deregistration}).
     */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        System.Logger log = System.getLogger(SlabAllocator.class.getName());
        for (int i = 0; i < registrations.size(); i++) {
            MemoryRegion mr = registrations.get(i);
            Arena memory = slabMemory.get(i);
            long size = mr.length();
            try {
                mr.close();
            } catch (RuntimeException e) {
                if (Deregistration.alreadyDestroyedByTheKernel(e)) {
                    log.log(System.Logger.Level.INFO, "ibv_dereg_mr: the kernel already destroyed the region ("
                            + e.getMessage() + "; the device was removed): freeing its " + size + " bytes");
                    memory.close();
                    continue;
                }
                bytesLeaked += size;
                log.log(System.Logger.Level.ERROR, "ibv_dereg_mr failed (" + e.getMessage() + "): leaking its "
                        + size + " bytes on purpose, as the device may still reach them");
                continue;
            }
            memory.close();
        }
        registrations.clear();
        slabMemory.clear();
        freeBySize.clear();
        current = null;
    }
}
