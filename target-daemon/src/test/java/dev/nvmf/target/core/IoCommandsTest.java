package dev.nvmf.target.core;

import dev.nvmf.verbs.Errno;
import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.core.io.IoCommands;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.IdentifyNamespace;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.NvmCommand;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NVM I/O commands through the core to a backend (NVM Command Set 1.0, 3). */
class IoCommandsTest extends CoreFixture {
    private final ScriptedBackend scripted = new ScriptedBackend(1 << 20);
    private CapsuleHost h;
    private CapsuleHost.Queue io;

    @BeforeEach
    void connect() {
        subsystem.addNamespace(NamespaceConfig.of(5, 4096), scripted);
        subsystem.addNamespace(new NamespaceConfig(6, 512, true, null, null, 0), new RamBackend(65536));
        h = host(HOST1).connectAndEnable(SUBNQN);
        io = h.connectIo(1, 128);
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void writeThenReadBackBothBlockSizes() {
        byte[] d1 = random(8 * 512, 1);
        assertEquals(0, io.submit(Cmd.write(1, 100, 8, d1)).status());
        Completion r1 = io.submit(Cmd.read(1, 100, 8, 8 * 512));
        assertEquals(0, r1.status());
        assertEquals(1, r1.sqid());
        assertArrayEquals(d1, r1.data());
        byte[] d2 = random(3 * 4096, 2);
        assertEquals(0, io.submit(Cmd.write(2, 1021, 3, d2)).status(), "last three blocks");
        assertArrayEquals(d2, io.submit(Cmd.read(2, 1021, 3, 3 * 4096)).data());
        // A host buffer larger than the transfer: only the blocks read are sent.
        assertEquals(512, io.submit(Cmd.read(1, 100, 1, 4096)).data().length);
    }

    @Test
    void rangeAndSizeChecks() {
        io.expect(Status.LBA_OUT_OF_RANGE, Cmd.read(1, 2048, 1, 512));
        io.expect(Status.LBA_OUT_OF_RANGE, Cmd.read(1, 2047, 2, 1024));
        io.expect(Status.LBA_OUT_OF_RANGE, Cmd.read(1, -1L, 1, 512)); // SLBA FFFF...F, no wrap-around
        io.expect(Status.LBA_OUT_OF_RANGE, Cmd.write(2, 1024, 1, new byte[4096]));
        // NLB beyond MDTS (1 MiB): 257 x 4 KiB
        io.expect(Status.INVALID_FIELD, Cmd.read(2, 0, 257, 257 * 4096));
        assertEquals(0, io.submit(Cmd.read(2, 0, 256, 256 * 4096)).status(), "exactly MDTS");
        // SGL shorter than the transfer
        io.expect(Status.DATA_SGL_LENGTH_INVALID, Cmd.read(1, 0, 8, 1024));
        io.expect(Status.DATA_SGL_LENGTH_INVALID, Cmd.write(1, 0, 8, new byte[512]));
        // Unknown namespace, unknown opcode
        io.expect(Status.INVALID_NAMESPACE, Cmd.read(9, 0, 1, 512));
        io.expect(Status.INVALID_NAMESPACE, Cmd.read(0, 0, 1, 512));
        io.expect(Status.INVALID_OPCODE, new Cmd(0x04).nsid(1));
        io.expect(Status.INVALID_OPCODE, new Cmd(0x7E).nsid(1));
    }

    @Test
    void readOnlyNamespaceRefusesWrites() {
        io.expect(Status.NAMESPACE_WRITE_PROTECTED, Cmd.write(6, 0, 1, new byte[512]));
        io.expect(Status.NAMESPACE_WRITE_PROTECTED, new Cmd(Opcodes.IO_WRITE_ZEROES).nsid(6).cdw(12, 0));
        io.expect(Status.NAMESPACE_WRITE_PROTECTED, new Cmd(Opcodes.IO_DATASET_MANAGEMENT).nsid(6).cdw(11, 4)
                .data(new byte[16]));
        assertEquals(0, io.submit(Cmd.read(6, 0, 1, 512)).status());
    }

    @Test
    void flushWriteZeroesAndDeallocate() {
        io.submit(Cmd.write(1, 10, 4, random(2048, 3)));
        assertEquals(0, io.submit(new Cmd(Opcodes.IO_FLUSH).nsid(1)).status());
        assertEquals(0, io.submit(new Cmd(Opcodes.IO_WRITE_ZEROES).nsid(1).u64(40, 11).cdw(12, 1)).status());
        byte[] back = io.submit(Cmd.read(1, 10, 4, 2048)).data();
        assertFalse(Arrays.equals(new byte[512], Arrays.copyOfRange(back, 0, 512)), "block 10 kept");
        assertArrayEquals(new byte[1024], Arrays.copyOfRange(back, 512, 1536), "blocks 11-12 zeroed");
        io.expect(Status.LBA_OUT_OF_RANGE, new Cmd(Opcodes.IO_WRITE_ZEROES).nsid(1).u64(40, 2040).cdw(12, 8));

        // DSM deallocate, two ranges on the 4 KiB namespace 5: (slba 2, 3 blocks), (slba 10, 0 blocks: skipped)
        io.submit(Cmd.write(5, 2, 3, random(3 * 4096, 4)));
        MemorySegment ranges = MemorySegment.ofArray(new byte[32]);
        Le.u32(ranges, NvmCommand.DSM_RANGE_LENGTH, 3);
        Le.u64(ranges, NvmCommand.DSM_RANGE_SLBA, 2);
        Le.u64(ranges, 16 + NvmCommand.DSM_RANGE_SLBA, 10);
        byte[] rb = ranges.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        assertEquals(0, io.submit(new Cmd(Opcodes.IO_DATASET_MANAGEMENT).nsid(5).cdw(10, 1).cdw(11, 4).data(rb))
                .status());
        assertEquals(1, scripted.deallocated.size());
        assertArrayEquals(new long[] {2 * 4096, 3 * 4096}, scripted.deallocated.get(0));
        assertArrayEquals(new byte[3 * 4096], io.submit(Cmd.read(5, 2, 3, 3 * 4096)).data());
        // Without AD it is a hint: nothing deallocated
        assertEquals(0, io.submit(new Cmd(Opcodes.IO_DATASET_MANAGEMENT).nsid(5).cdw(10, 1).cdw(11, 1).data(rb))
                .status());
        assertEquals(1, scripted.deallocated.size());
        // One range out of range: the command fails and nothing is deallocated
        Le.u32(ranges, 16 + NvmCommand.DSM_RANGE_LENGTH, 1);
        Le.u64(ranges, 16 + NvmCommand.DSM_RANGE_SLBA, 256);
        io.expect(Status.LBA_OUT_OF_RANGE, new Cmd(Opcodes.IO_DATASET_MANAGEMENT).nsid(5).cdw(10, 1).cdw(11, 4)
                .data(ranges.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
        assertEquals(1, scripted.deallocated.size());
        // Fewer range bytes than NR says
        io.expect(Status.DATA_SGL_LENGTH_INVALID, new Cmd(Opcodes.IO_DATASET_MANAGEMENT).nsid(5).cdw(10, 3)
                .cdw(11, 4).data(rb));
    }

    @Test
    void writeZeroesHandsDeacToTheBackendAndDeallocateNeverWritesZeroes() {
        io.submit(Cmd.write(5, 0, 2, random(2 * 4096, 8)));
        assertEquals(0, io.submit(new Cmd(Opcodes.IO_WRITE_ZEROES).nsid(5).u64(40, 0).cdw(12, 0)).status());
        assertFalse(scripted.lastMayDeallocate, "no DEAC: zeroes, no deallocation");
        assertEquals(0, io.submit(new Cmd(Opcodes.IO_WRITE_ZEROES).nsid(5).u64(40, 1).cdw(12, NvmCommand.CDW12_DEAC))
                .status());
        assertTrue(scripted.lastMayDeallocate, "DEAC: the backend may deallocate, keeping zeroes on read");
        assertEquals(2, scripted.writeZeroes);
        assertEquals(0, scripted.deallocated.size(), "Write Zeroes is never a bare deallocate");
        assertArrayEquals(new byte[2 * 4096], io.submit(Cmd.read(5, 0, 2, 2 * 4096)).data());
        // DSM deallocate goes to deallocate only; a backend that cannot deallocate (EOPNOTSUPP) is no failure.
        MemorySegment range = MemorySegment.ofArray(new byte[16]);
        Le.u32(range, NvmCommand.DSM_RANGE_LENGTH, 8);
        scripted.failNext = -Errno.EOPNOTSUPP;
        assertEquals(0, io.submit(new Cmd(Opcodes.IO_DATASET_MANAGEMENT).nsid(5).cdw(10, 0).cdw(11, 4)
                .data(range.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))).status());
        assertEquals(1, scripted.deallocated.size());
        assertEquals(2, scripted.writeZeroes, "no zeroes written in its place");
    }

    @Test
    void identifyNamespaceSaysWhatTheBackendGuarantees() {
        // RAM: deallocated blocks read zeroes (DLFEAT 001b) and Write Zeroes may deallocate (bit 3); no geometry.
        MemorySegment ram = h.admin.submit(Cmd.identify(0, 1)).dataSegment();
        assertEquals(0x09, Le.u8(ram, IdentifyNamespace.DLFEAT));
        assertEquals(0, Le.u8(ram, IdentifyNamespace.NSFEAT), "no OPTPERF, no atomics, no DAE");
        // A medium whose discards may return old data: DLFEAT 000b, WZDS still (Write Zeroes always zeroes).
        scripted.deallocatedReadsZeroes = false;
        assertEquals(0x08, Le.u8(h.admin.submit(Cmd.identify(0, 5)).dataSegment(), IdentifyNamespace.DLFEAT));
        // A 512e disk (4 KiB physical, 1 MiB discard granularity, 128 KiB optimal I/O) under 512-byte blocks.
        ScriptedBackend disk = new ScriptedBackend(1 << 20);
        disk.deallocatedReadsZeroes = false;
        disk.physicalBlockSize = 4096;
        disk.deallocateGranularity = 1 << 20;
        disk.optimalIoSize = 128 << 10;
        subsystem.addNamespace(NamespaceConfig.of(8, 512), disk);
        MemorySegment id = h.admin.submit(Cmd.identify(0, 8)).dataSegment();
        assertEquals(IdentifyNamespace.NSFEAT_OPTIMAL_PERFORMANCE | IdentifyNamespace.NSFEAT_ATOMICS,
                Le.u8(id, IdentifyNamespace.NSFEAT));
        assertEquals(0, Le.u8(id, IdentifyNamespace.NSFEAT) & IdentifyNamespace.NSFEAT_DEALLOCATED_ERROR);
        assertEquals(7, Le.u16(id, IdentifyNamespace.NPWG), "8 blocks of 512 B per physical block, 0's based");
        assertEquals(7, Le.u16(id, IdentifyNamespace.NPWA));
        assertEquals(7, Le.u16(id, IdentifyNamespace.NAWUPF), "the Linux host's physical block is min(NPWG, NAWUPF)");
        assertEquals(7, Le.u16(id, IdentifyNamespace.NAWUN));
        assertEquals(7, Le.u16(id, IdentifyNamespace.NACWU));
        assertEquals(2047, Le.u16(id, IdentifyNamespace.NPDG), "1 MiB discard granularity");
        assertEquals(2047, Le.u16(id, IdentifyNamespace.NPDA));
        assertEquals(255, Le.u16(id, IdentifyNamespace.NOWS), "128 KiB optimal I/O");
        assertEquals(0x08, Le.u8(id, IdentifyNamespace.DLFEAT));
        // The same disk under 4 KiB blocks: one block each; no optimal I/O size reported: NOWS = one physical block.
        disk.optimalIoSize = 0;
        ScriptedBackend disk4k = new ScriptedBackend(1 << 20);
        disk4k.physicalBlockSize = 4096;
        subsystem.addNamespace(NamespaceConfig.of(9, 4096), disk4k);
        MemorySegment id4k = h.admin.submit(Cmd.identify(0, 9)).dataSegment();
        assertEquals(0, Le.u16(id4k, IdentifyNamespace.NPWG));
        assertEquals(0, Le.u16(id4k, IdentifyNamespace.NPDG), "no granularity known: one physical block");
        assertEquals(0, Le.u16(id4k, IdentifyNamespace.NOWS));
        assertEquals(0x09, Le.u8(id4k, IdentifyNamespace.DLFEAT));
        assertEquals(7, Le.u16(h.admin.submit(Cmd.identify(0, 8)).dataSegment(), IdentifyNamespace.NOWS),
                "no optimal I/O size reported: NOWS is NPWG");
        disk.close();
        disk4k.close();
    }

    @Test
    void compareMatchesAndMismatches() {
        byte[] d = random(1024, 5);
        io.submit(Cmd.write(1, 50, 2, d));
        assertEquals(0, io.submit(new Cmd(Opcodes.IO_COMPARE).nsid(1).u64(40, 50).cdw(12, 1).data(d)).status());
        d[700] ^= 1;
        Completion c = io.expect(Status.COMPARE_FAILURE,
                new Cmd(Opcodes.IO_COMPARE).nsid(1).u64(40, 50).cdw(12, 1).data(d));
        assertEquals(Status.SCT_MEDIA, c.sct());
        assertEquals(0x85, c.sc());
    }

    @Test
    void compareScratchIsBoundedAndReused() throws Exception {
        int limit = (int) (IoCommands.COMPARE_SCRATCH_BYTES / TargetOptions.defaults().maxTransferBytes());
        byte[] d = random(4096, 7);
        assertEquals(0, io.submit(Cmd.write(5, 3, 1, d)).status());
        scripted.deferred = true;
        NvmeRequest[] inFlight = new NvmeRequest[limit];
        for (int i = 0; i < limit; i++) {
            inFlight[i] = io.submitAsync(new Cmd(Opcodes.IO_COMPARE).nsid(5).u64(40, 3).cdw(12, 0).data(d));
            assertFalse(io.isCompleted(inFlight[i]));
        }
        // Every scratch buffer is in use: the next Compare is refused at once, as a transient error.
        Completion refused = io.expect(Status.SC_INTERNAL_ERROR,
                new Cmd(Opcodes.IO_COMPARE).nsid(5).u64(40, 3).cdw(12, 0).data(d));
        assertFalse(refused.dnr(), "transient: the host may retry");
        scripted.releaseOnAnotherThread();
        for (NvmeRequest r : inFlight) {
            assertEquals(0, io.completionOf(r).status());
        }
        // The buffers came back: as many compares again, and one more, run; a mismatch is still seen.
        scripted.deferred = false;
        for (int i = 0; i <= limit; i++) {
            assertEquals(0, io.submit(new Cmd(Opcodes.IO_COMPARE).nsid(5).u64(40, 3).cdw(12, 0).data(d)).status());
        }
        d[4095] ^= 1;
        io.expect(Status.COMPARE_FAILURE, new Cmd(Opcodes.IO_COMPARE).nsid(5).u64(40, 3).cdw(12, 0).data(d));
    }

    @Test
    void fuaAndVolatileWriteCacheReachTheBackend() {
        io.submit(Cmd.write(5, 0, 1, new byte[4096]));
        assertFalse(scripted.lastFua);
        io.submit(Cmd.write(5, 0, 1, new byte[4096]).cdw(12, NvmCommand.CDW12_FUA));
        assertTrue(scripted.lastFua);
        h.admin.submit(Cmd.setFeature(Features.FID_VOLATILE_WRITE_CACHE, 0));
        io.submit(Cmd.write(5, 0, 1, new byte[4096]));
        assertTrue(scripted.lastFua, "write cache off: every write written through");
    }

    @Test
    void backendErrorsFailThatCommandOnly() {
        scripted.failNext = -Errno.EIO;
        Completion c = io.expect(Status.UNRECOVERED_READ_ERROR, Cmd.read(5, 0, 1, 4096));
        assertEquals(Status.SCT_MEDIA, c.sct());
        scripted.failNext = -Errno.EIO;
        io.expect(Status.WRITE_FAULT, Cmd.write(5, 0, 1, new byte[4096]));
        scripted.failNext = -Errno.ENOSPC;
        io.expect(Status.CAPACITY_EXCEEDED, Cmd.write(5, 0, 1, new byte[4096]));
        scripted.failNext = -Errno.EAGAIN;
        Completion retry = io.expect(Status.SC_INTERNAL_ERROR, new Cmd(Opcodes.IO_FLUSH).nsid(5));
        assertFalse(retry.dnr(), "transient: the host may retry");
        scripted.failNext = -Errno.ENODEV;
        io.expect(Status.SC_INTERNAL_ERROR | Status.DNR, new Cmd(Opcodes.IO_WRITE_ZEROES).nsid(5));
        // The next command is fine, and SMART counted the two media errors.
        assertEquals(0, io.submit(Cmd.read(5, 0, 1, 4096)).status());
        MemorySegment smart = h.admin.submit(Cmd.getLogPage(LogPages.LID_SMART_HEALTH, 5, 512, 0, false))
                .dataSegment();
        assertEquals(2, Le.u64(smart, LogPages.SMART_MEDIA_ERRORS));
    }

    @Test
    void asynchronousBackendCompletesOnItsOwnThread() throws Exception {
        scripted.deferred = true;
        byte[] d = random(4096, 6);
        NvmeRequest w = io.submitAsync(Cmd.write(5, 7, 1, d));
        NvmeRequest f = io.submitAsync(new Cmd(Opcodes.IO_FLUSH).nsid(5));
        assertFalse(io.isCompleted(w));
        assertFalse(io.isCompleted(f));
        scripted.releaseOnAnotherThread();
        assertEquals(0, io.completionOf(w).status());
        assertEquals(0, io.completionOf(f).status());
        NvmeRequest r = io.submitAsync(Cmd.read(5, 7, 1, 4096));
        scripted.releaseOnAnotherThread();
        assertArrayEquals(d, io.completionOf(r).data());
    }

    @Test
    void aResizedNamespaceIsRevalidatedAndTheHostIsTold() throws Exception {
        ScriptedBackend grows = new ScriptedBackend(2 << 20);
        grows.sizeBytes = 1 << 20; // the medium reports 1 MiB now: 256 blocks of 4 KiB
        subsystem.addNamespace(NamespaceConfig.of(10, 4096), grows);
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE)).status());
        h.admin.submit(Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0, false)); // the add, read
        io.expect(Status.LBA_OUT_OF_RANGE, Cmd.read(10, 300, 1, 4096));
        assertFalse(subsystem.revalidateNamespace(10), "unchanged: nothing to tell");

        NvmeRequest aer = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        grows.sizeBytes = 2 << 20;
        assertTrue(subsystem.revalidateNamespace(10));
        assertEquals(AsyncEvents.NAMESPACE_CHANGED, h.admin.completionOf(aer).dw0(), "namespace attribute changed");
        MemorySegment list = h.admin.submit(Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0, false))
                .dataSegment();
        assertEquals(10, Le.u32(list, 0));
        assertEquals(0, Le.u32(list, 4));
        assertEquals(512, Le.u64(h.admin.submit(Cmd.identify(0, 10)).dataSegment(), IdentifyNamespace.NSZE));
        assertEquals(0, io.submit(Cmd.read(10, 300, 1, 4096)).status(), "the new blocks are there");

        // Identify Namespace revalidates too (as the kernel's does): a host that rescans sees a shrunk medium.
        grows.sizeBytes = 3 << 19;
        MemorySegment id = h.admin.submit(Cmd.identify(0, 10)).dataSegment();
        assertEquals(384, Le.u64(id, IdentifyNamespace.NSZE));
        assertEquals(384, Le.u64(id, IdentifyNamespace.NCAP));
        assertEquals(10, Le.u32(h.admin.submit(Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0,
                false)).dataSegment(), 0), "recorded in the changed namespace list");
        io.expect(Status.LBA_OUT_OF_RANGE, Cmd.read(10, 384, 1, 4096));
        // Below one block is not adopted; an unknown NSID changes nothing.
        grows.sizeBytes = 100;
        assertFalse(subsystem.revalidateNamespace(10));
        assertFalse(subsystem.revalidateNamespace(99));
        grows.close();
    }

    @Test
    void removedNamespaceFailsNewCommands() {
        assertEquals(0, io.submit(Cmd.read(2, 0, 1, 4096)).status());
        subsystem.removeNamespace(2);
        io.expect(Status.INVALID_NAMESPACE, Cmd.read(2, 0, 1, 4096));
    }
}
