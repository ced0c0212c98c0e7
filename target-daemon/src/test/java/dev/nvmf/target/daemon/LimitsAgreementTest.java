package dev.nvmf.target.daemon;

import dev.nvmf.target.backend.RamBackend;
import dev.nvmf.target.cli.Main;
import dev.nvmf.target.config.AnaGroupSection;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.Limits;
import dev.nvmf.target.config.NamespaceSection;
import dev.nvmf.target.config.PortSection;
import dev.nvmf.target.config.ReferralSection;
import dev.nvmf.target.config.SubsystemSection;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.core.subsystem.AnaPortStates;
import dev.nvmf.target.service.ExitCodes;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Whatever {@code check-config} accepts, {@code serve} accepts. For every documented bound of the
 * configuration a file is generated at the bound and one step beyond it. At the bound, {@code nvmf-target
 * check-config} exits 0 and the daemon's mapping onto the core and the RDMA transport ({@link ConfigMapping}: the
 * core's and the transport's records with their own constructor checks, what {@code serve} builds before it
 * listens) accepts it; beyond it, {@code check-config} exits 4 with an error at that key. The range each case tests
 * is the one {@code docs/configuration.md} prints.
 */
class LimitsAgreementTest {
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
    private static final Path DOCS = Path.of("../docs/configuration.md");

    @TempDir
    Path dir;

    /** The knobs of one generated file; each case sets one. */
    static final class Knobs {
        String nqn = "nqn.2024-01.dev.nvmf:limits";
        final Map<String, String> transport = new LinkedHashMap<>();
        final Map<String, String> subsystem = new LinkedHashMap<>();
        final Map<String, String> namespace = new LinkedHashMap<>(Map.of("nsid", "1", "ram_size", "1MiB"));
        final Map<String, String> port = new LinkedHashMap<>(Map.of("id", "1", "trsvcid", "4420"));
        final Map<String, String> referral = new LinkedHashMap<>();
        final Map<String, String> anaGroup = new LinkedHashMap<>();
        String metricsListen = "127.0.0.1:9464";

        /** Namespace 1 becomes an RBD image with {@code key} set. */
        void rbd(String key, String value) {
            namespace.remove("ram_size");
            namespace.put("rbd", "{pool: rbd, image: disk1, " + key + ": " + value + "}");
        }

        String yaml() {
            StringBuilder b = new StringBuilder();
            b.append("hosts:\n  - nqn: ").append(HOST).append('\n');
            b.append("subsystems:\n  - nqn: \"").append(nqn).append("\"\n    allowed_hosts: [").append(HOST)
                    .append("]\n");
            subsystem.forEach((k, v) -> b.append("    ").append(k).append(": ").append(v).append('\n'));
            b.append("    namespaces:\n      - ");
            String sep = "";
            for (var e : namespace.entrySet()) {
                b.append(sep).append(e.getKey()).append(": ").append(e.getValue()).append('\n');
                sep = "        ";
            }
            b.append("ports:\n  - traddr: 10.0.0.1\n    subsystems: [\"").append(nqn).append("\"]\n");
            port.forEach((k, v) -> b.append("    ").append(k).append(": ").append(v).append('\n'));
            if (!referral.isEmpty()) {
                b.append("    referrals:\n      - traddr: 10.0.0.9\n");
                referral.forEach((k, v) -> b.append("        ").append(k).append(": ").append(v).append('\n'));
            }
            if (!anaGroup.isEmpty()) {
                b.append("    ana_groups:\n      - state: optimized\n");
                anaGroup.forEach((k, v) -> b.append("        ").append(k).append(": ").append(v).append('\n'));
            }
            if (!transport.isEmpty()) {
                b.append("transport:\n");
                transport.forEach((k, v) -> b.append("  ").append(k).append(": ").append(v).append('\n'));
            }
            b.append("metrics:\n  enabled: true\n  listen: \"").append(metricsListen).append("\"\n");
            return b.toString();
        }
    }

    interface Setter {
        void set(Knobs k, String value);
    }

    /**
     * One documented bound.
     *
     * @param key     the key path an error names (subsystems[0].nsid ...)
     * @param docKey  the key as the table in docs/configuration.md writes it
     * @param docText the range as the documentation prints it
     * @param ok      values at the bounds: accepted by both sides
     * @param beyond  values one step beyond: refused by check-config, at {@code key}
     */
    record Bound(String key, String docKey, String docText, Setter setter, List<String> ok, List<String> beyond) {}

    static List<Bound> bounds() {
        List<Bound> b = new ArrayList<>();
        b.add(new Bound("transport.max_queue_depth", "max_queue_depth", Limits.QUEUE_DEPTH.text(),
                (k, v) -> k.transport.put("max_queue_depth", v), List.of("2", "1024"), List.of("1", "1025")));
        b.add(new Bound("transport.max_io_qpairs_per_ctrlr", "max_io_qpairs_per_ctrlr",
                Limits.IO_QPAIRS_PER_CTRLR.text(), (k, v) -> k.transport.put("max_io_qpairs_per_ctrlr", v),
                List.of("1", "65534"), List.of("0", "65535")));
        b.add(new Bound("transport.max_io_size", "max_io_size", Limits.MAX_IO_SIZE.text(),
                (k, v) -> k.transport.put("max_io_size", v), List.of("8KiB", "8MiB"),
                List.of("4KiB", "16MiB", "24KiB")));
        b.add(new Bound("transport.in_capsule_data_size", "in_capsule_data_size", Limits.IN_CAPSULE_DATA_SIZE.text(),
                (k, v) -> k.transport.put("in_capsule_data_size", v), List.of("0", "1MiB", "16"),
                List.of("1048592", "8")));
        b.add(new Bound("transport.max_aq_depth", "max_aq_depth", Limits.ADMIN_QUEUE_DEPTH.text(),
                (k, v) -> k.transport.put("max_aq_depth", v), List.of("2", "4096"), List.of("1", "4097")));
        b.add(new Bound("transport.pollers", "pollers", Limits.POLLERS.text(),
                (k, v) -> k.transport.put("pollers", v), List.of("1", "256"), List.of("0", "257")));
        b.add(new Bound("transport.drain_timeout", "drain_timeout", Limits.DRAIN_TIMEOUT_SECONDS.text(),
                (k, v) -> k.transport.put("drain_timeout", v), List.of("1", "3600"), List.of("0", "3601")));
        b.add(new Bound("transport.busy_poll", "busy_poll", Limits.BUSY_POLL.text(),
                (k, v) -> k.transport.put("busy_poll", v), List.of("0", "1ns", "100ms", "50us"),
                List.of("100000001ns", "101ms", "50", "-1us", "5 minutes")));
        b.add(new Bound("transport.srq_depth", "srq_depth", Limits.SRQ_DEPTH.text(),
                (k, v) -> {
                    k.transport.put("srq", "true");
                    k.transport.put("srq_depth", v);
                }, List.of("256", "65536"), List.of("255", "65537")));
        b.add(new Bound("ports[0].id", "id", Limits.PORT_ID.text(), (k, v) -> k.port.put("id", v),
                List.of("1", "65534"), List.of("0", "65535")));
        b.add(new Bound("ports[0].trsvcid", "trsvcid", Limits.TRSVCID.text(), (k, v) -> k.port.put("trsvcid", v),
                List.of("1", "65535"), List.of("0", "65536")));
        b.add(new Bound("ports[0].max_queue_size", "max_queue_size", Limits.QUEUE_DEPTH.text(),
                (k, v) -> k.port.put("max_queue_size", v), List.of("2", "1024"), List.of("1", "1025")));
        b.add(new Bound("ports[0].in_capsule_data_size", "in_capsule_data_size", Limits.IN_CAPSULE_DATA_SIZE.text(),
                (k, v) -> k.port.put("in_capsule_data_size", v), List.of("0", "1MiB"), List.of("1048592", "24")));
        b.add(new Bound("ports[0].referrals[0].portid", "portid", Limits.REFERRAL_PORT_ID.text(),
                (k, v) -> k.referral.put("portid", v), List.of("0", "65535"), List.of("-1", "65536")));
        b.add(new Bound("ports[0].referrals[0].trsvcid", "trsvcid", Limits.TRSVCID.text(),
                (k, v) -> k.referral.put("trsvcid", v), List.of("1", "65535"), List.of("0", "65536")));
        b.add(new Bound("ports[0].ana_groups[0].grpid", "grpid", Limits.ANA_GROUP.text(),
                (k, v) -> k.anaGroup.put("grpid", v), List.of("1", "128"), List.of("0", "129")));
        b.add(new Bound("subsystems[0].nqn", "nqn", "at most " + Limits.NQN_MAX_BYTES + " bytes",
                (k, v) -> k.nqn = v, List.of("s", "nqn.2024-01.dev.nvmf:" + "x".repeat(202)),
                List.of("nqn.2024-01.dev.nvmf:" + "x".repeat(203))));
        b.add(new Bound("subsystems[0].serial", "serial", "1-" + Limits.SERIAL_MAX_LENGTH + " printable ASCII",
                (k, v) -> k.subsystem.put("serial", v), List.of("S", "\"" + "9".repeat(20) + "\""),
                List.of("\"\"", "\"" + "9".repeat(21) + "\"", "\"caf\u00e9\"")));
        b.add(new Bound("subsystems[0].model", "model", "1-" + Limits.MODEL_MAX_LENGTH + " printable ASCII",
                (k, v) -> k.subsystem.put("model", v), List.of("M", "m".repeat(40)), List.of("m".repeat(41))));
        b.add(new Bound("subsystems[0].firmware", "firmware", "1-" + Limits.FIRMWARE_MAX_LENGTH + " printable ASCII",
                (k, v) -> k.subsystem.put("firmware", v), List.of("F", "\"6.1.0-18\""), List.of("\"6.1.0-180\"")));
        b.add(new Bound("subsystems[0].cntlid_min", "cntlid_min", Limits.CNTLID.text(),
                (k, v) -> k.subsystem.put("cntlid_min", v), List.of("1", "65519"), List.of("0", "65520")));
        b.add(new Bound("subsystems[0].cntlid_max", "cntlid_max", Limits.CNTLID.text(),
                (k, v) -> k.subsystem.put("cntlid_max", v), List.of("1", "65519"), List.of("0", "65520")));
        b.add(new Bound("subsystems[0].max_qid", "max_qid", "1..transport.max_io_qpairs_per_ctrlr",
                (k, v) -> k.subsystem.put("max_qid", v), List.of("1", "128"), List.of("0", "129")));
        b.add(new Bound("subsystems[0].ieee_oui", "ieee_oui", "0x000000..0xffffff",
                (k, v) -> k.subsystem.put("ieee_oui", v), List.of("0", "0xffffff", "\"0x001b21\""),
                List.of("0x1000000", "-1")));
        b.add(new Bound("subsystems[0].version", "version", "1.0..2.255.255",
                (k, v) -> k.subsystem.put("version", v), List.of("1.0", "\"2.255.255\""),
                List.of("0.9", "3.0", "\"2.256\"")));
        b.add(new Bound("subsystems[0].namespaces[0].nsid", "nsid", Limits.NSID.text(),
                (k, v) -> k.namespace.put("nsid", v), List.of("1", "1024"), List.of("0", "1025")));
        b.add(new Bound("subsystems[0].namespaces[0].ana_group", "ana_group", Limits.ANA_GROUP.text(),
                (k, v) -> k.namespace.put("ana_group", v), List.of("1", "128"), List.of("0", "129")));
        b.add(new Bound("subsystems[0].namespaces[0].ram_size", "ram_size", Limits.RAM_SIZE.text(),
                (k, v) -> k.namespace.put("ram_size", v), List.of("4KiB", "16TiB"),
                List.of("3584", "17592186044928", "4100")));
        for (String key : List.of("connect_timeout", "osd_op_timeout", "mon_op_timeout")) {
            b.add(new Bound("subsystems[0].namespaces[0].rbd." + key, key, Limits.RBD_TIMEOUT_SECONDS.text(),
                    (k, v) -> k.rbd(key, v), List.of("1", "3600"), List.of("0", "3601", "1.5")));
        }
        b.add(new Bound("subsystems[0].namespaces[0].rbd.block_size", "block_size", "`512` or `4096`",
                (k, v) -> k.rbd("block_size", v), List.of("512", "4096"), List.of("1024", "511", "8192")));
        b.add(new Bound("metrics.listen", "listen", "port " + Limits.METRICS_PORT.text(),
                (k, v) -> k.metricsListen = "127.0.0.1:" + v, List.of("1", "65535"), List.of("0", "65536")));
        return b;
    }

    record Run(int code, String out, String err) {}

    Run checkConfig(String yaml, String name) throws Exception {
        Path f = dir.resolve(name + ".yaml");
        Files.writeString(f, yaml, StandardCharsets.UTF_8);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(new String[] {"check-config", "--quiet", "--no-device-check", f.toString()},
                new PrintWriter(out), new PrintWriter(err));
        return new Run(code, out.toString(), err.toString());
    }

    /** Everything {@code serve} builds from a loaded configuration before it listens, with every record's checks. */
    static void serveSideMapping(TargetConfig c) {
        ConfigMapping.options(c.transport());
        ConfigMapping.transport(c, true);
        for (PortSection p : c.ports()) {
            ConfigMapping.port(p, c.discovery());
            ConfigMapping.rdmaPort(p, c.transport());
            for (ReferralSection r : p.referrals()) {
                ConfigMapping.referral(r);
            }
            AnaPortStates states = new AnaPortStates(); // what NvmeTarget.setAnaState sets for each entry
            for (AnaGroupSection g : p.anaGroups()) {
                states.set(g.grpid(), g.state());
            }
        }
        try (RamBackend small = new RamBackend(4096)) {
            for (SubsystemSection s : c.subsystems()) {
                ConfigMapping.subsystem(s);
                for (NamespaceSection n : s.namespaces()) {
                    ConfigMapping.backend(n);
                    ConfigMapping.namespace(n, small);
                }
            }
        }
        if (c.metrics().enabled()) {
            new InetSocketAddress(c.metrics().host(), c.metrics().port());
        }
    }

    @TestFactory
    Stream<DynamicTest> everyBoundIsAcceptedByBothSidesAndOneStepBeyondIsRefused() {
        List<DynamicTest> tests = new ArrayList<>();
        int i = 0;
        for (Bound bound : bounds()) {
            for (String v : bound.ok()) {
                String name = "c" + i++;
                tests.add(DynamicTest.dynamicTest(bound.key() + " = " + v + " is accepted", () -> {
                    Knobs k = new Knobs();
                    bound.setter().set(k, v);
                    Run r = checkConfig(k.yaml(), name);
                    assertEquals(0, r.code(), "check-config refused " + bound.key() + " = " + v + ":\n" + r.err()
                            + "\n" + k.yaml());
                    TargetConfig c = ConfigLoader.parse(k.yaml(), name, ConfigLoader.Options.NO_DEVICE_CHECK)
                            .config();
                    try {
                        serveSideMapping(c);
                    } catch (RuntimeException e) {
                        fail("check-config accepts " + bound.key() + " = " + v + " but serve refuses it: " + e, e);
                    }
                }));
            }
            for (String v : bound.beyond()) {
                String name = "c" + i++;
                tests.add(DynamicTest.dynamicTest(bound.key() + " = " + v + " is refused", () -> {
                    Knobs k = new Knobs();
                    bound.setter().set(k, v);
                    Run r = checkConfig(k.yaml(), name);
                    assertEquals(ExitCodes.CONFIG, r.code(), "check-config accepted " + bound.key() + " = " + v
                            + "\n" + k.yaml());
                    assertTrue(r.err().contains(": " + bound.key() + ": "), "the error names " + bound.key()
                            + ":\n" + r.err());
                }));
            }
        }
        return tests.stream();
    }

    @Test
    void theDocumentationPrintsTheRangesTheseTestsCheck() throws Exception {
        String docs = Files.readString(DOCS);
        for (Bound b : bounds()) {
            boolean found = false;
            for (String line : docs.split("\n")) {
                if (line.startsWith("| `" + b.docKey() + "` |") && line.contains(b.docText())) {
                    found = true;
                    break;
                }
            }
            assertTrue(found, "docs/configuration.md has a row for `" + b.docKey() + "` that says " + b.docText());
        }
    }

    @Test
    void theDefaultsMapToo() throws Exception {
        serveSideMapping(ConfigLoader.parse(new Knobs().yaml(), "defaults", ConfigLoader.Options.NO_DEVICE_CHECK)
                .config());
    }
}
