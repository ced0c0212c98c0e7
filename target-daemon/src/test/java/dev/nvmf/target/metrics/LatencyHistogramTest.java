package dev.nvmf.target.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;

import org.junit.jupiter.api.Test;

/** Bucket edges of nvmf_io_latency_seconds: Prometheus buckets count values at most their bound ({@code le}). */
class LatencyHistogramTest {
    private static final String SUB = "nqn.2024-01.dev.nvmf:edges";

    @Test
    void aValueOnABoundCountsInThatBucketAndOneAboveInTheNext() {
        TargetMetrics metrics = new TargetMetrics();
        NamespaceIoMetrics read = metrics.namespaceIo(SUB, 1)[IoOpcode.READ.ordinal()];
        read.record(1_000, 0);            // exactly 1 us
        read.record(1_001, 0);            // just above: the 2 us bucket
        read.record(-5, 0);               // a clock step: counts as 0, in the first bucket
        read.record(2_000_000_000L, 0);   // 2 s: only +Inf
        PrometheusText t = PrometheusText.parse(metrics.scrape());
        Map<String, String> l = Map.of("subsystem", SUB, "nsid", "1", "opcode", "read");
        assertEquals(2, t.value("nvmf_io_latency_seconds_bucket", with(l, "1.0E-6")), 1e-9);
        assertEquals(3, t.value("nvmf_io_latency_seconds_bucket", with(l, "2.0E-6")), 1e-9);
        assertEquals(3, t.value("nvmf_io_latency_seconds_bucket", with(l, "1.0")), 1e-9);
        assertEquals(4, t.value("nvmf_io_latency_seconds_bucket", with(l, "+Inf")), 1e-9);
        assertEquals(4, t.value("nvmf_io_latency_seconds_count", l), 1e-9);
        assertEquals(2.000002001, t.value("nvmf_io_latency_seconds_sum", l), 1e-12);
    }

    @Test
    void askingAgainGivesTheSameSeries() {
        TargetMetrics metrics = new TargetMetrics();
        metrics.namespaceIo(SUB, 3)[IoOpcode.READ.ordinal()].record(10_000, 4096);
        metrics.namespaceIo(SUB, 3)[IoOpcode.READ.ordinal()].record(10_000, 4096);
        PrometheusText t = PrometheusText.parse(metrics.scrape());
        assertEquals(2, t.value("nvmf_io_latency_seconds_count",
                Map.of("subsystem", SUB, "nsid", "3", "opcode", "read")), 1e-9);
    }

    private static Map<String, String> with(Map<String, String> base, String le) {
        var m = new java.util.HashMap<>(base);
        m.put("le", le);
        return m;
    }
}
