package dev.nvmf.target.rdma.memory;

import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.MemoryWindow;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The slabs' end (issue "Faults and teardown", defect 3): memory is freed only once its registration is gone. A slab
 * whose ibv_dereg_mr failed may still be reached by the device, so it is leaked on purpose, never freed; before, the
 * allocator freed its whole arena whatever the deregistration said.
 */
class SlabAllocatorTest {

    /** A soft PD whose {@code refused}-th registration (0 = the first) refuses to be deregistered with {@code errno}. */
    private static final class RefusingPd implements ProtectionDomain {
        private final ProtectionDomain pd;
        private final int refused;
        private final int errno;
        private int registered;

        RefusingPd(ProtectionDomain pd, int refused) {
            this(pd, refused, Errno.EBUSY);
        }

        RefusingPd(ProtectionDomain pd, int refused, int errno) {
            this.pd = pd;
            this.refused = refused;
            this.errno = errno;
        }

        @Override public Device device() { return pd.device(); }

        @Override public MemoryWindow allocateMemoryWindow() { return pd.allocateMemoryWindow(); }
        @Override public dev.nvmf.verbs.SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
            return pd.createSharedReceiveQueue(maxWr, maxSge);
        }

        @Override public void close() { pd.close(); }

        @Override
        public MemoryRegion register(MemorySegment segment, int access) {
            MemoryRegion mr = pd.register(segment, access);
            boolean refuse = registered++ == refused;
            return new MemoryRegion() {
                @Override public MemorySegment segment() { return mr.segment(); }
                @Override public long address() { return mr.address(); }
                @Override public long length() { return mr.length(); }
                @Override public int lkey() { return mr.lkey(); }
                @Override public int rkey() { return mr.rkey(); }
                @Override public long handle() { return mr.handle(); }

                @Override
                public void close() {
                    if (refuse) throw new VerbsException("ibv_dereg_mr", errno, Errno.message(errno) + " (test)");
                    mr.close();
                }
            };
        }
    }

    @Test
    void aSlabIsFreedOnlyOnceDeregisteredAndOneWhoseDeregistrationFailedIsLeaked() {
        try (SoftFabric fabric = SoftFabric.manual()) {
            fabric.addDevice("t0", "10.0.0.1");
            Device device = fabric.openDevice("t0");
            SlabAllocator slabs = new SlabAllocator(new RefusingPd(device.allocProtectionDomain(), 1), 1 << 20);
            RegisteredRegion first = slabs.allocate(1 << 20);
            RegisteredRegion second = slabs.allocate(1 << 20);
            assertEquals(2, slabs.slabCount());
            slabs.release(first);
            slabs.release(second);
            slabs.close();
            assertEquals(1L << 20, slabs.bytesLeaked(), "only the slab whose deregistration failed");
            assertThrows(IllegalStateException.class, () -> first.segment().get(ValueLayout.JAVA_LONG, 0),
                    "the deregistered slab is freed");
            second.segment().set(ValueLayout.JAVA_LONG, 0, 42); // still allocated: the device may still write it
            assertEquals(42, second.segment().get(ValueLayout.JAVA_LONG, 0));
            assertEquals(1, fabric.resources().mrs(), "the refused registration is still there");
        }
    }

    /**
     * ENOENT: the kernel has no region by that handle any more. It destroyed it itself with the objects of a removed
     * device (the lab's hot-remove of rxe0 answers every ibv_dereg_mr so): nothing can reach the memory, so it is
     * freed. Before, those slabs (64 MiB per hot-remove in the lab) were leaked as if the device could still write
     * them.
     */
    @Test
    void aSlabWhoseRegionTheKernelAlreadyDestroyedIsFreed() {
        try (SoftFabric fabric = SoftFabric.manual()) {
            fabric.addDevice("t0", "10.0.0.1");
            Device device = fabric.openDevice("t0");
            SlabAllocator slabs = new SlabAllocator(new RefusingPd(device.allocProtectionDomain(), 0, Errno.ENOENT),
                    1 << 20);
            RegisteredRegion only = slabs.allocate(1 << 20);
            slabs.release(only);
            slabs.close();
            assertEquals(0, slabs.bytesLeaked());
            assertThrows(IllegalStateException.class, () -> only.segment().get(ValueLayout.JAVA_LONG, 0),
                    "freed");
        }
    }
}
