package dev.nvmf.target.daemon;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shipped Grafana dashboard (config/grafana/nvmf-target.json) and Prometheus alert rules
 * (config/prometheus/nvmf-target-alerts.yaml) name only series a running daemon exports, with labels those series
 * have: the daemon runs in-process on the soft fabric, a host connects and does I/O, and its /metrics text is the
 * reference.
 */
class DashboardAndAlertsTest {
    /**
     * Series an expression may name that this daemon does not export yet, each with who adds it. Keep it short:
     * an entry here is a panel or an alert with no data.
     */
    static final Map<String, String> NOT_YET_EXPORTED = Map.of();
    /** Series Prometheus makes itself for every target. */
    static final Set<String> PROMETHEUS_SERIES = Set.of("up");
    /** Labels Prometheus adds to every series of a target. */
    static final Set<String> TARGET_LABELS = Set.of("instance", "job");

    static final Pattern SELECTOR = Pattern.compile("\\b([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*(\\{([^}]*)\\})?");
    static final Pattern LABEL_MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)");
    /** PromQL words that look like metric names: functions, aggregations, keywords, Grafana variables. */
    static final Set<String> PROMQL_WORDS = Set.of("sum", "rate", "increase", "histogram_quantile", "by",
            "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "max", "min", "avg",
            "count", "label_values", "le", "bool", "offset");

    @TempDir
    Path dir;

    SoftFabric fabric;
    TargetMetrics metrics;
    DaemonRuntime runtime;
    final List<NvmeHost> hosts = new ArrayList<>();

    @BeforeEach
    void start() throws Exception {
        fabric = SoftFabric.automatic();
        fabric.addDevice("t0", DaemonRuntimeTest.TARGET_IP);
        fabric.addDevice("h0", DaemonRuntimeTest.HOST_IP);
        metrics = new TargetMetrics();
        runtime = new DaemonRuntime(DaemonRuntime.Options.of(fabric), metrics);
        Path f = dir.resolve("t.yaml");
        Files.writeString(f, DaemonRuntimeTest.yaml(DaemonRuntimeTest.NS1, ""));
        runtime.start(ConfigLoader.load(f).config());
        NvmeHost admin = host(0, 32);
        admin.connectAdminAndEnable(DaemonRuntimeTest.SUB, 0);
        NvmeHost io = host(1, 16);
        int cntlid = runtime.target().subsystem(DaemonRuntimeTest.SUB).controllers().get(0).cntlid();
        assertEquals(0, io.connect(DaemonRuntimeTest.SUB, cntlid, 15, 0));
        DaemonRuntimeTest.assertWriteRead(io, 1, 0, 1);
        assertTrue(0 != (int) io.read(1, 1L << 40, 4096, 512)[0], "an error completion");
    }

    NvmeHost host(int qid, int depth) {
        NvmeHost h = new NvmeHost(fabric, new InetSocketAddress(DaemonRuntimeTest.HOST_IP, 0),
                new InetSocketAddress(DaemonRuntimeTest.TARGET_IP, 4420), DaemonRuntimeTest.HOST, qid, depth);
        hosts.add(h);
        return h;
    }

    @AfterEach
    void stop() {
        runtime.stop(Duration.ofSeconds(5));
        hosts.forEach(NvmeHost::close);
    }

    /** Series name to its label names, from the Prometheus text the daemon serves. */
    Map<String, Set<String>> exported() {
        runtime.tick(System.nanoTime()); // the timer pushes what the transport counts
        Map<String, Set<String>> out = new HashMap<>();
        for (DaemonServiceTest.Sample s : DaemonServiceTest.parse(metrics.scrape())) {
            out.computeIfAbsent(s.name(), k -> new HashSet<>()).addAll(s.labels().keySet());
        }
        return out;
    }

    /** Every metric name in an expression and the label names its selector matches on. */
    static Map<String, Set<String>> selectors(String expr) {
        String stripped = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"") // label values
                .replaceAll("\\[[^]]*]", "")                                     // range durations
                .replaceAll("\\$\\w+", "")                                       // Grafana variables
                .replaceAll("\\b(by|without|on|ignoring)\\s*\\([^)]*\\)", "");   // grouping label lists
        Map<String, Set<String>> out = new HashMap<>();
        Matcher m = SELECTOR.matcher(stripped);
        while (m.find()) {
            String name = m.group(1);
            if (PROMQL_WORDS.contains(name) || name.matches("\\d.*")) {
                continue;
            }
            Set<String> labels = out.computeIfAbsent(name, k -> new HashSet<>());
            if (m.group(3) != null) {
                Matcher l = LABEL_MATCHER.matcher(m.group(3));
                while (l.find()) {
                    labels.add(l.group(1));
                }
            }
        }
        return out;
    }

    List<String> problems(String where, String expr, Map<String, Set<String>> exported) {
        List<String> out = new ArrayList<>();
        selectors(expr).forEach((name, labels) -> {
            if (PROMETHEUS_SERIES.contains(name) || NOT_YET_EXPORTED.containsKey(name)) {
                return;
            }
            Set<String> has = exported.get(name);
            if (has == null) {
                out.add(where + ": " + name + " is not a series the daemon exports (" + expr + ")");
                return;
            }
            for (String l : labels) {
                if (!has.contains(l) && !TARGET_LABELS.contains(l)) {
                    out.add(where + ": " + name + " has no label " + l + " (it has " + has + ")");
                }
            }
        });
        return out;
    }

    @SuppressWarnings("unchecked")
    static Object read(String relative) throws Exception {
        String text = Files.readString(SystemdUnitPath.root().resolve(relative));
        return new Load(LoadSettings.builder().build()).loadFromString(text); // JSON is YAML
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyDashboardQueryNamesAnExportedSeries() throws Exception {
        Map<String, Set<String>> exported = exported();
        Map<String, Object> dash = (Map<String, Object>) read("config/grafana/nvmf-target.json");
        List<String> problems = new ArrayList<>();
        List<String> titles = new ArrayList<>();
        int queries = 0;
        for (Object o : (List<Object>) dash.get("panels")) {
            Map<String, Object> panel = (Map<String, Object>) o;
            titles.add((String) panel.get("title"));
            for (Object t : (List<Object>) panel.getOrDefault("targets", List.of())) {
                String expr = (String) ((Map<String, Object>) t).get("expr");
                problems.addAll(problems("panel '" + panel.get("title") + "'", expr, exported));
                queries++;
            }
        }
        for (Object v : (List<Object>) ((Map<String, Object>) dash.get("templating")).get("list")) {
            Object q = ((Map<String, Object>) v).get("definition");
            if (q instanceof String s) {
                // label_values(SELECTOR, LABEL): the selector's series must exist and have LABEL.
                Matcher lv = Pattern.compile("label_values\\((.*),\\s*(\\w+)\\)").matcher(s);
                assertTrue(lv.matches(), s);
                String where = "variable " + ((Map<String, Object>) v).get("name");
                problems.addAll(problems(where, lv.group(1), exported));
                for (String series : selectors(lv.group(1)).keySet()) {
                    Set<String> has = exported.getOrDefault(series, Set.of());
                    if (!has.contains(lv.group(2)) && !TARGET_LABELS.contains(lv.group(2))) {
                        problems.add(where + ": " + series + " has no label " + lv.group(2));
                    }
                }
                queries++;
            }
        }
        assertEquals(List.of(), problems);
        assertTrue(queries >= 20, "queries checked: " + queries);
        for (String required : List.of("IOPS by namespace", "Bandwidth by namespace",
                "Read latency percentiles by namespace", "Write latency percentiles by namespace", "Queues",
                "Connect failures", "Error completions by namespace", "Failed completions", "Drains")) {
            assertTrue(titles.contains(required), "a panel '" + required + "' in " + titles);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void everyAlertNamesAnExportedSeriesAndSaysWhatToDo() throws Exception {
        Map<String, Set<String>> exported = exported();
        Map<String, Object> file = (Map<String, Object>) read("config/prometheus/nvmf-target-alerts.yaml");
        List<String> problems = new ArrayList<>();
        List<String> names = new ArrayList<>();
        Set<String> named = new HashSet<>();
        for (Object g : (List<Object>) file.get("groups")) {
            for (Object r : (List<Object>) ((Map<String, Object>) g).get("rules")) {
                Map<String, Object> rule = (Map<String, Object>) r;
                String alert = (String) rule.get("alert");
                names.add(alert);
                String expr = (String) rule.get("expr");
                problems.addAll(problems("alert " + alert, expr, exported));
                named.addAll(selectors(expr).keySet());
                Map<String, Object> labels = (Map<String, Object>) rule.get("labels");
                assertTrue(Set.of("warning", "critical").contains(labels.get("severity")), alert + " severity");
                Map<String, Object> ann = (Map<String, Object>) rule.get("annotations");
                assertFalse(((String) ann.get("summary")).isBlank(), alert + " summary");
                assertTrue(((String) ann.get("description")).length() > 60, alert + " says what to check");
            }
        }
        assertEquals(List.of(), problems);
        for (String series : List.of("nvmf_keep_alive_expiries_total", "nvmf_rdma_failed_completions_total",
                "nvmf_rdma_drain_timeouts_total", "nvmf_config_reloads_total")) {
            assertTrue(named.contains(series), "an alert on " + series + " in " + names);
        }
        // The allow-list holds only what an expression really uses.
        Set<String> used = new HashSet<>(named);
        Map<String, Object> dash = (Map<String, Object>) read("config/grafana/nvmf-target.json");
        for (Object o : (List<Object>) dash.get("panels")) {
            for (Object t : (List<Object>) ((Map<String, Object>) o).getOrDefault("targets", List.of())) {
                used.addAll(selectors((String) ((Map<String, Object>) t).get("expr")).keySet());
            }
        }
        for (String allowed : NOT_YET_EXPORTED.keySet()) {
            assertTrue(used.contains(allowed), allowed + " is allow-listed but no expression uses it");
            assertFalse(exported.containsKey(allowed), allowed + " is exported now: take it off the allow-list");
        }
    }

    @Test
    void theCheckerFindsAWrongNameAndAWrongLabel() {
        Map<String, Set<String>> exported = Map.of("nvmf_io_bytes_total", Set.of("subsystem", "nsid", "opcode"));
        assertEquals(List.of(), problems("x", "sum by (subsystem) (rate(nvmf_io_bytes_total{nsid=\"1\", "
                + "instance=~\"$instance\"}[5m]))", exported));
        assertEquals(List.of("x: nvmf_io_byte_total is not a series the daemon exports (rate(nvmf_io_byte_total[5m]))"),
                problems("x", "rate(nvmf_io_byte_total[5m])", exported));
        assertEquals(List.of("x: nvmf_io_bytes_total has no label queue (it has [nsid, opcode, subsystem])"),
                problems("x", "nvmf_io_bytes_total{queue=\"1\"}", exported).stream()
                        .map(p -> p.replaceAll("\\[.*]", "[nsid, opcode, subsystem]")).toList());
    }

    /** The repository root, found as SystemdUnitTest finds it. */
    static final class SystemdUnitPath {
        static Path root() {
            Path p = Path.of("").toAbsolutePath();
            while (p != null && !Files.exists(p.resolve("config/grafana/nvmf-target.json"))) {
                p = p.getParent();
            }
            if (p == null) {
                throw new IllegalStateException("repository root not found");
            }
            return p;
        }
    }
}
