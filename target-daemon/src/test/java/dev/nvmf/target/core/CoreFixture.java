package dev.nvmf.target.core;

import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.DiscoveryLog;

import org.junit.jupiter.api.AfterEach;

import java.util.UUID;

/** A target with one port, one subsystem and two namespaces (512 B and 4 KiB blocks), and a clock tests move. */
class CoreFixture {
    static final String SUBNQN = "nqn.2024-01.dev.nvmf:sub1";
    static final String HOST1 = "nqn.2014-08.org.nvmexpress:uuid:11111111-1111-1111-1111-111111111111";
    static final String HOST2 = "nqn.2014-08.org.nvmexpress:uuid:22222222-2222-2222-2222-222222222222";
    static final UUID NS1_UUID = UUID.fromString("6f1c7a3e-0000-4000-8000-000000000001");

    final long[] now = {1_000_000_000L};
    final NvmeTarget target = new NvmeTarget(TargetOptions.defaults(), () -> now[0]);
    final Subsystem subsystem;
    final RamBackend ram1 = new RamBackend(1 << 20);     // 2048 x 512 B
    final RamBackend ram2 = new RamBackend(4 << 20);     // 1024 x 4 KiB

    CoreFixture() {
        target.addPort(new Port(1, DiscoveryLog.TRTYPE_RDMA, DiscoveryLog.ADRFAM_IPV4, "192.168.10.1", "4420",
                8192, 1024));
        subsystem = target.addSubsystem(SubsystemConfig.of(SUBNQN, "SN0001").withAllowAnyHost(true));
        byte[] nguid = new byte[16];
        for (int i = 0; i < 16; i++) {
            nguid[i] = (byte) (0x10 + i);
        }
        subsystem.addNamespace(new NamespaceConfig(1, 512, false, NS1_UUID, nguid, 0x0011223344556677L), ram1);
        subsystem.addNamespace(NamespaceConfig.of(2, 4096), ram2);
        target.exposeSubsystem(1, SUBNQN);
    }

    @AfterEach
    void closeTarget() {
        target.close();
    }

    CapsuleHost host(String nqn) {
        return new CapsuleHost(target, nqn);
    }

    void advanceMillis(long ms) {
        now[0] += ms * 1_000_000L;
    }
}
