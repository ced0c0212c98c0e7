package dev.nvmf.target.core;

import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Referral;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.IdentifyController;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Properties;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.List;

import static dev.nvmf.target.core.MultiHostTest.discoveryLog;
import static dev.nvmf.target.core.MultiHostTest.entries;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The discovery log as hosts that connect to what it lists use it (nvme connect-all, nvme-stas, NBFT boot): wildcard
 * ports, port-local entries, PLEO, referrals per port, ASQSZ and the discovery controller's MDTS.
 */
class DiscoveryLogTest extends CoreFixture {
    private static final String SUB_B = "nqn.2024-01.dev.nvmf:sub2";

    private static CapsuleHost enabledDiscoveryHost(NvmeTarget t, String hostNqn, int portId, InetAddress local) {
        CapsuleHost d = new CapsuleHost(t, hostNqn);
        d.portId = portId;
        d.localAddress = local;
        assertEquals(0, d.connectAdmin(DiscoveryLog.DISCOVERY_NQN, 0).status());
        assertEquals(0, d.admin.submit(Cmd.propertySet(Properties.CC, CapsuleHost.CC_ENABLE)).status());
        return d;
    }

    /** Port {@code id} on {@code address} exposing the fixture's subsystem, and a host that reached {@code local}. */
    private CapsuleHost portAndHost(int id, int adrfam, String address, String local) throws Exception {
        target.addPort(Port.rdma(id, adrfam, address, "4420"));
        target.exposeSubsystem(id, SUBNQN);
        return enabledDiscoveryHost(target, HOST1, id, InetAddress.getByName(local));
    }

    @Test
    void aWildcardPortIsListedWithTheAddressTheHostReached() throws Exception {
        CapsuleHost d = portAndHost(3, DiscoveryLog.ADRFAM_IPV4, "0.0.0.0", "10.1.2.3");
        MemorySegment log = discoveryLog(d);
        assertEquals(List.of(
                "3 3 " + DiscoveryLog.DISCOVERY_NQN + " 10.1.2.3:4420",
                "2 3 " + SUBNQN + " 10.1.2.3:4420"), entries(log), "never 0.0.0.0");
        assertEquals(DiscoveryLog.ADRFAM_IPV4, Le.u8(log, 2048 + DiscoveryLog.ADRFAM));
        // TRADDR is space padded after the address (NVMe-oF 1.1 figure 40: ASCII string).
        assertEquals(' ', (char) Le.u8(log, 2048 + DiscoveryLog.TRADDR + "10.1.2.3".length()));
    }

    @Test
    void anIpv6WildcardIsListedInCompressedForm() throws Exception {
        CapsuleHost d = portAndHost(4, DiscoveryLog.ADRFAM_IPV6, "::", "fd00:0:0:0:0:0:0:12");
        MemorySegment log = discoveryLog(d);
        assertEquals("2 4 " + SUBNQN + " fd00::12:4420", entries(log).get(1));
        assertEquals(DiscoveryLog.ADRFAM_IPV6, Le.u8(log, 2048 + DiscoveryLog.ADRFAM));
        // A host that reached the IPv6 wildcard over IPv4 is told the IPv4 address, with ADRFAM IPv4.
        CapsuleHost v4 = enabledDiscoveryHost(target, HOST2, 4, InetAddress.getByName("192.168.7.7"));
        MemorySegment log4 = discoveryLog(v4);
        assertEquals("2 4 " + SUBNQN + " 192.168.7.7:4420", entries(log4).get(1));
        assertEquals(DiscoveryLog.ADRFAM_IPV4, Le.u8(log4, 2048 + DiscoveryLog.ADRFAM));
    }

    @Test
    void aConcretePortAddressIsKeptAndAnUnknownLocalAddressChangesNothing() throws Exception {
        CapsuleHost d = enabledDiscoveryHost(target, HOST1, 1, InetAddress.getByName("10.9.9.9"));
        assertEquals("2 1 " + SUBNQN + " 192.168.10.1:4420", entries(discoveryLog(d)).get(1));
        target.addPort(Port.rdma(3, DiscoveryLog.ADRFAM_IPV4, "0.0.0.0", "4420"));
        target.exposeSubsystem(3, SUBNQN);
        CapsuleHost unknown = enabledDiscoveryHost(target, HOST2, 3, null);
        assertEquals("2 3 " + SUBNQN + " 0.0.0.0:4420", entries(discoveryLog(unknown)).get(1),
                "a transport that cannot say leaves the configured address");
    }

    private static final Referral R7 =
            new Referral(7, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, "10.7.7.7", "4420");
    private static final Referral R8 =
            new Referral(8, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, "10.8.8.8", "4420");

    private static Port port(int id, String address, String svcid, List<Referral> referrals, boolean allPorts) {
        return new Port(id, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, address, svcid,
                Port.DEFAULT_IN_CAPSULE_DATA_SIZE, Port.DEFAULT_MAX_QUEUE_SIZE, referrals, allPorts);
    }

    @Test
    void allPortsListsEveryPortUnlessTheHostAsksPortLocalEntriesOnly() throws Exception {
        target.addPort(port(1, "192.168.10.1", "4420", List.of(R7), true));
        target.addPort(port(2, "0.0.0.0", "4421", List.of(R8, R7), true));
        target.addSubsystem(SubsystemConfig.of(SUB_B, "SN2").withAllowAnyHost(true));
        target.exposeSubsystem(2, SUB_B);
        CapsuleHost d = enabledDiscoveryHost(target, HOST1, 1, InetAddress.getByName("192.168.10.1"));
        assertEquals(List.of(
                "3 1 " + DiscoveryLog.DISCOVERY_NQN + " 192.168.10.1:4420",
                "2 1 " + SUBNQN + " 192.168.10.1:4420",
                "2 2 " + SUB_B + " 192.168.10.1:4421",
                "1 7 " + DiscoveryLog.DISCOVERY_NQN + " 10.7.7.7:4420",
                "1 8 " + DiscoveryLog.DISCOVERY_NQN + " 10.8.8.8:4420"), entries(discoveryLog(d)),
                "every port; the wildcard port with the address the host reached; each referral once");
        // Get Log Page with LSP PLEO (bit 0): the host's port only.
        int numd = 8 * 1024 / 4 - 1;
        Completion pleo = d.admin.submit(Cmd.getLogPage(0x70, 0, 8 * 1024, 0, false)
                .cdw(10, 0x70 | (1 << 8) | (numd << 16)));
        assertEquals(0, pleo.status(), pleo::toString);
        assertEquals(List.of(
                "3 1 " + DiscoveryLog.DISCOVERY_NQN + " 192.168.10.1:4420",
                "2 1 " + SUBNQN + " 192.168.10.1:4420",
                "1 7 " + DiscoveryLog.DISCOVERY_NQN + " 10.7.7.7:4420"), entries(pleo.dataSegment()));
    }

    @Test
    void referralsBelongToTheirPortAndGoWithIt() throws Exception {
        target.addPort(port(2, "10.0.0.2", "4421", List.of(R8), false));
        CapsuleHost on1 = enabledDiscoveryHost(target, HOST1, 1, null);
        CapsuleHost on2 = enabledDiscoveryHost(target, HOST2, 2, null);
        assertEquals(List.of("3 1 " + DiscoveryLog.DISCOVERY_NQN + " 192.168.10.1:4420",
                "2 1 " + SUBNQN + " 192.168.10.1:4420"), entries(discoveryLog(on1)), "not port 2's referral");
        assertEquals(List.of("3 2 " + DiscoveryLog.DISCOVERY_NQN + " 10.0.0.2:4421",
                "1 8 " + DiscoveryLog.DISCOVERY_NQN + " 10.8.8.8:4420"), entries(discoveryLog(on2)));
        // A referral listed on every port, besides each port's own.
        target.addReferral(R7);
        assertEquals(List.of(R8, R7), target.referrals(), "every referral the target lists, once");
        assertEquals("1 7 " + DiscoveryLog.DISCOVERY_NQN + " 10.7.7.7:4420", entries(discoveryLog(on1)).get(2));
        // The port replaced without referrals: its referral goes with the old record.
        long before = target.discoveryGeneration();
        target.addPort(port(2, "10.0.0.2", "4421", List.of(), false));
        assertEquals(List.of(R7), target.referrals());
        assertEquals(before + 1, target.discoveryGeneration());
        target.removeReferral(R7);
        assertEquals(List.of(), target.referrals());
    }

    @Test
    void entriesCarryTheAdminQueueDepthAndTheControllerItsMdts() throws Exception {
        TargetOptions d = TargetOptions.defaults();
        NvmeTarget deep = new NvmeTarget(new TargetOptions(5, 128, d.keepAliveGranularity(), d.discoveryKatoMillis(),
                d.asyncEventLimit(), d.errorLogEntries(), d.capTimeout(), d.version()), () -> now[0]);
        try {
            deep.addPort(port(1, "192.168.10.1", "4420", List.of(new Referral(9, DiscoveryLog.TRTYPE_RDMA,
                    DiscoveryLog.ADRFAM_IPV4, "10.9.9.9", "4420")), false));
            deep.addSubsystem(SubsystemConfig.of(SUBNQN, "SN1").withAllowAnyHost(true));
            deep.exposeSubsystem(1, SUBNQN);
            CapsuleHost host = enabledDiscoveryHost(deep, HOST1, 1, null);
            MemorySegment log = discoveryLog(host);
            assertEquals(128, Le.u16(log, 1024 + DiscoveryLog.ASQSZ), "current discovery entry: max_aq_depth");
            assertEquals(128, Le.u16(log, 2048 + DiscoveryLog.ASQSZ), "subsystem entry: max_aq_depth");
            assertEquals(32, Le.u16(log, 3072 + DiscoveryLog.ASQSZ), "a referral's depth is unknown: the minimum");
            MemorySegment id = host.admin.submit(Cmd.identify(1, 0)).dataSegment();
            assertEquals(5, Le.u8(id, IdentifyController.MDTS), "keyed SGLs above 128 KiB are refused here too");
        } finally {
            deep.close();
        }
    }
}
