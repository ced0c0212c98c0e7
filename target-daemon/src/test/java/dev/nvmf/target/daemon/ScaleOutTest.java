package dev.nvmf.target.daemon;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two daemons serve one subsystem NQN over one shared file (docs/scale-out.md): each from its own YAML, with
 * disjoint controller id ranges and its own ANA state. Seen from a host, both report the same subsystem (NQN,
 * serial, model, CMIC) and the same namespace (NSID, NGUID, UUID, size), which is what makes the Linux host join
 * them into one disk with two paths (kernel host core.c, {@code nvme_init_subsystem} and
 * {@code nvme_ns_ids_equal}); their controller ids never collide, so the host refuses neither path (it rejects a
 * controller whose id another path of the subsystem already has: {@code nvme_validate_cntlid}); data written through
 * one daemon reads back through the other.
 */
class ScaleOutTest {
    static final String SUB = "nqn.2024-01.dev.nvmf:scale-out";
    static final String HOST = DaemonRuntimeTest.HOST;
    static final String A_IP = "10.0.0.1";
    static final String B_IP = "10.0.0.3";
    static final String HOST_IP = "10.0.0.2";
    static final String NGUID = "7b0c9a1e5d3f4e2a8c6b1d0e9f8a7b6c";
    static final String UUID = "0b8d3c52-6a4e-4f7b-9d21-3e5c7a9b1f04";

    @TempDir
    Path dir;

    SoftFabric fabric;
    DaemonRuntime a;
    DaemonRuntime b;
    final List<NvmeHost> hosts = new ArrayList<>();

    @BeforeEach
    void fabric() {
        fabric = SoftFabric.automatic();
        fabric.addDevice("ta", A_IP);
        fabric.addDevice("tb", B_IP);
        fabric.addDevice("h0", HOST_IP);
        a = new DaemonRuntime(DaemonRuntime.Options.of(fabric), new TargetMetrics());
        b = new DaemonRuntime(DaemonRuntime.Options.of(fabric), new TargetMetrics());
    }

    @AfterEach
    void cleanUp() {
        a.stop(Duration.ofSeconds(5));
        b.stop(Duration.ofSeconds(5));
        hosts.forEach(NvmeHost::close);
    }

    /** One daemon's file: the same subsystem section but for the controller id range; its own port and state. */
    String yaml(String ip, int portId, int cntlidMin, int cntlidMax, String state, Path file) {
        return """
                hosts:
                  - nqn: %s
                subsystems:
                  - nqn: %s
                    serial: SCALEOUT0001
                    cntlid_min: %d
                    cntlid_max: %d
                    allowed_hosts: [%s]
                    namespaces:
                      - nsid: 1
                        file: %s
                        nguid: %s
                        uuid: %s
                ports:
                  - id: %d
                    traddr: %s
                    subsystems: [%s]
                    ana_groups:
                      - {grpid: 1, state: %s}
                metrics:
                  enabled: false
                """.formatted(HOST, SUB, cntlidMin, cntlidMax, HOST, file, NGUID, UUID, portId, ip, SUB, state);
    }

    TargetConfig load(String name, String text) throws Exception {
        Path f = dir.resolve(name);
        Files.writeString(f, text);
        return ConfigLoader.load(f).config();
    }

    NvmeHost admin(String ip) {
        NvmeHost h = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0), new InetSocketAddress(ip, 4420), HOST, 0,
                32);
        hosts.add(h);
        return h;
    }

    static byte[] bytes(MemorySegment s, long off, int len) {
        return s.asSlice(off, len).toArray(JAVA_BYTE);
    }

    @Test
    void twoDaemonsLookLikeOneSubsystemWithTwoPathsAndNeverShareAControllerId() throws Exception {
        Path shared = dir.resolve("shared.img");
        Files.write(shared, new byte[4 << 20]);
        a.start(load("a.yaml", yaml(A_IP, 1, 1, 4, "optimized", shared)));
        b.start(load("b.yaml", yaml(B_IP, 2, 5, 8, "non-optimized", shared)));

        // Four controllers on each daemon: each range is used up, and no id is handed out twice across the two.
        Set<Integer> ids = new HashSet<>();
        NvmeHost firstA = null;
        NvmeHost firstB = null;
        for (int i = 0; i < 4; i++) {
            NvmeHost ha = admin(A_IP);
            ha.connectAdminAndEnable(SUB, 0);
            NvmeHost hb = admin(B_IP);
            hb.connectAdminAndEnable(SUB, 0);
            firstA = firstA == null ? ha : firstA;
            firstB = firstB == null ? hb : firstB;
        }
        for (var c : a.target().subsystem(SUB).controllers()) {
            assertTrue(c.cntlid() >= 1 && c.cntlid() <= 4, "daemon A's id " + c.cntlid() + " in 1..4");
            assertTrue(ids.add(c.cntlid()));
        }
        for (var c : b.target().subsystem(SUB).controllers()) {
            assertTrue(c.cntlid() >= 5 && c.cntlid() <= 8, "daemon B's id " + c.cntlid() + " in 5..8");
            assertTrue(ids.add(c.cntlid()), "id " + c.cntlid() + " is daemon A's too");
        }
        assertEquals(8, ids.size());
        // A fifth controller on a daemon whose range is used up is refused (Controller Busy), not given an id the
        // other daemon may have.
        assertEquals(Status.describe(Status.CONNECT_CONTROLLER_BUSY),
                Status.describe(admin(A_IP).connect(SUB, 0xFFFF, 31, 0)));

        // Identify Controller: the same subsystem, a different controller.
        MemorySegment ca = firstA.identify(1, 0);
        MemorySegment cb = firstB.identify(1, 0);
        assertArrayEquals(bytes(ca, 4, 20), bytes(cb, 4, 20), "SN");
        assertEquals("SCALEOUT0001", Le.asciiTrimmed(ca, 4, 20));
        assertArrayEquals(bytes(ca, 24, 40), bytes(cb, 24, 40), "MN");
        assertArrayEquals(bytes(ca, 768, 256), bytes(cb, 768, 256), "SUBNQN");
        assertEquals(Le.u8(ca, 76), Le.u8(cb, 76), "CMIC");
        assertEquals(0b1011, Le.u8(ca, 76), "multi-port, multi-controller, ANA");
        assertNotEquals(Le.u16(ca, 78), Le.u16(cb, 78), "CNTLID");
        // Identify Namespace and its descriptors: the same namespace.
        MemorySegment na = firstA.identify(0, 1);
        MemorySegment nb = firstB.identify(0, 1);
        assertEquals(Le.u64(na, 0), Le.u64(nb, 0), "NSZE");
        assertArrayEquals(bytes(na, 104, 16), bytes(nb, 104, 16), "NGUID");
        assertEquals(NGUID, java.util.HexFormat.of().formatHex(bytes(na, 104, 16)));
        assertEquals(Le.u32(na, 92), Le.u32(nb, 92), "ANAGRPID");
        assertArrayEquals(bytes(firstA.identify(3, 1), 0, 64), bytes(firstB.identify(3, 1), 0, 64),
                "namespace identification descriptors (NGUID, UUID, CSI)");
        // Each daemon reports its own port's state of the group.
        assertEquals(0x01, Le.u8(firstA.logPage(0x0C, 4096), 32), "optimized through A");
        assertEquals(0x02, Le.u8(firstB.logPage(0x0C, 4096), 32), "non-optimized through B");

        // One medium: what A writes, B reads (both open the file O_DIRECT where the file system allows it).
        int cntlidA = a.target().subsystem(SUB).controllers().stream().mapToInt(c -> c.cntlid()).min().orElseThrow();
        int cntlidB = b.target().subsystem(SUB).controllers().stream().mapToInt(c -> c.cntlid()).min().orElseThrow();
        NvmeHost ioA = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0), new InetSocketAddress(A_IP, 4420), HOST,
                1, 16);
        hosts.add(ioA);
        assertEquals(0, ioA.connect(SUB, cntlidA, 15, 0));
        NvmeHost ioB = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0), new InetSocketAddress(B_IP, 4420), HOST,
                1, 16);
        hosts.add(ioB);
        assertEquals(0, ioB.connect(SUB, cntlidB, 15, 0));
        byte[] data = DaemonRuntimeTest.pattern(4096, 42);
        assertEquals(0, ioA.write(1, 16, data, 512));
        Object[] r = ioB.read(1, 16, 4096, 512);
        assertEquals(0, (int) r[0]);
        assertArrayEquals(data, ((MemorySegment) r[1]).toArray(JAVA_BYTE), "written through A, read through B");
    }
}
