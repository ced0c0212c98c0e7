package dev.nvmf.target.core;

import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.IdentifyController;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.Status;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Connect, Property Get/Set and Disconnect at the capsule level (NVMe-oF 1.1, 3.3-3.5). */
class FabricsCommandsTest extends CoreFixture {
    private static final int IPO_DATA = 1 << 16;

    @Test
    void adminConnectCreatesDynamicControllerAndReturnsCntlid() {
        CapsuleHost h = host(HOST1);
        Completion c = h.connectAdmin(SUBNQN, 5000);
        assertEquals(Status.SUCCESS, c.status());
        assertEquals(1, c.dw0() & 0xFFFF, "first CNTLID of the default range");
        assertEquals(0, c.sqid());
        assertEquals(1, c.sqhd(), "SQ head advanced past the Connect");
        assertEquals(1, subsystem.controllers().size());
    }

    @Test
    void commandsBeforeConnectAreCommandSequenceErrors() {
        CapsuleHost h = host(HOST1);
        CapsuleHost.Queue q = h.open(0, 32);
        q.expect(Status.COMMAND_SEQUENCE_ERROR, Cmd.identify(1, 0));
        q.expect(Status.COMMAND_SEQUENCE_ERROR, Cmd.propertyGet(Properties.CAP, true));
        // Connect afterwards still works: the refusal did not poison the queue.
        assertEquals(0, q.submit(Cmd.connect(0, 31, 0, h.hostId, 0xFFFF, SUBNQN, HOST1)).status());
    }

    @Test
    void connectFailuresCarryExactStatusAndIpo() {
        CapsuleHost h = host(HOST1);
        byte[] id = h.hostId;
        // RECFMT != 0: Incompatible Format
        CapsuleHost.Queue q = h.open(0, 32);
        q.expect(Status.CONNECT_INCOMPATIBLE_FORMAT,
                Cmd.connect(0, 31, 0, id, 0xFFFF, SUBNQN, HOST1).u16(FabricsCommand.CONNECT_RECFMT, 1));
        // QID not the transport's queue id: IPO 42 in the SQE
        Completion c = q.expect(Status.CONNECT_INVALID_PARAMETERS, Cmd.connect(3, 31, 0, id, 0xFFFF, SUBNQN, HOST1));
        assertEquals(42, c.dw0());
        // SQSIZE 0: IPO 44
        c = q.expect(Status.CONNECT_INVALID_PARAMETERS, Cmd.connect(0, 0, 0, id, 0xFFFF, SUBNQN, HOST1));
        assertEquals(44, c.dw0());
        // Admin SQSIZE above the admin depth (32 entries)
        CapsuleHost.Queue big = h.open(0, 64);
        c = big.expect(Status.CONNECT_INVALID_PARAMETERS, Cmd.connect(0, 32, 0, id, 0xFFFF, SUBNQN, HOST1));
        assertEquals(44, c.dw0());
        // Admin CNTLID not FFFFh: IPO 16 in the data
        c = q.expect(Status.CONNECT_INVALID_PARAMETERS, Cmd.connect(0, 31, 0, id, 5, SUBNQN, HOST1));
        assertEquals(IPO_DATA | 16, c.dw0());
        // Unknown subsystem: IPO 256 in the data
        c = q.expect(Status.CONNECT_INVALID_PARAMETERS, Cmd.connect(0, 31, 0, id, 0xFFFF, "nqn.x:none", HOST1));
        assertEquals(IPO_DATA | 256, c.dw0());
        // Unterminated SUBNQN
        Cmd bad = Cmd.connect(0, 31, 0, id, 0xFFFF, SUBNQN, HOST1);
        java.util.Arrays.fill(bad.hostData, 256, 512, (byte) 'a');
        c = q.expect(Status.CONNECT_INVALID_PARAMETERS, bad);
        assertEquals(IPO_DATA | 256, c.dw0());
        // Connect data shorter than 1024 bytes
        Cmd shortData = Cmd.connect(0, 31, 0, id, 0xFFFF, SUBNQN, HOST1);
        shortData.data(java.util.Arrays.copyOf(shortData.hostData, 512));
        q.expect(Status.DATA_SGL_LENGTH_INVALID, shortData);
        assertTrue(subsystem.controllers().isEmpty(), "no failed Connect left a controller behind");
    }

    @Test
    void connectToSubsystemNotExposedOnThisPortIsInvalidParameters() {
        target.addPort(dev.nvmf.target.core.subsystem.Port.rdma(2, 1, "10.0.0.2", "4420"));
        CapsuleHost h = host(HOST1);
        h.portId = 2;
        Completion c = h.connectAdmin(SUBNQN, 0);
        assertEquals(Status.CONNECT_INVALID_PARAMETERS, c.status());
        assertEquals(IPO_DATA | 256, c.dw0());
        // An unknown port id from the transport is refused the same way.
        h.portId = 77;
        assertEquals(IPO_DATA | 256, h.connectAdmin(SUBNQN, 0).dw0());
    }

    @Test
    void hostNotOnAllowListIsInvalidHost() {
        subsystem.allowAnyHost(false);
        subsystem.allowHost(HOST2);
        Completion c = host(HOST1).connectAdmin(SUBNQN, 0);
        assertEquals(Status.CONNECT_INVALID_HOST, c.status());
        assertEquals(Status.SCT_COMMAND_SPECIFIC, c.sct());
        assertEquals(0x84, c.sc());
        assertTrue(c.dnr());
        assertEquals(IPO_DATA | 512, c.dw0());
        assertEquals(0, host(HOST2).connectAdmin(SUBNQN, 0).status());
    }

    @Test
    void secondConnectOnAConnectedQueueIsControllerBusy() {
        CapsuleHost h = host(HOST1);
        h.connectAdmin(SUBNQN, 0);
        h.admin.expect(Status.CONNECT_CONTROLLER_BUSY, Cmd.connect(0, 31, 0, h.hostId, 0xFFFF, SUBNQN, HOST1));
    }

    @Test
    void ioConnectValidations() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        byte[] id = h.hostId;
        // Unknown CNTLID: IPO 16 in the data
        Completion c = h.open(1, 128).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(1, 127, 0, id, h.cntlid + 7, SUBNQN, HOST1));
        assertEquals(IPO_DATA | 16, c.dw0());
        // Another host naming this host's controller: IPO 16
        c = h.open(1, 128).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(1, 127, 0, id, h.cntlid, SUBNQN, HOST2));
        assertEquals(IPO_DATA | 16, c.dw0());
        // A different HOSTID: IPO 0 in the data
        c = h.open(1, 128).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(1, 127, 0, new byte[16], h.cntlid, SUBNQN, HOST1));
        assertEquals(IPO_DATA, c.dw0());
        // SQSIZE above MQES (port max 1024 entries -> MQES 1023)
        c = h.open(1, 2048).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(1, 1024, 0, id, h.cntlid, SUBNQN, HOST1));
        assertEquals(44, c.dw0());
        // SQSIZE larger than the transport's queue
        c = h.open(1, 16).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(1, 127, 0, id, h.cntlid, SUBNQN, HOST1));
        assertEquals(44, c.dw0());
        // QID above the queues granted by Set Features Number of Queues
        assertEquals(0, h.admin.submit(Cmd.setFeature(0x07, (1 << 16) | 1)).status());
        c = h.open(3, 128).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(3, 127, 0, id, h.cntlid, SUBNQN, HOST1));
        assertEquals(42, c.dw0());
        // A good one, then the same qid again: Controller Busy
        h.connectIo(1, 128);
        h.open(1, 128).expect(Status.CONNECT_CONTROLLER_BUSY, Cmd.connect(1, 127, 0, id, h.cntlid, SUBNQN, HOST1));
    }

    @Test
    void ioConnectToADisabledControllerIsCommandSequenceError() {
        CapsuleHost h = host(HOST1);
        h.connectAdmin(SUBNQN, 0);
        h.open(1, 128).expect(Status.COMMAND_SEQUENCE_ERROR,
                Cmd.connect(1, 127, 0, h.hostId, h.cntlid, SUBNQN, HOST1));
    }

    @Test
    void cntlidsComeFromTheConfiguredRangeAndRunOut() {
        var s = target.addSubsystem(SubsystemConfig.of("nqn.2024-01.dev.nvmf:small", "SN2")
                .withAllowAnyHost(true).withCntlidRange(10, 11));
        target.exposeSubsystem(1, s.nqn());
        assertEquals(10, host(HOST1).connectAdmin(s.nqn(), 0).dw0());
        assertEquals(11, host(HOST2).connectAdmin(s.nqn(), 0).dw0());
        Completion c = host("nqn.x:host3").connectAdmin(s.nqn(), 0);
        assertEquals(Status.CONNECT_CONTROLLER_BUSY, c.status());
    }

    @Test
    void theSubsystemsVersionIeeeOuiFirmwareAndMaxQidReachTheHost() {
        // kernel configfs attr_version, attr_ieee_oui, attr_firmware, attr_qid_max, attr_cntlid_min/max
        var s = target.addSubsystem(new SubsystemConfig("nqn.2024-01.dev.nvmf:custom", "SN9", "model-9", "fw-9",
                true, 100, 101, 2, Properties.version(1, 4, 0), 0x001B21));
        target.exposeSubsystem(1, s.nqn());
        CapsuleHost h = host(HOST1).connectAndEnable(s.nqn());
        assertEquals(100, h.cntlid, "from cntlid_min");
        assertEquals(0x0001_0400, h.admin.submit(Cmd.propertyGet(Properties.VS, false)).dw0(), "VS 1.4");
        MemorySegment id = h.admin.submit(Cmd.identify(1, 0)).dataSegment();
        assertEquals(0x0001_0400, Le.u32(id, IdentifyController.VER));
        assertEquals(0x21, Le.u8(id, IdentifyController.IEEE), "OUI least significant byte first");
        assertEquals(0x1B, Le.u8(id, IdentifyController.IEEE + 1));
        assertEquals(0x00, Le.u8(id, IdentifyController.IEEE + 2));
        assertEquals("fw-9", Le.asciiTrimmed(id, IdentifyController.FR, IdentifyController.FR_LENGTH));
        assertEquals("fw-9", Le.asciiTrimmed(h.admin.submit(Cmd.getLogPage(
                dev.nvmf.target.nvme.LogPages.LID_FIRMWARE_SLOT, 0, 512, 0, false)).dataSegment(),
                dev.nvmf.target.nvme.LogPages.FIRMWARE_FRS1, 8), "the firmware slot log");
        // max_qid 2: Number of Queues grants at most 2, and a Connect of qid 3 is Invalid Parameters (IPO 42).
        assertEquals((1 << 16) | 1, h.admin.submit(Cmd.setFeature(0x07, (9 << 16) | 9)).dw0());
        h.connectIo(2, 64);
        Completion c = h.open(3, 64).expect(Status.CONNECT_INVALID_PARAMETERS,
                Cmd.connect(3, 63, 0, h.hostId, h.cntlid, s.nqn(), HOST1));
        assertEquals(42, c.dw0());
        // The defaults: VER 2.0, no OUI.
        MemorySegment plain = host(HOST2).connectAndEnable(SUBNQN).admin.submit(Cmd.identify(1, 0)).dataSegment();
        assertEquals(Properties.VERSION_2_0, Le.u32(plain, IdentifyController.VER));
        assertEquals(0, Le.u8(plain, IdentifyController.IEEE) | Le.u8(plain, IdentifyController.IEEE + 1)
                | Le.u8(plain, IdentifyController.IEEE + 2));
    }

    @Test
    void propertyGetCapVsCcCsts() {
        CapsuleHost h = host(HOST1);
        h.connectAdmin(SUBNQN, 0);
        Completion cap = h.admin.submit(Cmd.propertyGet(Properties.CAP, true));
        long v = (cap.dw0() & 0xFFFF_FFFFL) | ((long) cap.dw1() << 32);
        assertEquals(1023, v & 0xFFFF, "MQES from the port's max queue size, 0's based");
        assertEquals(1, (v >>> 16) & 1, "CQR");
        assertEquals(15, (v >>> 24) & 0xFF, "TO 7.5 s");
        assertEquals(1, (v >>> 37) & 1, "CSS NVM");
        assertEquals(0, (v >>> 48) & 0xFF, "MPSMIN/MPSMAX 4 KiB");
        assertEquals(0x00020000, h.admin.submit(Cmd.propertyGet(Properties.VS, false)).dw0());
        assertEquals(0, h.admin.submit(Cmd.propertyGet(Properties.CC, false)).dw0());
        assertEquals(0, h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0());
        // Wrong size or unknown offsets: Invalid Field
        h.admin.expect(Status.INVALID_FIELD, Cmd.propertyGet(Properties.CAP, false));
        h.admin.expect(Status.INVALID_FIELD, Cmd.propertyGet(Properties.CC, true));
        h.admin.expect(Status.INVALID_FIELD, Cmd.propertyGet(0x40, false));
        h.admin.expect(Status.INVALID_FIELD, Cmd.propertyGet(Properties.CC, false).u8(40, 5));
        // Only CC is writable
        h.admin.expect(Status.INVALID_FIELD, Cmd.propertySet(Properties.CSTS, 1));
        h.admin.expect(Status.INVALID_FIELD, Cmd.propertySet(Properties.CAP, 1));
        h.admin.expect(Status.INVALID_FIELD, Cmd.propertySet(Properties.CC, 1).u8(40, 1));
    }

    @Test
    void adminCommandsBeforeEnableAreRefusedThenAccepted() {
        CapsuleHost h = host(HOST1);
        h.connectAdmin(SUBNQN, 0);
        h.admin.expect(Status.COMMAND_SEQUENCE_ERROR, Cmd.identify(1, 0));
        assertEquals(0, h.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE)).status());
        assertEquals(Properties.CSTS_RDY, h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0());
        assertEquals(0, h.admin.submit(Cmd.identify(1, 0)).status());
    }

    @Test
    void enableWithBadQueueEntrySizesSetsFatalStatus() {
        CapsuleHost h = host(HOST1);
        h.connectAdmin(SUBNQN, 0);
        assertEquals(0, h.admin.submit(Cmd.propertySet(Properties.CC, Properties.CC_EN)).status());
        assertEquals(Properties.CSTS_CFS, h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0());
        h.admin.expect(Status.COMMAND_SEQUENCE_ERROR, Cmd.identify(1, 0));
        // Reset (EN = 0) clears it; a correct enable then works.
        h.admin.submit(Cmd.propertySet(Properties.CC, 0));
        assertEquals(0, h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0());
        h.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE));
        assertEquals(Properties.CSTS_RDY, h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0());
    }

    @Test
    void shutdownReportsShstCompleteAndDropsIoQueues() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io = h.connectIo(1, 128);
        assertEquals(0, h.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE | (1 << 14))).status());
        int csts = h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0();
        assertEquals(Properties.CSTS_SHST_COMPLETE, csts & Properties.CSTS_SHST_MASK);
        assertEquals(0, csts & Properties.CSTS_RDY);
        assertEquals(1, io.transport.disconnectCount(), "I/O queue torn down");
        assertEquals(0, h.admin.transport.disconnectCount(), "admin queue stays");
    }

    @Test
    void resetDropsIoQueuesAndKeepsAdminQueue() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io = h.connectIo(1, 128);
        h.admin.submit(Cmd.propertySet(Properties.CC, 0));
        assertEquals(0, h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0());
        assertEquals(1, io.transport.disconnectCount());
        assertEquals(0, h.admin.transport.disconnectCount());
        // The transport drains the I/O queue; the qid becomes free for a new Connect after re-enable.
        io.queue.close();
        h.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE));
        h.connectIo(1, 128);
    }

    @Test
    void disconnectDropsAnIoQueueAndIsInvalidQueueTypeOnTheAdminQueue() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io1 = h.connectIo(1, 128);
        CapsuleHost.Queue io2 = h.connectIo(2, 128);
        assertEquals(0, io1.submit(Cmd.fabrics(Opcodes.FCTYPE_DISCONNECT)).status());
        assertEquals(1, io1.transport.disconnectCount());
        assertEquals(0, io2.transport.disconnectCount());
        io1.expect(Status.CONNECT_INCOMPATIBLE_FORMAT, Cmd.fabrics(Opcodes.FCTYPE_DISCONNECT).u16(40, 1));
        // On the admin queue: SCT 1, SC 85h Invalid Queue Type, DNR (NVMe-oF 1.1, 3.4); nothing is torn down.
        Completion c = h.admin.expect(Status.INVALID_QUEUE_TYPE, Cmd.fabrics(Opcodes.FCTYPE_DISCONNECT));
        assertEquals(Status.SCT_COMMAND_SPECIFIC, c.sct());
        assertEquals(0x85, c.sc());
        assertTrue(c.dnr());
        assertEquals(0, io2.transport.disconnectCount());
        assertEquals(0, h.admin.transport.disconnectCount());
        // Identify Controller says Disconnect is supported: OFCS bit 0.
        MemorySegment id = h.admin.submit(Cmd.identify(1, 0)).dataSegment();
        assertEquals(IdentifyController.OFCS_DISCONNECT, Le.u16(id, IdentifyController.OFCS));
        // Admin queue closes: the controller ends and its id is free again.
        io1.queue.close();
        io2.queue.close();
        h.admin.queue.close();
        assertTrue(subsystem.controllers().isEmpty());
    }

    @Test
    void discoveryControllerEnablesWithQueueEntrySizesZero() {
        // A discovery controller has no I/O queues: CC.IOSQES/IOCQES are not checked (kernel core.c,
        // nvmet_start_ctrl); an I/O controller with the same CC gets CFS (enableWithBadQueueEntrySizesSetsFatalStatus).
        CapsuleHost d = host(HOST1);
        assertEquals(0, d.connectAdmin(DiscoveryLog.DISCOVERY_NQN, 0).status());
        assertEquals(0, d.admin.submit(Cmd.propertySet(Properties.CC, Properties.CC_EN)).status());
        assertEquals(Properties.CSTS_RDY, d.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0());
        // The other CC checks still apply to it: MPS 1 (8 KiB pages) is fatal.
        CapsuleHost d2 = host(HOST2);
        assertEquals(0, d2.connectAdmin(DiscoveryLog.DISCOVERY_NQN, 0).status());
        d2.admin.submit(Cmd.propertySet(Properties.CC, Properties.CC_EN | (1 << Properties.CC_MPS_SHIFT)));
        assertEquals(Properties.CSTS_CFS, d2.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0());
    }

    /** A namespace whose backend holds its completions (flushes too) until released, and a host enabled on it. */
    private CapsuleHost hostWithSlowNamespace(ScriptedBackend slow) {
        subsystem.addNamespace(NamespaceConfig.of(5, 4096), slow);
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        slow.deferred = true;
        return h;
    }

    @Test
    void shutdownFlushesEveryNamespaceBeforeReportingComplete() throws Exception {
        ScriptedBackend slow = new ScriptedBackend(1 << 20);
        CapsuleHost h = hostWithSlowNamespace(slow);
        assertEquals(0, h.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE | (1 << 14))).status());
        int csts = h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0();
        assertEquals(Properties.CSTS_SHST_PROCESSING, csts & Properties.CSTS_SHST_MASK, "01b while flushing");
        assertEquals(0, csts & Properties.CSTS_RDY);
        assertEquals(1, slow.flushes, "the namespace's backend was asked to flush");
        slow.releaseOnAnotherThread();
        csts = h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0();
        assertEquals(Properties.CSTS_SHST_COMPLETE, csts & Properties.CSTS_SHST_MASK, "10b once flushed");
        slow.close();
    }

    @Test
    void aFlushFinishingAfterTheHostClearedShnReportsNothing() throws Exception {
        ScriptedBackend slow = new ScriptedBackend(1 << 20);
        CapsuleHost h = hostWithSlowNamespace(slow);
        h.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE | (1 << 14)));
        h.admin.submit(Cmd.propertySet(Properties.CC, 0)); // SHN cleared (and EN) before the flush ended
        assertEquals(0, h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0() & Properties.CSTS_SHST_MASK);
        slow.releaseOnAnotherThread();
        assertEquals(0, h.admin.submit(Cmd.propertyGet(Properties.CSTS, false)).dw0() & Properties.CSTS_SHST_MASK,
                "a stale flush does not report a shutdown nobody asked for any more");
        slow.close();
    }

    @Test
    void unknownFabricsTypesAndPropertyCommandsOnIoQueuesAreInvalidOpcode() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        h.admin.expect(Status.INVALID_OPCODE, Cmd.fabrics(0x05)); // Authentication Send: not supported
        h.admin.expect(Status.INVALID_OPCODE, Cmd.fabrics(0x33));
        CapsuleHost.Queue io = h.connectIo(1, 128);
        io.expect(Status.INVALID_OPCODE, Cmd.propertyGet(Properties.CAP, true));
    }

    @Test
    void sqHeadWrapsAndFlowControlDisableReportsFfff() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io = h.open(1, 4);
        assertEquals(1, io.submit(Cmd.connect(1, 3, 0, h.hostId, h.cntlid, SUBNQN, HOST1)).sqhd());
        int[] heads = new int[5];
        for (int i = 0; i < 5; i++) {
            heads[i] = io.submit(Cmd.admin(Opcodes.IO_FLUSH).nsid(1)).sqhd();
        }
        org.junit.jupiter.api.Assertions.assertArrayEquals(new int[] {2, 3, 0, 1, 2}, heads);
        CapsuleHost.Queue noFlow = h.open(2, 128);
        Completion c = noFlow.submit(Cmd.connect(2, 127, 0, h.hostId, h.cntlid, SUBNQN, HOST1)
                .u8(FabricsCommand.CONNECT_CATTR, FabricsCommand.CATTR_DISABLE_SQ_FLOW_CONTROL));
        assertEquals(0xFFFF, c.sqhd());
        assertEquals(0xFFFF, noFlow.submit(Cmd.admin(Opcodes.IO_FLUSH).nsid(1)).sqhd());
    }

    @Test
    void transportStatusAndBadFlagsAreAnsweredWithoutExecuting() {
        CapsuleHost h = host(HOST1).connectAndEnable(SUBNQN);
        CapsuleHost.Queue io = h.connectIo(1, 128);
        NvmeRequest r = new NvmeRequest(99);
        var arena = java.lang.foreign.Arena.ofAuto();
        var sqe = arena.allocate(64);
        sqe.copyFrom(Cmd.read(1, 0, 1, 512).sqe);
        r.bind(sqe, arena.allocate(16));
        r.transportStatus(Status.SGL_DESCRIPTOR_TYPE_INVALID);
        assertEquals(false, io.queue.begin(r));
        assertEquals(io.logged(Status.SGL_DESCRIPTOR_TYPE_INVALID), io.completionOf(r).status());
        io.expect(Status.INVALID_FIELD, Cmd.read(1, 0, 1, 512).flags(0)); // PRP, not SGL
        io.expect(Status.INVALID_FIELD, Cmd.read(1, 0, 1, 512).flags(0x41)); // fused
        assertNotEquals(0, h.admin.submit(Cmd.getLogPage(1, 0, 4096, 0, false)).data()[0], "errors logged");
    }
}
