package dev.nvmf.target.daemon;

import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.backend.rbd.CephTestCluster;
import dev.nvmf.target.backend.rbd.RbdBackend;
import dev.nvmf.target.backend.rbd.TestImages;
import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The whole daemon serving a Ceph RBD namespace: the YAML kind {@code rbd: {...}} as an operator writes it, loaded
 * with the file checks of {@code serve}, started on the soft fabric against the real single-node test cluster
 * ({@link CephTestCluster}), and used by an NVMe-level host: Connect, write and read back, Flush, Deallocate and Write
 * Zeroes; a resize of the image by another client reaching the host as a Namespace Attribute Changed event, the
 * changed namespace list and the new Identify size; reloads that keep the namespace when its backing is the same and
 * reopen it when the credentials change, or refuse whole when the new credentials are wrong; a stop that closes the
 * image. No log line carries the cephx key. Skipped with the reason where the cluster cannot run, failed with
 * {@code CI=true}.
 */
@ExtendWith(CephTestCluster.class)
class RbdNamespaceDaemonTest {
    static final String TARGET_IP = DaemonRuntimeTest.TARGET_IP;
    static final String HOST_IP = DaemonRuntimeTest.HOST_IP;
    static final String SUB = DaemonRuntimeTest.SUB;
    static final String HOST = DaemonRuntimeTest.HOST;
    static final long MiB = 1 << 20;

    static CephTestCluster.Cluster cluster;
    static TestImages images;

    @TempDir
    Path dir;

    SoftFabric fabric;
    DaemonRuntime runtime;
    final List<NvmeHost> hosts = new ArrayList<>();
    final List<String> logged = Collections.synchronizedList(new ArrayList<>());
    final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            logged.add(r.getMessage() + (r.getThrown() == null ? "" : " " + r.getThrown()));
        }

        @Override public void flush() { }
        @Override public void close() { }
    };

    @BeforeAll
    static void images() throws Exception {
        cluster = CephTestCluster.cluster();
        images = new TestImages(cluster);
    }

    @AfterAll
    static void removeImages() {
        if (images != null) {
            images.close();
        }
    }

    @BeforeEach
    void fabric() {
        Logger.getLogger("dev.nvmf").addHandler(capture);
        fabric = SoftFabric.automatic();
        fabric.addDevice("t0", TARGET_IP);
        fabric.addDevice("h0", HOST_IP);
        runtime = new DaemonRuntime(DaemonRuntime.Options.of(fabric), new TargetMetrics());
    }

    @AfterEach
    void cleanUp() {
        runtime.stop(Duration.ofSeconds(30));
        hosts.forEach(NvmeHost::close);
        Logger.getLogger("dev.nvmf").removeHandler(capture);
    }

    /**
     * The file an operator writes, as {@link DaemonRuntimeTest#yaml}: namespace 1 is {@code image} as {@code id} with
     * {@code keyring} and the cluster's ceph.conf, then {@code extra} keys of namespace 1 and {@code moreNamespaces}.
     */
    static String yaml(String image, String id, Path keyring, String extra, String moreNamespaces) {
        return DaemonRuntimeTest.yaml("""
                      - nsid: 1
                        rbd:
                          pool: %s
                          image: %s
                          conf: %s
                          id: %s
                          keyring: %s
                          connect_timeout: 10
                """.formatted(cluster.pool(), image, cluster.conf(), id, keyring) + extra + moreNamespaces, "");
    }

    static String yaml(String image) {
        return yaml(image, cluster.clientId(), cluster.clientKeyring(), "", "");
    }

    TargetConfig load(String text) throws Exception {
        Path f = dir.resolve("nvmf-target.yaml");
        Files.writeString(f, text);
        return ConfigLoader.load(f).config(); // the checks of serve and check-config, conf and keyring included
    }

    NvmeHost[] connectController() {
        NvmeHost admin = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0),
                new InetSocketAddress(TARGET_IP, 4420), HOST, 0, 32);
        hosts.add(admin);
        admin.connectAdminAndEnable(SUB, 0);
        int cntlid = runtime.target().subsystem(SUB).controllers().get(0).cntlid();
        NvmeHost io = new NvmeHost(fabric, new InetSocketAddress(HOST_IP, 0), new InetSocketAddress(TARGET_IP, 4420),
                HOST, 1, 32);
        hosts.add(io);
        assertEquals(0, io.connect(SUB, cntlid, 31, 0), "I/O queue Connect");
        return new NvmeHost[] {admin, io};
    }

    static byte[] read(NvmeHost io, long slba, int bytes) {
        Object[] r = io.read(1, slba, bytes, 512);
        assertEquals(0, (int) r[0], () -> "read at " + slba + ": " + Status.describe((int) r[0]));
        return ((MemorySegment) r[1]).toArray(JAVA_BYTE);
    }

    BlockBackend served() {
        return runtime.target().subsystem(SUB).namespace(1).backend();
    }

    /** The cephx key of the test user, as its keyring file holds it. */
    static String key(Path keyring) throws Exception {
        Matcher m = Pattern.compile("key\\s*=\\s*(\\S+)").matcher(Files.readString(keyring));
        assertTrue(m.find(), "a key in " + keyring);
        return m.group(1);
    }

    void assertNoKeyLogged() throws Exception {
        for (Path keyring : List.of(cluster.clientKeyring(), cluster.readOnlyClientKeyring(), cluster.adminKeyring())) {
            String key = key(keyring);
            synchronized (logged) {
                for (String line : logged) {
                    assertFalse(line.contains(key), "a log line carries a cephx key: " + line);
                }
            }
        }
    }

    @Test
    void aHostUsesAnRbdNamespaceAndSeesTheImageResized() throws Exception {
        String image = images.create("daemon", 64 * MiB);
        runtime.start(load(yaml(image)));
        assertTrue(served() instanceof RbdBackend, "namespace 1 is served by librbd: " + served().describe());
        assertEquals("rbd:" + cluster.pool() + "/" + image, served().describe());
        NvmeHost[] c = connectController();
        NvmeHost admin = c[0];
        NvmeHost io = c[1];
        assertArrayEquals(new int[] {1}, admin.activeNamespaces());
        assertEquals(64 * MiB / 512, admin.namespaceSize(1), "Identify NSZE: the image's size in 512-byte blocks");

        // Write, read back, flush.
        byte[] data = DaemonRuntimeTest.pattern(8192, 5);
        assertEquals(0, io.write(1, 2048, data, 512), "write");
        assertArrayEquals(data, read(io, 2048, 8192), "read back what was written");
        assertEquals(0, io.flush(1), "flush (rbd_aio_flush)");
        // Deallocate and Write Zeroes: the blocks read back as zeroes, their neighbours keep their data.
        assertEquals(0, io.deallocate(1, 2048, 4), "Dataset Management, deallocate (rbd_aio_discard)");
        byte[] after = read(io, 2048, 8192);
        assertArrayEquals(new byte[2048], java.util.Arrays.copyOfRange(after, 0, 2048), "deallocated: zeroes");
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 2048, 8192),
                java.util.Arrays.copyOfRange(after, 2048, 8192), "the blocks after the range keep their data");
        assertEquals(0, io.writeZeroes(1, 2052, 4), "Write Zeroes (rbd_aio_write_zeroes)");
        assertArrayEquals(new byte[4096], java.util.Arrays.copyOfRange(read(io, 2048, 8192), 0, 4096));
        // The last block of the image and one past it.
        assertEquals(0, io.write(1, 64 * MiB / 512 - 1, DaemonRuntimeTest.pattern(512, 9), 512));
        assertEquals(Status.describe(Status.LBA_OUT_OF_RANGE | Status.MORE),
                Status.describe(io.write(1, 64 * MiB / 512, DaemonRuntimeTest.pattern(512, 9), 512)));

        // Another client grows the image: the host hears of it without asking.
        assertEquals(0, admin.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE));
        int aer = admin.sendAsyncEventRequest();
        images.resize(image, 96 * MiB);
        Cqe event = admin.awaitResponse(aer, Duration.ofSeconds(60));
        assertEquals(0, event.status(), "the AER completes: Namespace Attribute Changed (the only notice enabled)");
        MemorySegment changed = admin.logPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 4096);
        assertEquals(1, Le.u32(changed, 0), "the changed namespace list names NSID 1");
        assertEquals(0, Le.u32(changed, 4));
        assertEquals(96 * MiB / 512, admin.namespaceSize(1), "Identify NSZE follows the image");
        byte[] beyond = DaemonRuntimeTest.pattern(4096, 11);
        assertEquals(0, io.write(1, 64 * MiB / 512 + 8, beyond, 512), "a block of the grown part");
        assertArrayEquals(beyond, read(io, 64 * MiB / 512 + 8, 4096));

        // And shrinks it: the blocks past the new end are out of range.
        int aer2 = admin.sendAsyncEventRequest();
        images.resize(image, 32 * MiB);
        assertEquals(0, admin.awaitResponse(aer2, Duration.ofSeconds(60)).status());
        assertEquals(32 * MiB / 512, admin.namespaceSize(1));
        Object[] r = io.read(1, 32 * MiB / 512, 512, 512);
        assertEquals(Status.describe(Status.LBA_OUT_OF_RANGE | Status.MORE), Status.describe((int) r[0]));
        assertArrayEquals(java.util.Arrays.copyOfRange(data, 4096, 8192),
                java.util.Arrays.copyOfRange(read(io, 2048, 8192), 4096, 8192), "the data below the new end stays");
        assertEquals(1, runtime.target().subsystem(SUB).controllers().size(), "the controller stayed connected");

        BlockBackend backend = served();
        runtime.stop(Duration.ofSeconds(30));
        assertClosed(backend);
        assertNoKeyLogged();
    }

    /** A closed RbdBackend refuses new operations with -ENODEV (before any librbd call). */
    static void assertClosed(BlockBackend backend) throws Exception {
        CompletableFuture<Integer> result = new CompletableFuture<>();
        try (Arena a = Arena.ofConfined()) {
            backend.read(0, a.allocate(512), 512, null, (attachment, rc) -> result.complete(rc));
            assertEquals(-Errno.ENODEV, (int) result.get(10, TimeUnit.SECONDS), "the image was closed");
        }
    }

    @Test
    void reloadsKeepTheImageWhenItsBackingIsTheSameAndReopenItWhenTheCredentialsChange() throws Exception {
        String image = images.create("reload", 16 * MiB);
        TargetConfig before = load(yaml(image));
        runtime.start(before);
        NvmeHost[] c = connectController();
        byte[] data = DaemonRuntimeTest.pattern(4096, 3);
        assertEquals(0, c[1].write(1, 0, data, 512));
        BlockBackend first = served();

        // A reload that adds a RAM namespace leaves the RBD one alone: the same client, the same image handle.
        TargetConfig withRam = load(yaml(image, cluster.clientId(), cluster.clientKeyring(), "",
                "      - nsid: 2\n        ram_size: 1MiB\n"));
        runtime.apply(ConfigDiff.between(before, withRam), withRam);
        assertSame(first, served(), "same backing: the namespace is kept");
        assertArrayEquals(new int[] {1, 2}, c[0].activeNamespaces());

        // Wrong credentials (the read-only user's keyring for the read-write user): refused whole, nothing changes.
        TargetConfig wrongKey = load(yaml(image, cluster.clientId(), cluster.readOnlyClientKeyring(), "",
                "      - nsid: 2\n        ram_size: 1MiB\n"));
        Exception refused = assertThrows(Exception.class,
                () -> runtime.apply(ConfigDiff.between(withRam, wrongKey), wrongKey));
        assertTrue(refused.getMessage().contains("rbd:" + cluster.pool() + "/" + image), refused.getMessage());
        assertSame(first, served(), "the running namespace keeps serving");
        assertArrayEquals(data, read(c[1], 0, 4096));

        // Another user (read-only caps, read_only: true): the namespace is reopened as that client.
        TargetConfig readOnly = load(yaml(image, cluster.readOnlyClientId(), cluster.readOnlyClientKeyring(),
                "        read_only: true\n", "      - nsid: 2\n        ram_size: 1MiB\n"));
        runtime.apply(ConfigDiff.between(withRam, readOnly), readOnly);
        BlockBackend second = served();
        assertNotSame(first, second, "a credentials change reopens the namespace");
        assertTrue(second.readOnly());
        assertArrayEquals(data, read(c[1], 0, 4096), "the same image, read by the other user");
        assertEquals(Status.describe(Status.NAMESPACE_WRITE_PROTECTED | Status.MORE),
                Status.describe(c[1].write(1, 0, data, 512)));
        NvmeHost.await(() -> {
            CompletableFuture<Integer> rc = new CompletableFuture<>();
            try (Arena a = Arena.ofConfined()) {
                first.read(0, a.allocate(512), 512, null, (x, r) -> rc.complete(r));
                return rc.join() == -Errno.ENODEV;
            }
        }, null, "the old client is closed on the backend agent", Duration.ofSeconds(60));
        assertEquals(1, runtime.target().subsystem(SUB).controllers().size(), "the controller stayed connected");
        runtime.stop(Duration.ofSeconds(30));
        assertClosed(second);
        assertNoKeyLogged();
    }
}
