package dev.nvmf.target.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

/** Records I/O and control-path events, scrapes /metrics over real HTTP and reads it as Prometheus text. */
class MetricsScrapeTest {
    private static final String SUB = "nqn.2024-01.dev.nvmf:m";

    private static HttpResponse<String> get(InetSocketAddress at, String path) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            return client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + at.getPort() + path))
                    .build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void scrapeOverHttpShowsWhatWasRecorded() throws Exception {
        TargetMetrics metrics = new TargetMetrics();
        NamespaceIoMetrics[] ns1 = metrics.namespaceIo(SUB, 1);
        NamespaceIoMetrics read = ns1[IoOpcode.READ.ordinal()];
        NamespaceIoMetrics write = ns1[IoOpcode.of(0x01).ordinal()];
        read.record(3_000, 4096);      // 3 us
        read.record(8_000, 4096);      // 8 us
        read.record(150_000, 131072);  // 150 us
        read.recordError(40_000);      // 40 us, an error
        write.record(2_000_000, 1 << 20);
        write.recordBackendError();

        PollerMetrics poller = metrics.poller(0);
        poller.workRequestsPosted(10, 3);
        poller.sendBudgetWait();
        poller.flushCompletion();
        poller.flushCompletion();
        poller.errorCompletion(dev.nvmf.verbs.WcStatus.RETRY_EXC_ERR);
        poller.queueOpened(true);
        poller.queueOpened(false);
        poller.queueOpened(false);
        poller.commandStarted();
        poller.commandStarted();
        poller.commandCompleted();

        SubsystemMetrics sub = metrics.subsystem(SUB);
        sub.controllerCreated("nqn.2024-01.dev.nvmf:h1");
        sub.controllerCreated("nqn.2024-01.dev.nvmf:h1");
        sub.controllerCreated("nqn.2024-01.dev.nvmf:h2");
        sub.controllerDestroyed("nqn.2024-01.dev.nvmf:h2");
        sub.keepAliveExpired();
        metrics.connectFailed(ConnectFailure.HOST_NOT_ALLOWED);
        metrics.connectionRejected(ConnectionReject.INVALID_QUEUE_SIZE);
        metrics.reloadRefused();

        try (MetricsServer server = MetricsServer.start(metrics, new InetSocketAddress("127.0.0.1", 0))) {
            HttpResponse<String> r = get(server.address(), "/metrics");
            assertEquals(200, r.statusCode());
            assertEquals(MetricsServer.CONTENT_TYPE, r.headers().firstValue("Content-Type").orElse(""));
            PrometheusText t = PrometheusText.parse(r.body());

            Map<String, String> readLabels = Map.of("subsystem", SUB, "nsid", "1", "opcode", "read");
            assertEquals("histogram", t.types().get("nvmf_io_latency_seconds"));
            assertEquals(0, t.value("nvmf_io_latency_seconds_bucket", with(readLabels, "le", "2.0E-6")), 1e-9);
            assertEquals(1, t.value("nvmf_io_latency_seconds_bucket", with(readLabels, "le", "5.0E-6")), 1e-9);
            assertEquals(2, t.value("nvmf_io_latency_seconds_bucket", with(readLabels, "le", "1.0E-5")), 1e-9);
            assertEquals(3, t.value("nvmf_io_latency_seconds_bucket", with(readLabels, "le", "5.0E-5")), 1e-9);
            assertEquals(4, t.value("nvmf_io_latency_seconds_bucket", with(readLabels, "le", "2.0E-4")), 1e-9);
            assertEquals(4, t.value("nvmf_io_latency_seconds_bucket", with(readLabels, "le", "+Inf")), 1e-9);
            assertEquals(4, t.value("nvmf_io_latency_seconds_count", readLabels), 1e-9);
            assertEquals(201e-6, t.value("nvmf_io_latency_seconds_sum", readLabels), 1e-12);
            assertEquals("counter", t.types().get("nvmf_io_bytes_total"));
            assertEquals(4096 + 4096 + 131072, t.value("nvmf_io_bytes_total", readLabels), 1e-9);
            assertEquals(1, t.value("nvmf_io_errors_total", readLabels), 1e-9);
            Map<String, String> writeLabels = Map.of("subsystem", SUB, "nsid", "1", "opcode", "write");
            assertEquals(1 << 20, t.value("nvmf_io_bytes_total", writeLabels), 1e-9);
            assertEquals(1, t.value("nvmf_backend_errors_total", writeLabels), 1e-9);
            assertEquals(0, t.value("nvmf_io_latency_seconds_bucket", with(writeLabels, "le", "0.001")), 1e-9);
            assertEquals(1, t.value("nvmf_io_latency_seconds_bucket", with(writeLabels, "le", "0.005")), 1e-9);

            Map<String, String> p0 = Map.of("poller", "0");
            assertEquals(10, t.value("nvmf_rdma_work_requests_posted_total", p0), 1e-9);
            assertEquals(3, t.value("nvmf_rdma_work_requests_signaled_total", p0), 1e-9);
            assertEquals(1, t.value("nvmf_rdma_send_budget_waits_total", p0), 1e-9);
            assertEquals(2, t.value("nvmf_rdma_flush_completions_total", p0), 1e-9);
            assertEquals(1, t.value("nvmf_rdma_error_completions_total", with(p0, "status", "RETRY_EXC_ERR")), 1e-9);
            assertEquals(1, t.value("nvmf_queues", with(p0, "type", "admin")), 1e-9);
            assertEquals(2, t.value("nvmf_queues", with(p0, "type", "io")), 1e-9);
            assertEquals(1, t.value("nvmf_queue_depth_in_use", p0), 1e-9);

            Map<String, String> s = Map.of("subsystem", SUB);
            assertEquals(2, t.value("nvmf_controllers", s), 1e-9);
            assertEquals(1, t.value("nvmf_connected_hosts", s), 1e-9);
            assertEquals(1, t.value("nvmf_keep_alive_expiries_total", s), 1e-9);
            assertEquals(1, t.value("nvmf_connect_failures_total", Map.of("reason", "host_not_allowed")), 1e-9);
            assertEquals(0, t.value("nvmf_connect_failures_total", Map.of("reason", "unknown_subsystem")), 1e-9);
            assertEquals(1, t.value("nvmf_connection_rejects_total", Map.of("reason", "invalid_queue_size")), 1e-9);
            assertEquals(1, t.value("nvmf_config_reloads_total", Map.of("result", "refused")), 1e-9);

            // Naming rules: one prefix, no per-queue or per-command labels, counters end in _total.
            Set<String> forbidden = Set.of("qid", "queue", "cid", "command_id", "host");
            for (PrometheusText.Sample sample : t.samples()) {
                assertTrue(sample.name().startsWith("nvmf_"), sample.name());
                assertTrue(sample.labels().keySet().stream().noneMatch(forbidden::contains), sample.toString());
            }
            t.types().forEach((name, type) -> {
                if (type.equals("counter")) {
                    assertTrue(t.samples().stream().filter(x -> x.name().startsWith(name))
                            .allMatch(x -> x.name().endsWith("_total")), name);
                }
            });

            assertEquals(404, get(server.address(), "/").statusCode());
        }
    }

    @Test
    void removedNamespacesAndSubsystemsLeaveTheScrape() {
        TargetMetrics metrics = new TargetMetrics();
        metrics.namespaceIo(SUB, 1)[IoOpcode.READ.ordinal()].record(1000, 512);
        metrics.namespaceIo(SUB, 2)[IoOpcode.READ.ordinal()].record(1000, 512);
        metrics.subsystem(SUB).controllerCreated("nqn.2024-01.dev.nvmf:h");
        metrics.removeNamespace(SUB, 1);
        PrometheusText t = PrometheusText.parse(metrics.scrape());
        assertTrue(t.samples().stream().noneMatch(x -> "1".equals(x.labels().get("nsid"))));
        assertTrue(t.samples().stream().anyMatch(x -> "2".equals(x.labels().get("nsid"))));
        metrics.removeSubsystem(SUB);
        t = PrometheusText.parse(metrics.scrape());
        assertTrue(t.samples().stream().noneMatch(x -> SUB.equals(x.labels().get("subsystem"))), metrics.scrape());
    }

    private static Map<String, String> with(Map<String, String> base, String key, String value) {
        var m = new java.util.HashMap<>(base);
        m.put(key, value);
        return m;
    }
}
