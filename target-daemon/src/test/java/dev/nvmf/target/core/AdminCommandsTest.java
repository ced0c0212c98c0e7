package dev.nvmf.target.core;

import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.core.admin.IdentifyCommand;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.IdentifyController;
import dev.nvmf.target.nvme.IdentifyNamespace;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Status;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** Admin commands of an I/O controller, bytes in and bytes out (NVMe Base 2.0, 5). */
class AdminCommandsTest extends CoreFixture {
    private CapsuleHost h;

    @BeforeEach
    void connect() {
        h = host(HOST1).connectAndEnable(SUBNQN);
    }

    private MemorySegment identify(int cns, int nsid) {
        Completion c = h.admin.submit(Cmd.identify(cns, nsid));
        assertEquals(Status.SUCCESS, c.status(), c::toString);
        assertEquals(4096, c.data().length);
        return c.dataSegment();
    }

    @Test
    void identifyControllerHasWhatTheLinuxHostChecks() {
        MemorySegment id = identify(1, 0);
        assertEquals("SN0001", Le.asciiTrimmed(id, IdentifyController.SN, 20));
        assertEquals(' ', (char) Le.u8(id, IdentifyController.SN + 19), "space padded");
        assertEquals("nvmf-target", Le.asciiTrimmed(id, IdentifyController.MN, 40));
        assertEquals(h.cntlid, Le.u16(id, IdentifyController.CNTLID));
        assertEquals(0x00020000, Le.u32(id, IdentifyController.VER));
        assertEquals(8, Le.u8(id, IdentifyController.MDTS), "1 MiB = 2^8 x 4 KiB");
        assertEquals(1, Le.u8(id, IdentifyController.CNTRLTYPE));
        assertEquals(10, Le.u16(id, IdentifyController.KAS));
        assertEquals(0x66, Le.u8(id, IdentifyController.SQES));
        assertEquals(0x44, Le.u8(id, IdentifyController.CQES));
        assertEquals(1024, Le.u16(id, IdentifyController.MAXCMD));
        assertEquals(1024, Le.u32(id, IdentifyController.NN));
        assertEquals(0b1101, Le.u16(id, IdentifyController.ONCS), "compare, DSM, write zeroes");
        assertEquals(1, Le.u8(id, IdentifyController.VWC));
        int sgls = Le.u32(id, IdentifyController.SGLS);
        assertEquals(1, sgls & 3, "SGLs supported");
        assertEquals(1 << 2, sgls & (1 << 2), "keyed SGL data block");
        assertEquals(1 << 20, sgls & (1 << 20), "offset (in-capsule) supported");
        assertEquals(SUBNQN, Le.utf8NulTerminated(id, IdentifyController.SUBNQN, 256));
        assertEquals((64 + 8192) / 16, Le.u32(id, IdentifyController.IOCCSZ));
        assertEquals(1, Le.u32(id, IdentifyController.IORCSZ));
        assertEquals(0, Le.u16(id, IdentifyController.ICDOFF));
        assertEquals(0, Le.u8(id, IdentifyController.FCATT));
        assertEquals(16, Le.u8(id, IdentifyController.MSDBD), "16 keyed descriptors fit the 8 KiB in-capsule data");
        assertEquals(3, Le.u8(id, IdentifyController.AERL));
        assertEquals(127, Le.u8(id, IdentifyController.ELPE));
        assertEquals(0x7, Le.u8(id, IdentifyController.LPA));
        assertEquals(1 << 8 | 1 << 11, Le.u32(id, IdentifyController.OAES), "namespace attribute and ANA notices");
        assertEquals(1 | (1 << 6), Le.u32(id, IdentifyController.CTRATT), "128-bit host id, TBKAS");
        assertEquals(0b1011, Le.u8(id, IdentifyController.CMIC), "several ports and controllers, ANA reporting");
        assertEquals(343, Le.u16(id, IdentifyController.WCTEMP), "warning threshold 70 C, above SMART's 25 C");
        assertEquals(358, Le.u16(id, IdentifyController.CCTEMP), "critical threshold 85 C");
        assertEquals(1, Le.u16(id, IdentifyController.OFCS), "Disconnect supported");
        assertEquals(0, Le.u8(id, 3000), "no stale buffer bytes leak");
    }


    @Test
    void msdbdIsWhatTheInCapsuleDataHolds() {
        // A Last Segment list lives in the in-capsule data, 16 bytes a descriptor; SGL1 alone always fits.
        assertEquals(1, IdentifyCommand.msdbd(port(0)));
        assertEquals(1, IdentifyCommand.msdbd(port(16)));
        assertEquals(4, IdentifyCommand.msdbd(port(64)));
        assertEquals(16, IdentifyCommand.msdbd(port(256)));
        assertEquals(16, IdentifyCommand.msdbd(port(16384)));
    }

    private static Port port(int inCapsuleDataSize) {
        return new Port(1, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, "192.168.10.1", "4420",
                inCapsuleDataSize, 1024);
    }
    @Test
    void cmicIsTheSameOnOneAndOnTwoPorts() {
        // Other daemons may serve the subsystem on ports this one cannot see: every controller reports the same.
        int onOne = Le.u8(identify(1, 0), IdentifyController.CMIC);
        target.addPort(dev.nvmf.target.core.subsystem.Port.rdma(2, 1, "10.0.0.2", "4420"));
        target.exposeSubsystem(2, SUBNQN);
        assertEquals(IdentifyController.CMIC_MULTI_PORT | IdentifyController.CMIC_MULTI_CONTROLLER
                | IdentifyController.CMIC_ANA, Le.u8(identify(1, 0), IdentifyController.CMIC));
        assertEquals(onOne, Le.u8(identify(1, 0), IdentifyController.CMIC));
    }

    @Test
    void theMoreBitIsSetExactlyForFailuresInTheErrorLog() {
        NvmeRequest r = h.admin.submitAsync(Cmd.admin(0x7E));
        int raw = Le.u16(r.response(), 14); // the CQE's status field, phase tag in bit 0
        assertEquals(1 << 14, raw & (1 << 14), "M (status field bit 14): more information in the error log");
        assertEquals(Status.INVALID_OPCODE, (raw >>> 1) & ~Status.MORE);
        MemorySegment log = h.admin.submit(Cmd.getLogPage(LogPages.LID_ERROR_INFORMATION, 0, 64, 0, false))
                .dataSegment();
        assertEquals(1, Le.u64(log, LogPages.ERROR_COUNT), "the failure is the newest entry");
        assertEquals(Status.INVALID_OPCODE << 1, Le.u16(log, LogPages.ERROR_STATUS), "logged without M");
        h.admin.completionOf(r);
        assertEquals(0, raw & 1, "no phase tag on fabrics");
        // A success has no M; a failure before Connect (no controller, no error log) has none either.
        assertEquals(0, h.admin.submit(Cmd.admin(Opcodes.ADMIN_KEEP_ALIVE)).status());
        CapsuleHost.Queue unbound = host(HOST2).open(0, 32);
        Completion early = unbound.submit(Cmd.identify(1, 0));
        assertEquals(Status.COMMAND_SEQUENCE_ERROR, early.status(), "exactly, without M");
    }

    @Test
    void asyncEventConfigurationAcceptsSmartWarningsAndNamespaceNotices() {
        // SPDK's host sets 11Fh (SMART critical warnings 4:0 and namespace attribute notices), as the kernel accepts.
        Completion set = h.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION, 0x11F));
        assertEquals(0, set.status(), set::toString);
        assertEquals(0x11F, h.admin.submit(Cmd.getFeature(Features.FID_ASYNC_EVENT_CONFIGURATION)).dw0());
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION, 0x1F)).status());
        // Not supported here: firmware activation notices (bit 9), discovery log changes (bit 31).
        h.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION, 0x11F | 1 << 9));
        h.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION, 1 << 31));
        assertEquals(0x1F, h.admin.submit(Cmd.getFeature(Features.FID_ASYNC_EVENT_CONFIGURATION)).dw0(),
                "a refused value changes nothing");
    }

    @Test
    void keepAliveOnAControllerWithoutKeepAliveIsKeepAliveTimeoutInvalid() {
        CapsuleHost noKato = host(HOST2);
        assertEquals(0, noKato.connectAdmin(SUBNQN, 0).status());
        noKato.admin.submit(Cmd.propertySet(dev.nvmf.target.nvme.Properties.CC, CapsuleHost.CC_ENABLE));
        Completion c = noKato.admin.expect(Status.KEEP_ALIVE_TIMEOUT_INVALID, Cmd.admin(Opcodes.ADMIN_KEEP_ALIVE));
        assertEquals(Status.SCT_GENERIC, c.sct());
        assertEquals(0x1A, c.sc());
        assertFalse(c.dnr(), "as the kernel target answers it");
        // Turning keep-alive off on a controller that had it: the same answer from then on.
        assertEquals(0, h.admin.submit(Cmd.admin(Opcodes.ADMIN_KEEP_ALIVE)).status());
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_KEEP_ALIVE_TIMER, 0)).status());
        h.admin.expect(Status.KEEP_ALIVE_TIMEOUT_INVALID, Cmd.admin(Opcodes.ADMIN_KEEP_ALIVE));
    }

    @Test
    void numberOfQueuesOnceAnIoQueueExistsIsCommandSequenceError() {
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_NUMBER_OF_QUEUES, (3 << 16) | 3)).status());
        CapsuleHost.Queue io = h.connectIo(1, 128);
        h.admin.expect(Status.COMMAND_SEQUENCE_ERROR, Cmd.setFeature(Features.FID_NUMBER_OF_QUEUES, (7 << 16) | 7));
        assertEquals((3 << 16) | 3, h.admin.submit(Cmd.getFeature(Features.FID_NUMBER_OF_QUEUES)).dw0(),
                "the grant stands");
        // Once the I/O queues are gone (a reset), the host may ask again.
        io.queue.close();
        assertEquals((7 << 16) | 7, h.admin.submit(Cmd.setFeature(Features.FID_NUMBER_OF_QUEUES, (7 << 16) | 7))
                .dw0());
    }

    @Test
    void arbitrationAndPowerManagementAreKeptAsSet() {
        assertEquals(0, h.admin.submit(Cmd.getFeature(Features.FID_ARBITRATION)).dw0(), "default");
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_ARBITRATION, 0x0403_0207)).status());
        assertEquals(0x0403_0207, h.admin.submit(Cmd.getFeature(Features.FID_ARBITRATION)).dw0(),
                "HPW 4, MPW 3, LPW 2, AB 7");
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_ARBITRATION, 0xF8)).status());
        assertEquals(0, h.admin.submit(Cmd.getFeature(Features.FID_ARBITRATION)).dw0(), "reserved bits 7:3 dropped");
        assertEquals(0, h.admin.submit(Cmd.getFeature(Features.FID_ARBITRATION | (1 << 8))).dw0(), "SEL default");
        assertEquals(Features.CAPABILITY_CHANGEABLE,
                h.admin.submit(Cmd.getFeature(Features.FID_ARBITRATION | (3 << 8))).dw0());

        assertEquals(0, h.admin.submit(Cmd.getFeature(Features.FID_POWER_MANAGEMENT)).dw0(), "power state 0");
        // NPSS is 0: power state 1 does not exist.
        h.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(Features.FID_POWER_MANAGEMENT, 1));
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_POWER_MANAGEMENT, 2 << 5)).status());
        assertEquals(2 << 5, h.admin.submit(Cmd.getFeature(Features.FID_POWER_MANAGEMENT)).dw0(), "workload hint 2");
        assertEquals(0, Le.u8(identify(1, 0), IdentifyController.NPSS), "one power state");
    }

    @Test
    void temperatureThresholdsAgreeWithSmartAndRaiseTheSmartEvent() {
        int under = Features.THSEL_UNDER << Features.THSEL_SHIFT;
        assertEquals(343, h.admin.submit(Cmd.getFeature(Features.FID_TEMPERATURE_THRESHOLD)).dw0(),
                "over threshold defaults to WCTEMP");
        assertEquals(under, h.admin.submit(Cmd.getFeature(Features.FID_TEMPERATURE_THRESHOLD).cdw(11, under)).dw0(),
                "under threshold 0 K, THSEL echoed");
        MemorySegment smart = h.admin.submit(Cmd.getLogPage(LogPages.LID_SMART_HEALTH, 0xFFFF_FFFF, 512, 0, false))
                .dataSegment();
        assertEquals(298, Le.u16(smart, LogPages.SMART_COMPOSITE_TEMPERATURE));
        assertEquals(0, Le.u8(smart, LogPages.SMART_CRITICAL_WARNING), "below WCTEMP: no warning");

        // Sensors 1-8 do not exist; THSEL 2 is reserved; TMPSEL Fh (all) is for Set Features only.
        h.admin.expect(Status.INVALID_FIELD, Cmd.getFeature(Features.FID_TEMPERATURE_THRESHOLD).cdw(11, 1 << 16));
        h.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(Features.FID_TEMPERATURE_THRESHOLD, (1 << 16) | 300));
        h.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(Features.FID_TEMPERATURE_THRESHOLD, (2 << 20) | 300));
        h.admin.expect(Status.INVALID_FIELD, Cmd.getFeature(Features.FID_TEMPERATURE_THRESHOLD).cdw(11, 0xF << 16));

        // The host enables temperature warnings and lowers the over threshold below 298 K: SMART event, warning set.
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                AsyncEvents.CONFIG_SMART_TEMPERATURE)).status());
        NvmeRequest aer = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_TEMPERATURE_THRESHOLD, (0xF << 16) | 290))
                .status());
        assertEquals(0x0002_0101, h.admin.completionOf(aer).dw0(), "SMART, temperature threshold, log page 02h");
        assertEquals(290, h.admin.submit(Cmd.getFeature(Features.FID_TEMPERATURE_THRESHOLD)).dw0());
        smart = h.admin.submit(Cmd.getLogPage(LogPages.LID_SMART_HEALTH, 0xFFFF_FFFF, 512, 0, false)).dataSegment();
        assertEquals(LogPages.SMART_WARNING_TEMPERATURE, Le.u8(smart, LogPages.SMART_CRITICAL_WARNING));
        // Back above: the warning clears; an under threshold at 298 K sets it again.
        h.admin.submit(Cmd.setFeature(Features.FID_TEMPERATURE_THRESHOLD, 343));
        smart = h.admin.submit(Cmd.getLogPage(LogPages.LID_SMART_HEALTH, 0xFFFF_FFFF, 512, 0, false)).dataSegment();
        assertEquals(0, Le.u8(smart, LogPages.SMART_CRITICAL_WARNING));
        NvmeRequest aer2 = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        h.admin.submit(Cmd.setFeature(Features.FID_TEMPERATURE_THRESHOLD, under | 298));
        assertEquals(0x0002_0101, h.admin.completionOf(aer2).dw0(), "unmasked: the SMART log was read without RAE");
    }

    @Test
    void supportedLogPagesListsEveryPageThisControllerHas() {
        Completion c = h.admin.submit(Cmd.getLogPage(LogPages.LID_SUPPORTED_LOG_PAGES, 0, 1024, 0, false));
        assertEquals(0, c.status(), c::toString);
        MemorySegment p = c.dataSegment();
        for (int lid = 0; lid <= 5; lid++) {
            assertEquals(LogPages.LIDS_SUPPORTED, Le.u32(p, lid * 4L), "LID " + lid);
            // ... and each one listed really answers.
            int size = lid == 0 ? 1024 : lid == 1 ? 128 * 64 : lid == 4 || lid == 5 ? 4096 : 512;
            assertEquals(0, h.admin.submit(Cmd.getLogPage(lid, 0xFFFF_FFFF, size, 0, true)).status(), "LID " + lid);
        }
        assertEquals(LogPages.LIDS_SUPPORTED, Le.u32(p, LogPages.LID_ASYMMETRIC_NAMESPACE_ACCESS * 4L), "LID 0Ch");
        assertEquals(0, h.admin.submit(Cmd.getLogPage(LogPages.LID_ASYMMETRIC_NAMESPACE_ACCESS, 0xFFFF_FFFF, 4096,
                0, true)).status(), "LID 0Ch");
        for (int lid = 6; lid < 256; lid++) {
            if (lid != LogPages.LID_ASYMMETRIC_NAMESPACE_ACCESS) {
                assertEquals(0, Le.u32(p, lid * 4L), "LID " + lid + " is not supported");
            }
        }
    }

    @Test
    void theChangedNamespaceListIsClearedOnlyByAReadThatSucceeds() {
        subsystem.addNamespace(NamespaceConfig.of(7, 512), new RamBackend(65536));
        // Host buffer too short, then an offset that is not dword aligned: both fail, the list keeps NSID 7.
        h.admin.expect(Status.DATA_SGL_LENGTH_INVALID,
                Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0, false).keyed(512));
        h.admin.expect(Status.INVALID_FIELD, Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 2, false));
        MemorySegment list = h.admin.submit(Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0, false))
                .dataSegment();
        assertEquals(7, Le.u32(list, 0));
        assertEquals(0, Le.u32(h.admin.submit(Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0,
                false)).dataSegment(), 0), "the successful read cleared it");
    }

    @Test
    void identifyNamespaceAndDescriptors() {
        MemorySegment ns = identify(0, 1);
        assertEquals(2048, Le.u64(ns, IdentifyNamespace.NSZE));
        assertEquals(2048, Le.u64(ns, IdentifyNamespace.NCAP));
        assertEquals(9, (Le.u32(ns, IdentifyNamespace.LBAF0) >>> 16) & 0xFF, "512-byte blocks");
        assertEquals(1, Le.u8(ns, IdentifyNamespace.NMIC));
        assertEquals(0, Le.u8(ns, IdentifyNamespace.NSATTR));
        assertEquals(0x10, Le.u8(ns, IdentifyNamespace.NGUID));
        assertEquals(0x00, Le.u8(ns, IdentifyNamespace.EUI64));
        assertEquals(0x77, Le.u8(ns, IdentifyNamespace.EUI64 + 7));
        MemorySegment ns2 = identify(0, 2);
        assertEquals(1024, Le.u64(ns2, IdentifyNamespace.NSZE));
        assertEquals(12, (Le.u32(ns2, IdentifyNamespace.LBAF0) >>> 16) & 0xFF, "4096-byte blocks");

        MemorySegment d = identify(3, 1);
        assertEquals(IdentifyNamespace.NIDT_EUI64, Le.u8(d, 0));
        assertEquals(8, Le.u8(d, 1));
        assertEquals(0x11, Le.u8(d, 4 + 1));
        assertEquals(IdentifyNamespace.NIDT_NGUID, Le.u8(d, 12));
        assertEquals(16, Le.u8(d, 13));
        assertEquals(IdentifyNamespace.NIDT_UUID, Le.u8(d, 32));
        assertEquals(0x6f, Le.u8(d, 36), "UUID most significant byte first");
        assertEquals(IdentifyNamespace.NIDT_CSI, Le.u8(d, 52));
        assertEquals(1, Le.u8(d, 53));
        assertEquals(0, Le.u8(d, 56), "CSI NVM");
        assertEquals(0, Le.u8(d, 57), "list ends");
        // Namespace 2 has only the CSI descriptor
        MemorySegment d2 = identify(3, 2);
        assertEquals(IdentifyNamespace.NIDT_CSI, Le.u8(d2, 0));
        assertEquals(0, Le.u8(d2, 5));
    }

    @Test
    void identifyNamespaceLists() {
        MemorySegment list = identify(2, 0);
        assertEquals(1, Le.u32(list, 0));
        assertEquals(2, Le.u32(list, 4));
        assertEquals(0, Le.u32(list, 8));
        assertEquals(2, Le.u32(identify(2, 1), 0), "only NSIDs above the one given");
        assertEquals(1, Le.u32(identify(7, 0), 0), "CNS 07h with CSI NVM");
        h.admin.expect(Status.INVALID_NAMESPACE, Cmd.identify(2, 0xFFFF_FFFE));
        h.admin.expect(Status.INVALID_FIELD, Cmd.identify(7, 0).cdw(11, 2 << 24));
    }

    @Test
    void identifyEdgeCases() {
        // Inactive but valid NSID: zeroes, success
        MemorySegment inactive = identify(0, 9);
        assertEquals(0, Le.u64(inactive, 0));
        h.admin.expect(Status.INVALID_NAMESPACE, Cmd.identify(0, 0));
        h.admin.expect(Status.INVALID_NAMESPACE, Cmd.identify(0, 0xFFFF_FFFF));
        h.admin.expect(Status.INVALID_NAMESPACE, Cmd.identify(0, 5000));
        h.admin.expect(Status.INVALID_NAMESPACE, Cmd.identify(3, 9));
        h.admin.expect(Status.INVALID_FIELD, Cmd.identify(0x1F, 0));
        h.admin.expect(Status.DATA_SGL_LENGTH_INVALID, Cmd.identify(1, 0).keyed(1024));
        // What a VER 2.0 host also asks
        assertEquals(1, Le.u8(identify(8, 1), IdentifyNamespace.INDEP_NSTAT), "namespace ready");
        assertEquals(1, Le.u8(identify(8, 1), IdentifyNamespace.INDEP_NMIC));
        assertEquals(0, h.admin.submit(Cmd.identify(6, 0)).status());
        assertEquals(0, h.admin.submit(Cmd.identify(5, 1)).status());
        h.admin.expect(Status.INVALID_FIELD, Cmd.identify(6, 0).cdw(11, 1 << 24));
    }

    @Test
    void readOnlyNamespaceIsReportedWriteProtected() {
        subsystem.addNamespace(new NamespaceConfig(3, 512, true, null, null, 0), new RamBackend(65536));
        assertEquals(1, Le.u8(identify(0, 3), IdentifyNamespace.NSATTR));
    }

    @Test
    void errorLogRecordsFailuresNewestFirst() {
        CapsuleHost.Queue io = h.connectIo(1, 128);
        Completion bad = io.expect(Status.LBA_OUT_OF_RANGE, Cmd.read(1, 5000, 1, 512));
        h.admin.expect(Status.INVALID_OPCODE, Cmd.admin(0x7E));
        Completion c = h.admin.submit(Cmd.getLogPage(LogPages.LID_ERROR_INFORMATION, 0, 128 * 64, 0, false));
        MemorySegment log = c.dataSegment();
        assertEquals(2, Le.u64(log, LogPages.ERROR_COUNT), "newest first");
        assertEquals(0, Le.u16(log, LogPages.ERROR_SQID));
        assertEquals(Status.INVALID_OPCODE << 1, Le.u16(log, LogPages.ERROR_STATUS));
        assertEquals(1, Le.u64(log, 64 + LogPages.ERROR_COUNT));
        assertEquals(1, Le.u16(log, 64 + LogPages.ERROR_SQID));
        assertEquals(bad.cid(), Le.u16(log, 64 + LogPages.ERROR_CID));
        assertEquals(Status.LBA_OUT_OF_RANGE << 1, Le.u16(log, 64 + LogPages.ERROR_STATUS));
        assertEquals(5000, Le.u64(log, 64 + LogPages.ERROR_LBA));
        assertEquals(1, Le.u32(log, 64 + LogPages.ERROR_NSID));
        assertEquals(40, Le.u16(log, 64 + LogPages.ERROR_PARAMETER_LOCATION));
    }

    @Test
    void smartLogCountsRealIo() {
        CapsuleHost.Queue io = h.connectIo(1, 128);
        for (int i = 0; i < 3; i++) {
            assertEquals(0, io.submit(Cmd.write(1, i * 8, 8, new byte[4096])).status());
        }
        assertEquals(0, io.submit(Cmd.read(2, 0, 2, 8192)).status());
        MemorySegment all = h.admin.submit(Cmd.getLogPage(LogPages.LID_SMART_HEALTH, 0xFFFF_FFFF, 512, 0, false))
                .dataSegment();
        assertEquals(3, Le.u64(all, LogPages.SMART_HOST_WRITE_COMMANDS));
        assertEquals(1, Le.u64(all, LogPages.SMART_HOST_READ_COMMANDS));
        assertEquals(1, Le.u64(all, LogPages.SMART_DATA_UNITS_WRITTEN), "24 units of 512 B round up to 1 thousand");
        assertEquals(1, Le.u64(all, LogPages.SMART_DATA_UNITS_READ));
        assertEquals(100, Le.u8(all, LogPages.SMART_AVAILABLE_SPARE));
        MemorySegment ns2 = h.admin.submit(Cmd.getLogPage(LogPages.LID_SMART_HEALTH, 2, 512, 0, false))
                .dataSegment();
        assertEquals(0, Le.u64(ns2, LogPages.SMART_HOST_WRITE_COMMANDS), "per namespace");
        assertEquals(1, Le.u64(ns2, LogPages.SMART_HOST_READ_COMMANDS));
        h.admin.expect(Status.INVALID_NAMESPACE, Cmd.getLogPage(LogPages.LID_SMART_HEALTH, 9, 512, 0, false));
    }

    @Test
    void firmwareSlotEffectsAndLogPageWindowing() {
        MemorySegment fw = h.admin.submit(Cmd.getLogPage(LogPages.LID_FIRMWARE_SLOT, 0, 512, 0, false))
                .dataSegment();
        assertEquals(1, Le.u8(fw, LogPages.FIRMWARE_AFI));
        assertEquals("0.1.0", Le.asciiTrimmed(fw, LogPages.FIRMWARE_FRS1, 8));
        MemorySegment fx = h.admin.submit(Cmd.getLogPage(LogPages.LID_COMMANDS_SUPPORTED_EFFECTS, 0, 4096, 0,
                false)).dataSegment();
        assertEquals(1, Le.u32(fx, Opcodes.ADMIN_IDENTIFY * 4));
        assertEquals(0, Le.u32(fx, Opcodes.ADMIN_CREATE_IO_SQ * 4));
        assertEquals(3, Le.u32(fx, 1024 + Opcodes.IO_WRITE * 4), "write: supported, changes content");
        assertEquals(1, Le.u32(fx, 1024 + Opcodes.IO_READ * 4));
        // A window at an offset: the second half of the effects page
        MemorySegment tail = h.admin.submit(Cmd.getLogPage(LogPages.LID_COMMANDS_SUPPORTED_EFFECTS, 0, 2048, 1024,
                false)).dataSegment();
        assertEquals(3, Le.u32(tail, Opcodes.IO_WRITE * 4));
        h.admin.expect(Status.INVALID_FIELD, Cmd.getLogPage(LogPages.LID_FIRMWARE_SLOT, 0, 64, 2, false));
        h.admin.expect(Status.INVALID_FIELD, Cmd.getLogPage(LogPages.LID_FIRMWARE_SLOT, 0, 64, 4096, false));
        h.admin.expect(Status.INVALID_LOG_PAGE, Cmd.getLogPage(0x70, 0, 1024, 0, false));
        h.admin.expect(Status.INVALID_LOG_PAGE, Cmd.getLogPage(0xC0, 0, 512, 0, false));
        h.admin.expect(Status.DATA_SGL_LENGTH_INVALID,
                Cmd.getLogPage(LogPages.LID_FIRMWARE_SLOT, 0, 512, 0, false).keyed(256));
    }

    @Test
    void namespaceChangeRaisesAenAndChangedList() {
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE)).status());
        NvmeRequest aer = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        assertFalse(h.admin.isCompleted(aer), "held until an event");
        subsystem.addNamespace(NamespaceConfig.of(7, 512), new RamBackend(65536));
        Completion ev = h.admin.completionOf(aer);
        assertEquals(0, ev.status());
        assertEquals(0x00040002, ev.dw0(), "notice, namespace attribute changed, log page 04h");
        // A second change before the log is read: no second AEN (masked), but the list has both.
        NvmeRequest aer2 = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        subsystem.removeNamespace(2);
        assertFalse(h.admin.isCompleted(aer2));
        MemorySegment list = h.admin.submit(Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0, false))
                .dataSegment();
        assertEquals(2, Le.u32(list, 0));
        assertEquals(7, Le.u32(list, 4));
        assertEquals(0, Le.u32(list, 8));
        assertEquals(0, Le.u32(h.admin.submit(Cmd.getLogPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 0, 4096, 0,
                false)).dataSegment(), 0), "reading cleared it");
        // Read without RAE: unmasked, the next change completes the held request.
        subsystem.removeNamespace(7);
        assertEquals(0x00040002, h.admin.completionOf(aer2).dw0());
        h.admin.expect(Status.INVALID_NAMESPACE, Cmd.identify(3, 2));
    }

    @Test
    void noAenWithoutAsyncEventConfiguration() {
        NvmeRequest aer = h.admin.submitAsync(Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        subsystem.addNamespace(NamespaceConfig.of(7, 512), new RamBackend(65536));
        assertFalse(h.admin.isCompleted(aer));
        // Teardown completes held requests with Commands Aborted due to SQ Deletion.
        h.admin.queue.abortHeld();
        assertEquals(h.admin.logged(Status.ABORTED_SQ_DELETION), h.admin.completionOf(aer).status());
    }

    @Test
    void asyncEventRequestLimitAndAbort() {
        NvmeRequest[] held = new NvmeRequest[4];
        Cmd[] cmds = new Cmd[4];
        for (int i = 0; i < 4; i++) {
            cmds[i] = Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST);
            held[i] = h.admin.submitAsync(cmds[i]);
            assertFalse(h.admin.isCompleted(held[i]));
        }
        h.admin.expect(Status.ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED, Cmd.admin(Opcodes.ADMIN_ASYNC_EVENT_REQUEST));
        // Abort the second held AER: it completes with Abort Requested, Abort's DW0 bit 0 = 0 (aborted).
        Completion abort = h.admin.submit(Cmd.admin(Opcodes.ADMIN_ABORT).cdw(10, cmds[1].cid() << 16));
        assertEquals(0, abort.status());
        assertEquals(0, abort.dw0() & 1);
        assertEquals(h.admin.logged(Status.ABORT_REQUESTED), h.admin.completionOf(held[1]).status());
        // Anything else is "not aborted".
        assertEquals(1, h.admin.submit(Cmd.admin(Opcodes.ADMIN_ABORT).cdw(10, (0x4321 << 16) | 1)).dw0() & 1);
    }

    @Test
    void featuresSetAndGet() {
        // Number of queues: min(NSQR, NCQR) + 1 granted, capped at the subsystem's maximum (128)
        Completion nq = h.admin.submit(Cmd.setFeature(Features.FID_NUMBER_OF_QUEUES, (7 << 16) | 3));
        assertEquals(0, nq.status());
        assertEquals((3 << 16) | 3, nq.dw0());
        assertEquals((3 << 16) | 3, h.admin.submit(Cmd.getFeature(Features.FID_NUMBER_OF_QUEUES)).dw0());
        assertEquals((127 << 16) | 127, h.admin.submit(Cmd.setFeature(Features.FID_NUMBER_OF_QUEUES,
                (500 << 16) | 500)).dw0());
        h.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(Features.FID_NUMBER_OF_QUEUES, 0xFFFF));
        // Keep alive
        assertEquals(5000, h.admin.submit(Cmd.getFeature(Features.FID_KEEP_ALIVE_TIMER)).dw0());
        assertEquals(0, h.admin.submit(Cmd.setFeature(Features.FID_KEEP_ALIVE_TIMER, 15000)).status());
        assertEquals(15000, h.admin.submit(Cmd.getFeature(Features.FID_KEEP_ALIVE_TIMER)).dw0());
        // Async event configuration: no discovery log notices on an I/O controller
        h.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION, 1 << 31));
        h.admin.submit(Cmd.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION, 1 << 8));
        assertEquals(1 << 8, h.admin.submit(Cmd.getFeature(Features.FID_ASYNC_EVENT_CONFIGURATION)).dw0());
        // Volatile write cache
        assertEquals(1, h.admin.submit(Cmd.getFeature(Features.FID_VOLATILE_WRITE_CACHE)).dw0());
        h.admin.submit(Cmd.setFeature(Features.FID_VOLATILE_WRITE_CACHE, 0));
        assertEquals(0, h.admin.submit(Cmd.getFeature(Features.FID_VOLATILE_WRITE_CACHE)).dw0());
        // Host identifier: readable (128-bit only), never settable on fabrics
        Completion hid = h.admin.submit(Cmd.getFeature(Features.FID_HOST_IDENTIFIER).cdw(11, 1).keyed(16));
        assertArrayEquals(h.hostId, hid.data());
        h.admin.expect(Status.INVALID_FIELD, Cmd.getFeature(Features.FID_HOST_IDENTIFIER).keyed(16));
        h.admin.expect(Status.COMMAND_SEQUENCE_ERROR, Cmd.setFeature(Features.FID_HOST_IDENTIFIER, 1));
        // Unknown, saveable, bad select
        h.admin.expect(Status.INVALID_FIELD, Cmd.setFeature(0x7C, 0));
        h.admin.expect(Status.INVALID_FIELD, Cmd.getFeature(0x7C));
        h.admin.expect(Status.FEATURE_NOT_SAVEABLE, Cmd.setFeature(Features.FID_KEEP_ALIVE_TIMER | (1 << 31), 1));
        h.admin.expect(Status.INVALID_FIELD, Cmd.getFeature(Features.FID_KEEP_ALIVE_TIMER | (5 << 8)));
        assertEquals(Features.CAPABILITY_CHANGEABLE,
                h.admin.submit(Cmd.getFeature(Features.FID_KEEP_ALIVE_TIMER | (3 << 8))).dw0());
    }

    @Test
    void keepAliveAndUnsupportedOpcodes() {
        assertEquals(0, h.admin.submit(Cmd.admin(Opcodes.ADMIN_KEEP_ALIVE)).status());
        for (int op : new int[] {Opcodes.ADMIN_CREATE_IO_SQ, Opcodes.ADMIN_DELETE_IO_SQ, Opcodes.ADMIN_FORMAT_NVM,
                Opcodes.ADMIN_FIRMWARE_COMMIT, Opcodes.ADMIN_NAMESPACE_MANAGEMENT, 0xC1}) {
            h.admin.expect(Status.INVALID_OPCODE, Cmd.admin(op));
        }
    }
}
