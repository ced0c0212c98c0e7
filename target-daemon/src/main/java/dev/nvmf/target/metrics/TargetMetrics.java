package dev.nvmf.target.metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * The daemon's metrics: one Prometheus registry and factories for the pre-resolved meter holders the I/O path
 * records into. Every series is named {@code nvmf_*} in base units (seconds, bytes), counters end in
 * {@code _total} (Micrometer's Prometheus naming does both), and labels are bounded: subsystem, nsid, opcode,
 * poller, reason, status; never per queue or per command id.
 *
 * <p>Factories are control-path calls (namespace setup, poller start, subsystem creation); they may allocate.
 */
public final class TargetMetrics {
    /**
     * Latency histogram buckets (upper bounds): microseconds for RAM and NVMe-fast paths, up to a second for a
     * struggling disk. Fixed, so every namespace's histogram has the same buckets and aggregates.
     */
    public static final Duration[] LATENCY_BUCKETS = {
        micros(1), micros(2), micros(5), micros(10), micros(20), micros(50), micros(100), micros(200),
        micros(500), micros(1_000), micros(2_000), micros(5_000), micros(10_000), micros(20_000),
        micros(50_000), micros(100_000), micros(250_000), micros(500_000), micros(1_000_000)
    };

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    /** {@code nvmf_io_latency_seconds}: not a Micrometer Timer, see {@link LatencyHistogram}. */
    private final LatencyHistograms latencies = new LatencyHistograms();
    private final Map<ConnectFailure, Counter> connectFailures = new EnumMap<>(ConnectFailure.class);
    private final Map<ConnectionReject, Counter> connectionRejects = new EnumMap<>(ConnectionReject.class);
    private final Map<String, List<Meter>> namespaceMeters = new HashMap<>();
    private final Map<String, SubsystemMetrics> subsystems = new HashMap<>();
    private final Map<Integer, PollerMetrics> pollers = new HashMap<>();
    private final Counter reloadsApplied;
    private final List<Runnable> beforeScrape = new CopyOnWriteArrayList<>();
    private final Counter reloadsRefused;

    public TargetMetrics() {
        registry.getPrometheusRegistry().register(latencies);
        for (ConnectFailure f : ConnectFailure.values()) {
            connectFailures.put(f, Counter.builder("nvmf.connect.failures").tag("reason", f.label())
                    .description("Fabrics Connect commands that failed, by reason").register(registry));
        }
        for (ConnectionReject r : ConnectionReject.values()) {
            connectionRejects.put(r, Counter.builder("nvmf.connection.rejects").tag("reason", r.label())
                    .description("RDMA CM connect requests rejected, by reason").register(registry));
        }
        reloadsApplied = Counter.builder("nvmf.config.reloads").tag("result", "applied")
                .description("configuration reloads (SIGHUP)").register(registry);
        reloadsRefused = Counter.builder("nvmf.config.reloads").tag("result", "refused")
                .description("configuration reloads (SIGHUP)").register(registry);
    }

    private static Duration micros(long us) {
        return Duration.ofNanos(us * 1000);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /**
     * Runs {@code update} before every {@link #scrape} (any thread), for counters kept elsewhere and pushed here (the
     * transport's connect rejects): they are current when read, with no thread waking up to push them.
     */
    public void beforeScrape(Runnable update) {
        beforeScrape.add(update);
    }

    /** Undoes {@link #beforeScrape}. */
    public void removeBeforeScrape(Runnable update) {
        beforeScrape.remove(update);
    }

    /** The Prometheus text exposition of every meter. */
    public String scrape() {
        beforeScrape.forEach(Runnable::run);
        return registry.scrape();
    }

    /**
     * The meters for one (subsystem, namespace, opcode); call at namespace setup and keep the result. Calling
     * again returns meters bound to the same series.
     */
    public synchronized NamespaceIoMetrics namespaceIo(String subsystemNqn, long nsid, IoOpcode opcode) {
        String ns = Long.toString(nsid);
        LatencyHistogram latency = latencies.series(subsystemNqn, ns, opcode.label());
        FunctionCounter bytes = FunctionCounter.builder("nvmf.io", latency, LatencyHistogram::bytes).baseUnit("bytes")
                .description("bytes moved by I/O commands").tag("subsystem", subsystemNqn).tag("nsid", ns)
                .tag("opcode", opcode.label()).register(registry);
        Counter errors = Counter.builder("nvmf.io.errors")
                .description("I/O commands completed with an error status").tag("subsystem", subsystemNqn)
                .tag("nsid", ns).tag("opcode", opcode.label()).register(registry);
        Counter backend = Counter.builder("nvmf.backend.errors")
                .description("failures reported by the storage backend").tag("subsystem", subsystemNqn)
                .tag("nsid", ns).tag("opcode", opcode.label()).register(registry);
        NamespaceIoMetrics m = new NamespaceIoMetrics(latency, bytes, errors, backend);
        namespaceMeters.computeIfAbsent(subsystemNqn + "\u0000" + ns, k -> new ArrayList<>()).addAll(m.meters());
        return m;
    }

    /** Every opcode's meters for one namespace, indexed by {@link IoOpcode#ordinal()}. */
    public NamespaceIoMetrics[] namespaceIo(String subsystemNqn, long nsid) {
        IoOpcode[] ops = IoOpcode.values();
        NamespaceIoMetrics[] out = new NamespaceIoMetrics[ops.length];
        for (IoOpcode op : ops) {
            out[op.ordinal()] = namespaceIo(subsystemNqn, nsid, op);
        }
        return out;
    }

    /** A namespace went away (reload): its series disappear from the next scrape. */
    public synchronized void removeNamespace(String subsystemNqn, long nsid) {
        latencies.remove(subsystemNqn, Long.toString(nsid));
        List<Meter> meters = namespaceMeters.remove(subsystemNqn + "\u0000" + nsid);
        if (meters != null) {
            meters.forEach(registry::remove);
        }
    }

    public synchronized SubsystemMetrics subsystem(String nqn) {
        return subsystems.computeIfAbsent(nqn, n -> new SubsystemMetrics(registry, n));
    }

    /** A subsystem went away (reload): its series, and its namespaces', disappear. */
    public synchronized void removeSubsystem(String nqn) {
        SubsystemMetrics s = subsystems.remove(nqn);
        if (s != null) {
            for (Meter m : s.meters()) {
                registry.remove(m);
            }
        }
        namespaceMeters.keySet().removeIf(key -> key.startsWith(nqn + "\u0000"));
        latencies.remove(nqn, null);
        registry.getMeters().stream().filter(m -> nqn.equals(m.getId().getTag("subsystem")))
                .toList().forEach(registry::remove);
    }

    public synchronized PollerMetrics poller(int index) {
        return pollers.computeIfAbsent(index, i -> new PollerMetrics(registry, i));
    }

    public void connectFailed(ConnectFailure reason) {
        connectFailures.get(reason).increment();
    }

    public void connectionRejected(ConnectionReject reason) {
        connectionRejects.get(reason).increment();
    }

    public void reloadApplied() {
        reloadsApplied.increment();
    }

    public void reloadRefused() {
        reloadsRefused.increment();
    }
}
