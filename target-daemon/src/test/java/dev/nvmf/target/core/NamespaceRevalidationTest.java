package dev.nvmf.target.core;

import dev.nvmf.target.backend.BackendCallback;
import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.IdentifyNamespace;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A medium that changed size (an RBD image resized by another client): {@code Subsystem.revalidateNamespace} adopts
 * the backend's capacity and tells every controller, as the kernel's {@code nvmet_ns_revalidate} and
 * {@code nvmet_ns_changed} do.
 */
class NamespaceRevalidationTest extends CoreFixture {
    /** 2 MiB of RAM that reports whatever capacity the test sets, as a resized medium does. */
    static final class ResizableBackend implements BlockBackend {
        final RamBackend ram = new RamBackend(2 << 20);
        volatile long sizeBytes;

        ResizableBackend(long sizeBytes) {
            this.sizeBytes = sizeBytes;
        }

        @Override public long sizeBytes() { return sizeBytes; }
        @Override public boolean readOnly() { return false; }
        @Override public String describe() { return "resizable"; }

        @Override
        public void read(long offset, MemorySegment destination, int length, Object a, BackendCallback cb) {
            ram.read(offset, destination, length, a, cb);
        }

        @Override
        public void write(long offset, MemorySegment source, int length, boolean fua, Object a, BackendCallback cb) {
            ram.write(offset, source, length, fua, a, cb);
        }

        @Override public void flush(Object a, BackendCallback cb) { ram.flush(a, cb); }

        @Override
        public void writeZeroes(long offset, long length, Object a, BackendCallback cb) {
            ram.writeZeroes(offset, length, a, cb);
        }

        @Override
        public void deallocate(long offset, long length, Object a, BackendCallback cb) {
            ram.deallocate(offset, length, a, cb);
        }

        @Override public void close() { ram.close(); }
    }

    @Test
    void aResizedMediumIsAdoptedAndEveryControllerIsTold() {
        ResizableBackend medium = new ResizableBackend(1 << 20); // 256 blocks of 4 KiB
        subsystem.addNamespace(NamespaceConfig.of(10, 4096), medium);
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost other = host(HOST2).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io = h.connectIo(1, 32);
        for (CapsuleHost c : new CapsuleHost[] {h, other}) {
            assertEquals(0, c.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                    AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE)).status());
        }
        io.expect(Status.LBA_OUT_OF_RANGE, Cmd.read(10, 300, 1, 4096));
        assertFalse(subsystem.revalidateNamespace(10), "unchanged: nothing to tell");

        NvmeRequest aer = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        NvmeRequest otherAer = other.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        medium.sizeBytes = 2 << 20;
        assertEquals(256, subsystem.namespace(10).sizeBlocks(), "nothing changes before the revalidation");
        assertTrue(subsystem.revalidateNamespace(10));
        assertEquals(512, subsystem.namespace(10).sizeBlocks());
        for (CapsuleHost c : new CapsuleHost[] {h, other}) {
            assertEquals(AsyncEvents.NAMESPACE_CHANGED, c.admin.completionOf(c == h ? aer : otherAer).dw0(),
                    "Namespace Attribute Changed on every controller");
            MemorySegment list = c.admin.submit(Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0,
                    false)).dataSegment();
            assertEquals(10, Le.u32(list, 0), "the changed namespace list names it");
            assertEquals(0, Le.u32(list, 4));
        }
        MemorySegment id = h.admin.submit(Cmd.identify(0, 10)).dataSegment();
        assertEquals(512, Le.u64(id, IdentifyNamespace.NSZE));
        assertEquals(512, Le.u64(id, IdentifyNamespace.NCAP));
        assertEquals(0, io.submit(Cmd.read(10, 300, 1, 4096)).status(), "the new blocks are there");

        // A shrink: the blocks past the new end are out of range at once.
        medium.sizeBytes = 3 << 19;
        assertTrue(subsystem.revalidateNamespace(10));
        assertEquals(384, Le.u64(h.admin.submit(Cmd.identify(0, 10)).dataSegment(), IdentifyNamespace.NSZE));
        io.expect(Status.LBA_OUT_OF_RANGE, Cmd.read(10, 384, 1, 4096));
        // Below one block is not adopted; a partial block is rounded down; an unknown NSID changes nothing.
        medium.sizeBytes = 100;
        assertFalse(subsystem.revalidateNamespace(10));
        assertEquals(384, subsystem.namespace(10).sizeBlocks());
        medium.sizeBytes = (3 << 19) + 4095;
        assertFalse(subsystem.revalidateNamespace(10), "the same number of whole blocks");
        assertFalse(subsystem.revalidateNamespace(99));
        medium.close();
    }
}
