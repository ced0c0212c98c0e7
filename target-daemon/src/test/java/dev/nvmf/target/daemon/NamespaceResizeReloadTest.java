package dev.nvmf.target.daemon;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.LogPages;
import dev.nvmf.target.rdma.support.LogCapture;
import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.target.service.SdNotify;
import dev.nvmf.target.service.TargetService;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A reload (SIGHUP: {@link TargetService#requestReload}) revalidates the size of every file and block-device
 * namespace, as the kernel target's configfs {@code revalidate_size} and {@code nvmet_ns_revalidate} do: a grown
 * file reaches a connected host as a Namespace Attribute Changed event, and Identify Namespace reports the new NSZE,
 * even when the configuration file itself did not change. The host sends no Identify before the event: Identify
 * revalidates too, and the event must come from the reload.
 */
class NamespaceResizeReloadTest {
    static final String SUB = DaemonRuntimeTest.SUB;
    static final int MIB = 1 << 20;

    @TempDir
    Path dir;

    SoftFabric fabric;
    TargetMetrics metrics;
    DaemonRuntime runtime;
    TargetService service;
    Thread control;
    final AtomicInteger exit = new AtomicInteger(-1);
    final List<NvmeHost> hosts = new ArrayList<>();

    @BeforeEach
    void fabric() {
        fabric = SoftFabric.automatic();
        fabric.addDevice("t0", DaemonRuntimeTest.TARGET_IP);
        fabric.addDevice("h0", DaemonRuntimeTest.HOST_IP);
        metrics = new TargetMetrics();
        runtime = new DaemonRuntime(DaemonRuntime.Options.of(fabric), metrics);
    }

    @AfterEach
    void stop() throws Exception {
        if (service != null) {
            service.requestStop();
            control.join(20_000);
            assertEquals(ExitCodes.OK, exit.get(), "orderly stop");
        }
        hosts.forEach(NvmeHost::close);
    }

    /** Serves {@code yamlFile} as {@code serve} does, on its own control thread. */
    void serve(Path yamlFile) throws Exception {
        service = new TargetService(yamlFile, runtime, metrics,
                SdNotify.fromEnvironment(Map.of(), ProcessHandle.current().pid()), Duration.ofSeconds(10));
        var initial = ConfigLoader.load(yamlFile).config();
        control = new Thread(() -> exit.set(service.run(initial)), "control");
        control.start();
        NvmeHost.await(() -> runtime.transport() != null && runtime.healthy(), null, "daemon ready");
    }

    /**
     * A file of {@code bytes} and nvmf-target.yaml serving it as NSID 1 with no size key: the namespace is the whole
     * file, and follows it.
     */
    Path wholeFileNamespace(long bytes) throws Exception {
        Path img = dir.resolve("ns1.img");
        try (RandomAccessFile f = new RandomAccessFile(img.toFile(), "rw")) {
            f.setLength(bytes);
        }
        Files.writeString(dir.resolve("nvmf-target.yaml"), DaemonRuntimeTest.yaml("      - nsid: 1\n        file: " + img
                + "\n        buffered_io: true\n", ""));
        return img;
    }

    NvmeHost queue(int qid, int depth) {
        NvmeHost h = new NvmeHost(fabric, new InetSocketAddress(DaemonRuntimeTest.HOST_IP, 0),
                new InetSocketAddress(DaemonRuntimeTest.TARGET_IP, 4420), DaemonRuntimeTest.HOST, qid, depth);
        hosts.add(h);
        return h;
    }

    void reloadAndAwait(int appliedSoFar) {
        service.requestReload();
        NvmeHost.await(() -> metrics.registry().get("nvmf.config.reloads").tag("result", "applied").counter()
                .count() == appliedSoFar + 1, null, "reload " + (appliedSoFar + 1) + " applied");
    }

    @Test
    void aReloadAfterTheFileGrewTellsTheHostAndIdentifyShowsTheNewSize() throws Exception {
        Path img = wholeFileNamespace(4L * MIB);
        serve(dir.resolve("nvmf-target.yaml"));

        NvmeHost admin = queue(0, 32);
        admin.connectAdminAndEnable(SUB, 0);
        long blocksBefore = admin.namespaceSize(1);
        int blockSize = (int) (4L * MIB / blocksBefore);
        assertEquals(4L * MIB, blocksBefore * blockSize, "NSZE covers the 4 MiB file");
        assertEquals(0, admin.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE));
        int aer = admin.sendAsyncEventRequest();

        // A reload with nothing changed and the file unchanged tells the host nothing.
        reloadAndAwait(0);
        // A round trip on the admin queue after the reload: an event the reload raised would have come first.
        assertEquals(0, admin.setFeature(Features.FID_ASYNC_EVENT_CONFIGURATION,
                AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE));
        assertNull(dev.nvmf.target.rdma.support.Cqe.find(admin.rdma, aer), "no event for an unchanged size");

        // The operator grows the file (truncate -s 12M) and reloads, with the configuration file unchanged.
        try (RandomAccessFile f = new RandomAccessFile(img.toFile(), "rw")) {
            f.setLength(12L * MIB);
        }
        reloadAndAwait(1);
        assertEquals(AsyncEvents.NAMESPACE_CHANGED, admin.awaitResponseDw0(aer, Duration.ofSeconds(20)),
                "the AER completes with Namespace Attribute Changed (notice, log page 04h)");
        MemorySegment changed = admin.logPage(LogPages.LID_CHANGED_NAMESPACE_LIST, 4096);
        assertEquals(1, Le.u32(changed, 0), "changed namespace list names NSID 1");
        assertEquals(0, Le.u32(changed, 4));
        assertEquals(12L * MIB / blockSize, admin.namespaceSize(1), "Identify Namespace NSZE after the reload");

        // I/O beyond the old end now works through an I/O queue of the same controller.
        int cntlid = runtime.target().subsystem(SUB).controllers().get(0).cntlid();
        NvmeHost io = queue(1, 16);
        assertEquals(0, io.connect(SUB, cntlid, 15, 0), "I/O queue Connect");
        long beyondOldEnd = 8L * MIB / blockSize;
        DaemonRuntimeTest.assertWriteRead(io, 1, beyondOldEnd, 3);
    }

    /**
     * The operator's log names every resize once, whoever noticed it first: a host that rescans (Identify
     * Namespace revalidates on the poller) may see the new size before the reload reaches that namespace, as the
     * Linux host did in the lab after the event for another namespace of the subsystem.
     */
    @Test
    void aResizeThatIdentifyNoticedFirstIsLoggedOnce() throws Exception {
        Path img = wholeFileNamespace(4L * MIB);
        try (LogCapture log = new LogCapture("dev.nvmf.target")) {
            serve(dir.resolve("nvmf-target.yaml"));
            NvmeHost admin = queue(0, 32);
            admin.connectAdminAndEnable(SUB, 0);
            int blockSize = (int) (4L * MIB / admin.namespaceSize(1));
            try (RandomAccessFile f = new RandomAccessFile(img.toFile(), "rw")) {
                f.setLength(12L * MIB);
            }
            assertEquals(12L * MIB / blockSize, admin.namespaceSize(1), "Identify sees the grown file at once");
            reloadAndAwait(0);
            List<String> lines = log.containing("namespace 1: ");
            lines.removeIf(l -> !l.contains(" is now " + 12L * MIB + " bytes"));
            assertEquals(1, lines.size(), "one log line for the resize: " + log.containing("namespace 1"));
        }
    }
}
