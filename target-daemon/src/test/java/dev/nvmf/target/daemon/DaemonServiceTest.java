package dev.nvmf.target.daemon;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.target.service.SdNotify;
import dev.nvmf.target.service.TargetRuntimeFactory;
import dev.nvmf.target.service.TargetService;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The whole daemon as {@code serve} runs it — {@link TargetService} (metrics endpoint, reload, stop) over
 * {@link DaemonRuntime} on the soft fabric — and a Prometheus scrape over HTTP after I/O.
 */
class DaemonServiceTest {
    static final String SUB = DaemonRuntimeTest.SUB;

    @TempDir
    Path dir;

    /** One sample line of the text exposition: name{labels} value. */
    record Sample(String name, Map<String, String> labels, double value) {}

    static List<Sample> parse(String text) {
        Pattern line = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})? (\\S+)$");
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");
        return text.lines().filter(l -> !l.startsWith("#") && !l.isBlank()).map(l -> {
            Matcher m = line.matcher(l);
            assertTrue(m.matches(), "not a sample line: " + l);
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(3) != null) {
                Matcher lm = label.matcher(m.group(3));
                while (lm.find()) {
                    labels.put(lm.group(1), lm.group(2));
                }
            }
            return new Sample(m.group(1), labels, Double.parseDouble(m.group(4)));
        }).toList();
    }

    static double value(List<Sample> samples, String name, Map<String, String> labels) {
        List<Sample> hits = samples.stream().filter(s -> s.name().equals(name)
                && s.labels().entrySet().containsAll(labels.entrySet())).toList();
        assertEquals(1, hits.size(), () -> name + labels + " matched " + hits);
        return hits.get(0).value();
    }

    static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void theFactoryIsFoundThroughServiceLoader() {
        List<String> names = ServiceLoader.load(TargetRuntimeFactory.class).stream()
                .map(p -> p.get().name()).toList();
        assertTrue(names.contains("rdma"), names.toString());
    }

    @Test
    void serveWithMetricsReloadAndStop() throws Exception {
        SoftFabric fabric = SoftFabric.automatic();
        fabric.addDevice("t0", DaemonRuntimeTest.TARGET_IP);
        fabric.addDevice("h0", DaemonRuntimeTest.HOST_IP);
        int metricsPort = freePort();
        String metricsYaml = "metrics:\n  enabled: true\n  listen: 127.0.0.1:" + metricsPort + "\n";
        Path file = dir.resolve("nvmf-target.yaml");
        Files.writeString(file, DaemonRuntimeTest.yaml(DaemonRuntimeTest.NS1, "")
                .replace("metrics:\n  enabled: false\n", metricsYaml));
        TargetMetrics metrics = new TargetMetrics();
        DaemonRuntime runtime = new DaemonRuntime(DaemonRuntime.Options.of(fabric), metrics);
        TargetService service = new TargetService(file, runtime, metrics,
                SdNotify.fromEnvironment(Map.of(), ProcessHandle.current().pid()), Duration.ofSeconds(10));
        AtomicInteger exit = new AtomicInteger(-1);
        var initial = ConfigLoader.load(file).config();
        Thread control = new Thread(() -> exit.set(service.run(initial)), "control");
        try {
            control.start();
            NvmeHost.await(() -> runtime.transport() != null && runtime.healthy(), null, "daemon ready");

            NvmeHost admin = new NvmeHost(fabric, new InetSocketAddress(DaemonRuntimeTest.HOST_IP, 0),
                    new InetSocketAddress(DaemonRuntimeTest.TARGET_IP, 4420), DaemonRuntimeTest.HOST, 0, 32);
            admin.connectAdminAndEnable(SUB, 0);
            int cntlid = runtime.target().subsystem(SUB).controllers().get(0).cntlid();
            NvmeHost io = new NvmeHost(fabric, new InetSocketAddress(DaemonRuntimeTest.HOST_IP, 0),
                    new InetSocketAddress(DaemonRuntimeTest.TARGET_IP, 4420), DaemonRuntimeTest.HOST, 1, 16);
            assertEquals(0, io.connect(SUB, cntlid, 15, 0));
            for (int i = 0; i < 3; i++) {
                assertEquals(0, io.write(1, i * 8L, DaemonRuntimeTest.pattern(4096, i), 512));
            }
            for (int i = 0; i < 2; i++) {
                assertEquals(0, (int) io.read(1, i * 8L, 4096, 512)[0]);
            }
            // Out of range: an I/O error for (nsid 1, read).
            assertTrue(0 != (int) io.read(1, 1L << 40, 4096, 512)[0]);

            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + metricsPort + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            List<Sample> s = parse(r.body());
            Map<String, String> write = Map.of("subsystem", SUB, "nsid", "1", "opcode", "write");
            Map<String, String> read = Map.of("subsystem", SUB, "nsid", "1", "opcode", "read");
            assertEquals(3 * 4096, value(s, "nvmf_io_bytes_total", write));
            assertEquals(2 * 4096, value(s, "nvmf_io_bytes_total", read));
            assertEquals(3, value(s, "nvmf_io_latency_seconds_count", write));
            assertEquals(3, value(s, "nvmf_io_latency_seconds_count", read), "two reads and one failed read");
            assertEquals(1, value(s, "nvmf_io_errors_total", read));
            assertEquals(0, value(s, "nvmf_io_errors_total", write));
            // Buckets: cumulative, the last finite bucket (1 s) holds every write; +Inf equals the count.
            Map<String, String> writeInf = new LinkedHashMap<>(write);
            writeInf.put("le", "+Inf");
            assertEquals(3, value(s, "nvmf_io_latency_seconds_bucket", writeInf));
            Map<String, String> writeOneSecond = new LinkedHashMap<>(write);
            writeOneSecond.put("le", "1.0");
            assertEquals(3, value(s, "nvmf_io_latency_seconds_bucket", writeOneSecond));
            long writeBuckets = s.stream().filter(x -> x.name().equals("nvmf_io_latency_seconds_bucket")
                    && x.labels().entrySet().containsAll(write.entrySet())).count();
            assertEquals(20, writeBuckets, "19 configured buckets and +Inf");
            assertEquals(1, value(s, "nvmf_controllers", Map.of("subsystem", SUB)));
            assertEquals(1, value(s, "nvmf_connected_hosts", Map.of("subsystem", SUB)));
            assertTrue(value(s, "nvmf_rdma_commands_received_total", Map.of()) >= 9);
            assertEquals(2, value(s, "nvmf_rdma_queues_open", Map.of()));
            assertEquals(0, value(s, "nvmf_queue_depth_in_use", Map.of()), "every command answered");
            // Three in-capsule writes; the reads' data went out as RDMA WRITEs (the failed one sent none).
            assertEquals(3, value(s, "nvmf_rdma_in_capsule_commands_total", Map.of()));
            assertTrue(value(s, "nvmf_rdma_writes_total", Map.of()) >= 2);
            // Zero copy (on by default): at most the two keyed reads; the first ones of a namespace go through a
            // buffer until its registration, made on the CM thread, is published.
            double zeroCopy = value(s, "nvmf_rdma_zero_copy_commands_total", Map.of());
            assertTrue(zeroCopy >= 0 && zeroCopy <= 2, "zero copy commands: " + zeroCopy);

            // Reload through the service: a bad file is refused, a good one adds a namespace.
            Files.writeString(file, "subsystems: [\n");
            service.requestReload();
            NvmeHost.await(() -> metrics.registry().get("nvmf.config.reloads").tag("result", "refused").counter()
                    .count() == 1, null, "bad reload refused");
            Files.writeString(file, DaemonRuntimeTest.yaml(DaemonRuntimeTest.NS1 + DaemonRuntimeTest.NS2, "")
                    .replace("metrics:\n  enabled: false\n", metricsYaml));
            service.requestReload();
            NvmeHost.await(() -> metrics.registry().get("nvmf.config.reloads").tag("result", "applied").counter()
                    .count() == 1, null, "good reload applied");
            assertEquals(List.of(1, 2), java.util.Arrays.stream(admin.activeNamespaces()).boxed().toList());
            assertEquals(0, io.write(2, 0, DaemonRuntimeTest.pattern(4096, 9), 512));

            service.requestStop();
            control.join(20_000);
            assertEquals(ExitCodes.OK, exit.get());
            NvmeHost.await(() -> io.rdma.sawEvent(CmEventType.DISCONNECTED), io.rdma, "host sees the stop");
            admin.close();
            io.close();
            NvmeHost.await(() -> fabric.resources().nothingLeaked(), null, "nothing leaked: " + fabric.resources());
        } finally {
            service.requestStop();
            control.join(20_000);
        }
    }
}
