package dev.nvmf.target.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;

import io.prometheus.metrics.model.registry.Collector;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;

/**
 * The metric family {@code nvmf_io_latency_seconds}, one {@link LatencyHistogram} per (subsystem, nsid, opcode),
 * registered once with the Prometheus registry under the Micrometer one, so that {@link TargetMetrics#scrape}
 * writes it with every other series. Adding, removing and scraping are control-path calls, under this object's
 * lock; recording never takes it.
 */
final class LatencyHistograms implements Collector {
    static final String NAME = "nvmf_io_latency_seconds";
    private static final String HELP = "I/O command latency, capsule received to completion sent";

    private final Map<String, LatencyHistogram> series = new LinkedHashMap<>();

    /** The series of one label set; the same object when asked again. */
    synchronized LatencyHistogram series(String subsystemNqn, String nsid, String opcode) {
        return series.computeIfAbsent(key(subsystemNqn, nsid) + opcode, k -> new LatencyHistogram(
                Labels.of("nsid", nsid, "opcode", opcode, "subsystem", subsystemNqn)));
    }

    /** Drops every series of one namespace, or with {@code nsid} null of one subsystem. */
    synchronized void remove(String subsystemNqn, String nsid) {
        String prefix = nsid == null ? subsystemNqn + "\u0000" : key(subsystemNqn, nsid);
        series.keySet().removeIf(k -> k.startsWith(prefix));
    }

    private static String key(String subsystemNqn, String nsid) {
        return subsystemNqn + "\u0000" + nsid + "\u0000";
    }

    @Override
    public synchronized MetricSnapshot collect() {
        HistogramSnapshot.Builder b = HistogramSnapshot.builder().name(NAME).help(HELP);
        for (LatencyHistogram h : series.values()) {
            b.dataPoint(h.snapshot());
        }
        return b.build();
    }

    @Override
    public MetricSnapshot collect(Predicate<String> includedNames) {
        return includedNames.test(NAME) ? collect() : null;
    }

    @Override
    public String getPrometheusName() {
        return NAME;
    }
}
