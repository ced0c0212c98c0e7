package dev.nvmf.target.config;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

import dev.nvmf.target.backend.rbd.RbdSpec;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.AnaState;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.api.lowlevel.Compose;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.Tag;
import org.snakeyaml.engine.v2.schema.CoreSchema;

/**
 * Reads and validates the YAML configuration. Everything is checked before anything starts: unknown keys, wrong
 * types, ranges ({@link Limits}), NQNs, duplicates, references between sections and (optionally) that device files
 * exist. Every error names file:line:column and the key path; all of them are reported at once, each problem once
 * (a reference to a name that was itself refused is not reported again).
 */
public final class ConfigLoader {
    private static final Pattern NGUID_HEX = Pattern.compile("[0-9a-fA-F]{32}");
    private static final Pattern UUID_TEXT =
            Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

    /** What to check beyond the file itself. */
    public record Options(boolean checkDevices) {
        public static final Options DEFAULT = new Options(true);
        /** For preparing a file on another machine: device paths are not looked at. */
        public static final Options NO_DEVICE_CHECK = new Options(false);
    }

    /** A loaded configuration and the warnings (valid but probably unintended) found on the way. */
    public record Result(TargetConfig config, List<ConfigError> warnings) {}

    private ConfigLoader() {}

    public static Result load(Path file, Options options) throws ConfigException {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException(List.of(new ConfigError(file.toString(), 1, 1, "",
                    "cannot read the file: " + e.getClass().getSimpleName() + ": " + e.getMessage())));
        }
        return parse(text, file.toString(), options);
    }

    public static Result load(Path file) throws ConfigException {
        return load(file, Options.DEFAULT);
    }

    public static Result parse(String text, String source, Options options) throws ConfigException {
        Problems problems = new Problems(source);
        Node root = compose(text, problems);
        if (problems.hasErrors()) {
            throw new ConfigException(problems.errors());
        }
        TargetConfig config = new Reader(problems, options).read(root);
        if (problems.hasErrors()) {
            throw new ConfigException(problems.errors());
        }
        return new Result(config, List.copyOf(problems.warnings()));
    }

    /** Composes a YAML (or JSON) document into positioned nodes; a syntax error becomes one ConfigError. */
    static Node compose(String text, Problems problems) {
        LoadSettings settings = LoadSettings.builder().setLabel(problems.source()).setUseMarks(true)
                .setSchema(new CoreSchema()).setAllowDuplicateKeys(true).setMaxAliasesForCollections(50).build();
        try {
            Optional<Node> node = new Compose(settings).composeString(text);
            if (node.isEmpty()) {
                return null;
            }
            return node.get();
        } catch (MarkedYamlEngineException e) {
            var mark = e.getProblemMark().or(e::getContextMark);
            int line = mark.map(m -> m.getLine() + 1).orElse(1);
            int col = mark.map(m -> m.getColumn() + 1).orElse(1);
            String what = (e.getContext() == null ? "" : e.getContext() + ": ") + e.getProblem();
            problems.error(line, col, "", "YAML syntax error: " + what);
            return null;
        } catch (YamlEngineException e) {
            problems.error(1, 1, "", "YAML error: " + e.getMessage());
            return null;
        }
    }

    /** "2.0" or "1.2.1" in the VS register encoding; -1 if not MAJOR.MINOR[.TERTIARY] with a supported major. */
    static int parseVersion(String text) {
        var m = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})(?:\\.(\\d{1,3}))?").matcher(text.trim());
        if (!m.matches()) {
            return -1;
        }
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        int tertiary = m.group(3) == null ? 0 : Integer.parseInt(m.group(3));
        if (!Limits.VERSION_MAJOR.contains(major) || minor > 255 || tertiary > 255) {
            return -1;
        }
        return major << 16 | minor << 8 | tertiary;
    }

    /** An integer in decimal or 0x-hex, as YAML and nvmetcli write them; -1 if it is neither. */
    static long parseInteger(String text) {
        String t = text.trim();
        try {
            return t.startsWith("0x") || t.startsWith("0X") ? Long.parseLong(t.substring(2), 16) : Long.parseLong(t);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The derived namespace UUID used when none is configured: stable for a given subsystem NQN and NSID. */
    public static UUID derivedUuid(String subsystemNqn, long nsid) {
        return UUID.nameUUIDFromBytes((subsystemNqn + "/ns/" + nsid).getBytes(StandardCharsets.UTF_8));
    }

    /** The derived serial number used when none is configured: 16 hex digits from the NQN, stable. */
    public static String derivedSerial(String subsystemNqn) {
        UUID u = UUID.nameUUIDFromBytes(("serial:" + subsystemNqn).getBytes(StandardCharsets.UTF_8));
        return String.format(Locale.ROOT, "%016x", u.getMostSignificantBits());
    }

    /** What makes two RBD namespaces the same image: the cluster (its ceph.conf) and the image's full name. */
    private record RbdImage(String conf, String pool, String namespace, String image, String snapshot) {}

    private record RbdUse(String where, Node node) {}

    private static final class Reader {
        private final Problems p;
        private final Options options;
        /** Where each host NQN was defined, for "not defined" and duplicate errors. */
        private final Map<String, Node> hostNodes = new HashMap<>();
        private final Map<String, Node> subsystemNodes = new HashMap<>();
        /** Names already reported as invalid: references to them are not reported a second time. */
        private final Set<String> refusedHosts = new HashSet<>();
        private final Set<String> refusedSubsystems = new HashSet<>();
        /** Every RBD image served, with its first namespace: two namespaces on one image get a warning. */
        private final Map<RbdImage, RbdUse> rbdImages = new HashMap<>();
        /** Namespaces outside the default ANA group, with where their group is written (for the warning below). */
        private final List<GroupUse> groupUses = new ArrayList<>();

        private record GroupUse(String nqn, long nsid, int group, Node at, String path) {}

        Reader(Problems problems, Options options) {
            this.p = problems;
            this.options = options;
        }

        TargetConfig read(Node root) {
            if (root == null) {
                p.error(1, 1, "", "the file is empty; at least 'subsystems' and 'ports' are expected");
                return null;
            }
            MapReader top = MapReader.of(p, root, "");
            if (top == null) {
                return null;
            }
            TransportSection transport = transport(top.map("transport"));
            List<HostSection> hosts = hosts(top);
            List<SubsystemSection> subsystems = subsystems(top, transport);
            List<PortSection> ports = ports(top, transport);
            DiscoverySection discovery = discovery(top.map("discovery"));
            MetricsSection metrics = metrics(top.map("metrics"));
            LoggingSection logging = logging(top.map("logging"));
            top.rejectUnknown();
            warnUnconfiguredGroups(ports);
            if (subsystems.isEmpty() && !p.hasErrors()) {
                p.warning(root, "subsystems", "no subsystems are configured: hosts can only reach discovery");
            }
            return new TargetConfig(hosts, ports, subsystems, transport, discovery, metrics, logging);
        }

        TransportSection transport(MapReader m) {
            TransportSection d = TransportSection.defaults();
            if (m == null) {
                return d;
            }
            int depth = (int) m.integer("max_queue_depth", d.maxQueueDepth(), Limits.QUEUE_DEPTH);
            int qpairs = (int) m.integer("max_io_qpairs_per_ctrlr", d.maxIoQpairsPerCtrlr(),
                    Limits.IO_QPAIRS_PER_CTRLR);
            int maxIo = (int) m.size("max_io_size", d.maxIoSize(), Limits.MAX_IO_SIZE);
            int icd = inCapsule(m, d.inCapsuleDataSize(), maxIo);
            int aq = (int) m.integer("max_aq_depth", d.maxAqDepth(), Limits.ADMIN_QUEUE_DEPTH);
            int pollers = (int) m.integer("pollers", d.pollers(), Limits.POLLERS);
            int drain = (int) m.integer("drain_timeout", d.drainTimeout(), Limits.DRAIN_TIMEOUT_SECONDS);
            boolean zeroCopy = m.bool("zero_copy", d.zeroCopy());
            long busyPoll = m.duration("busy_poll", d.busyPollNanos(), Limits.BUSY_POLL);
            boolean srq = m.bool("srq", d.srq());
            int srqDepth = (int) m.integer("srq_depth", d.srqDepth(), Limits.SRQ_DEPTH);
            if (!srq && m.has("srq_depth")) {
                p.warning(m.value("srq_depth"), m.path("srq_depth"), "has no effect without srq: true");
            }
            List<Integer> cpus = pollerCpus(m);
            m.rejectUnknown();
            return new TransportSection(depth, qpairs, icd, maxIo, aq, pollers, drain, zeroCopy, busyPoll, srq,
                    srqDepth, cpus);
        }

        /** transport.poller_cpus: CPU numbers ({@link Limits#POLLER_CPU}), each once. */
        List<Integer> pollerCpus(MapReader m) {
            List<Integer> out = new ArrayList<>();
            List<Node> items = m.list("poller_cpus");
            Limits.Range r = Limits.POLLER_CPU;
            for (int i = 0; i < items.size(); i++) {
                Node n = items.get(i);
                String path = m.path("poller_cpus") + "[" + i + "]";
                if (!(n instanceof ScalarNode sc && sc.isPlain() && sc.getTag().equals(Tag.INT))) {
                    p.error(n, path, "expected a CPU number (an integer from " + r.min() + " to " + r.max()
                            + "), found " + MapReader.describe(n));
                    continue;
                }
                long v;
                try {
                    v = Long.parseLong(sc.getValue());
                } catch (NumberFormatException e) {
                    v = -1; // beyond a long: out of range as well
                }
                int cpu = (int) v;
                if (v < r.min() || v > r.max()) {
                    p.error(n, path, "value " + sc.getValue() + " is out of range, allowed " + r.min() + " to "
                            + r.max());
                } else if (out.contains(cpu)) {
                    p.error(n, path, "CPU " + cpu + " is listed twice");
                } else {
                    out.add(cpu);
                }
            }
            return List.copyOf(out);
        }

        /** in_capsule_data_size: {@link Limits#IN_CAPSULE_DATA_SIZE}, and at most max_io_size. */
        int inCapsule(MapReader m, int fallback, int maxIo) {
            Limits.SizeRule rule = Limits.IN_CAPSULE_DATA_SIZE;
            return (int) m.size("in_capsule_data_size", Math.min(fallback, maxIo),
                    rule.withMax(Math.min(rule.max(), maxIo)));
        }

        List<HostSection> hosts(MapReader top) {
            List<HostSection> out = new ArrayList<>();
            List<Node> items = top.list("hosts");
            for (int i = 0; i < items.size(); i++) {
                String path = "hosts[" + i + "]";
                MapReader h = MapReader.of(p, items.get(i), path);
                if (h == null) {
                    continue;
                }
                String nqn = nqn(h, "nqn", refusedHosts);
                h.rejectUnknown();
                if (nqn == null) {
                    continue;
                }
                Node first = hostNodes.putIfAbsent(nqn, h.value("nqn"));
                if (first != null) {
                    p.error(h.value("nqn"), h.path("nqn"), "duplicate host NQN '" + nqn + "' (first at "
                            + Problems.where(first) + ")");
                    continue;
                }
                out.add(new HostSection(nqn));
            }
            return out;
        }

        /**
         * Reads a required NQN: an error when the kernel target would refuse it (the name is remembered in
         * {@code refused}, so that references to it are not reported again), a warning when it is accepted but not
         * in the specification's form.
         */
        String nqn(MapReader m, String key, Set<String> refused) {
            String nqn = m.requiredString(key);
            if (nqn == null) {
                return null;
            }
            String problem = Nqn.problem(nqn);
            if (problem != null) {
                p.error(m.value(key), m.path(key), problem);
                refused.add(nqn);
                return null;
            }
            String form = Nqn.nonconformance(nqn);
            if (form != null) {
                p.warning(m.value(key), m.path(key), form + "; the Linux kernel target and host accept it, other "
                        + "hosts may not");
            }
            return nqn;
        }

        /** max_qid: 1 to transport.max_io_qpairs_per_ctrlr, which the transport enforces for every subsystem. */
        int maxQid(MapReader s, TransportSection transport) {
            int limit = transport.maxIoQpairsPerCtrlr();
            Node v = s.value("max_qid");
            long q = s.integer("max_qid", limit, Limits.IO_QPAIRS_PER_CTRLR);
            if (v != null && q > limit) {
                p.error(v, s.path("max_qid"), "max_qid " + q + " is above transport.max_io_qpairs_per_ctrlr ("
                        + limit + "), which the transport enforces for every subsystem; raise that or lower this");
                return limit;
            }
            return (int) q;
        }

        /** version: "MAJOR.MINOR" or "MAJOR.MINOR.TERTIARY" as the kernel's attr_version takes it. */
        int version(MapReader s) {
            String text = s.string("version", null);
            if (text == null) {
                return SubsystemConfig.DEFAULT_VERSION;
            }
            int v = parseVersion(text);
            if (v < 0) {
                p.error(s.value("version"), s.path("version"), "'" + text + "' is not an NVMe version: expected "
                        + "MAJOR.MINOR or MAJOR.MINOR.TERTIARY with a major version of "
                        + Limits.VERSION_MAJOR.min() + " or " + Limits.VERSION_MAJOR.max() + " (such as 1.3 or 2.0)");
                return SubsystemConfig.DEFAULT_VERSION;
            }
            return v;
        }

        /** ieee_oui: 24 bits, as a number (0x001b21) or a string ("0x001b21", as nvmetcli saves it). */
        int ieeeOui(MapReader s) {
            Node v = s.value("ieee_oui");
            if (v == null) {
                return SubsystemConfig.DEFAULT_IEEE_OUI;
            }
            long oui = v instanceof ScalarNode sc ? parseInteger(sc.getValue()) : -1;
            if (!Limits.IEEE_OUI.contains(oui)) {
                p.error(v, s.path("ieee_oui"), "expected a 24-bit IEEE OUI, 0x000000 to 0xffffff, found "
                        + MapReader.describe(v));
                return SubsystemConfig.DEFAULT_IEEE_OUI;
            }
            return (int) oui;
        }

        List<SubsystemSection> subsystems(MapReader top, TransportSection transport) {
            List<SubsystemSection> out = new ArrayList<>();
            List<Node> items = top.list("subsystems");
            Map<UUID, String> uuids = new HashMap<>();
            Map<String, String> nguids = new HashMap<>();
            for (int i = 0; i < items.size(); i++) {
                String path = "subsystems[" + i + "]";
                MapReader s = MapReader.of(p, items.get(i), path);
                if (s == null) {
                    continue;
                }
                String nqn = nqn(s, "nqn", refusedSubsystems);
                if (nqn != null && nqn.equals(Nqn.DISCOVERY)) {
                    p.error(s.value("nqn"), s.path("nqn"), "'" + nqn + "' is the discovery subsystem's NQN; the "
                            + "target provides discovery itself");
                    refusedSubsystems.add(nqn);
                    nqn = null;
                }
                if (nqn != null && nqn.getBytes(StandardCharsets.UTF_8).length == Nqn.MAX_BYTES) {
                    p.warning(s.value("nqn"), s.path("nqn"), "the Linux host refuses to connect to a subsystem NQN "
                            + "of " + Nqn.MAX_BYTES + " bytes (it needs fewer; kernel host fabrics.c, "
                            + "nvmf_parse_options)");
                }
                if (nqn != null) {
                    Node first = subsystemNodes.putIfAbsent(nqn, s.value("nqn"));
                    if (first != null) {
                        p.error(s.value("nqn"), s.path("nqn"), "duplicate subsystem NQN '" + nqn + "' (first at "
                                + Problems.where(first) + ")");
                        nqn = null;
                    }
                }
                String serial = s.string("serial", nqn == null ? "" : derivedSerial(nqn));
                ascii(s, "serial", serial, Limits.SERIAL_MAX_LENGTH);
                String model = s.string("model", SubsystemSection.DEFAULT_MODEL);
                ascii(s, "model", model, Limits.MODEL_MAX_LENGTH);
                String firmware = s.string("firmware", SubsystemSection.DEFAULT_FIRMWARE);
                ascii(s, "firmware", firmware, Limits.FIRMWARE_MAX_LENGTH);
                int cntlidMin = (int) s.integer("cntlid_min", Limits.CNTLID.min(), Limits.CNTLID);
                int cntlidMax = (int) s.integer("cntlid_max", Limits.CNTLID.max(), Limits.CNTLID);
                if (cntlidMin > cntlidMax) {
                    Node at = s.value("cntlid_max") != null ? s.value("cntlid_max") : s.value("cntlid_min");
                    p.error(at, s.path(s.value("cntlid_max") != null ? "cntlid_max" : "cntlid_min"), "cntlid_min "
                            + cntlidMin + " is above cntlid_max " + cntlidMax + ": the range of controller ids is "
                            + "empty");
                }
                int maxQid = maxQid(s, transport);
                int version = version(s);
                int ieeeOui = ieeeOui(s);
                boolean anyHost = s.bool("allow_any_host", false);
                List<String> allowed = allowedHosts(s);
                if (anyHost && !allowed.isEmpty()) {
                    p.error(s.value("allow_any_host"), s.path("allow_any_host"), "allow_any_host is true but "
                            + "allowed_hosts lists hosts; use one or the other (as the kernel target requires)");
                }
                List<NamespaceSection> namespaces = namespaces(s, nqn, uuids, nguids);
                s.rejectUnknown();
                if (!anyHost && allowed.isEmpty() && nqn != null) {
                    p.warning(s.node(), path, "no host can connect to '" + nqn + "': allow_any_host is false and "
                            + "allowed_hosts is empty");
                }
                if (nqn != null) {
                    out.add(new SubsystemSection(nqn, serial, model, firmware, anyHost, allowed, namespaces,
                            cntlidMin, cntlidMax, maxQid, version, ieeeOui));
                }
            }
            return out;
        }

        void ascii(MapReader m, String key, String value, int max) {
            if (value == null || !m.has(key)) {
                return;
            }
            boolean printable = value.chars().allMatch(c -> c >= 0x20 && c <= 0x7e);
            if (!printable || value.length() > max || value.isEmpty()) {
                p.error(m.value(key), m.path(key), key + " must be 1 to " + max + " printable ASCII characters "
                        + "(Identify Controller field), found '" + value + "'");
            }
        }

        List<String> allowedHosts(MapReader s) {
            Set<String> out = new LinkedHashSet<>();
            List<Node> items = s.list("allowed_hosts");
            for (int i = 0; i < items.size(); i++) {
                Node n = items.get(i);
                String path = s.path("allowed_hosts") + "[" + i + "]";
                if (!(n instanceof ScalarNode sc) || MapReader.isNull(n)) {
                    p.error(n, path, "expected a host NQN, found " + MapReader.describe(n));
                    continue;
                }
                String nqn = sc.getValue();
                if (refusedHosts.contains(nqn)) {
                    continue; // its definition under 'hosts' already has the error
                }
                if (!hostNodes.containsKey(nqn)) {
                    String problem = Nqn.problem(nqn);
                    p.error(n, path, problem != null ? problem
                            : "host '" + nqn + "' is not defined under 'hosts'");
                    continue;
                }
                if (!out.add(nqn)) {
                    p.error(n, path, "host '" + nqn + "' is listed twice");
                }
            }
            return List.copyOf(out);
        }

        List<NamespaceSection> namespaces(MapReader s, String subsystemNqn, Map<UUID, String> uuids,
                                         Map<String, String> nguids) {
            List<NamespaceSection> out = new ArrayList<>();
            Map<Long, Node> nsids = new HashMap<>();
            List<Node> items = s.list("namespaces");
            for (int i = 0; i < items.size(); i++) {
                String path = s.path("namespaces") + "[" + i + "]";
                MapReader n = MapReader.of(p, items.get(i), path);
                if (n == null) {
                    continue;
                }
                boolean nsidGiven = n.has("nsid");
                long nsid = n.integer("nsid", -1, Limits.NSID);
                boolean duplicateNsid = false;
                if (!nsidGiven) {
                    n.value("nsid");
                    p.error(n.node(), path, "missing required key 'nsid'");
                } else if (nsid > 0) {
                    Node first = nsids.putIfAbsent(nsid, n.value("nsid"));
                    if (first != null) {
                        p.error(n.value("nsid"), n.path("nsid"), "duplicate nsid " + nsid + " in this subsystem "
                                + "(first at " + Problems.where(first) + ")");
                        duplicateNsid = true;
                    }
                }
                NamespaceSection.Kind kind = null;
                List<String> given = new ArrayList<>();
                for (NamespaceSection.Kind k : NamespaceSection.Kind.values()) {
                    if (n.has(k.key())) {
                        given.add(k.key());
                        kind = kind == null ? k : kind;
                    }
                }
                if (given.size() != 1) {
                    p.error(n.node(), path, given.isEmpty()
                            ? "a namespace needs one of 'device', 'file', 'ram_size' or 'rbd'"
                            : "a namespace takes only one of 'device', 'file', 'ram_size' or 'rbd', found "
                              + String.join(" and ", given));
                }
                String device = n.string("device", null);
                String file = n.string("file", null);
                long ram = n.size("ram_size", 0, Limits.RAM_SIZE);
                RbdSection rbd = rbd(n, subsystemNqn, nsid);
                String backingPath = kind == NamespaceSection.Kind.DEVICE ? device
                        : kind == NamespaceSection.Kind.FILE ? file : null;
                if (given.size() == 1 && backingPath != null) {
                    checkBacking(n, kind, backingPath);
                }
                UUID uuid = null;
                String uuidText = n.string("uuid", null);
                if (uuidText != null) {
                    if (!UUID_TEXT.matcher(uuidText).matches()) {
                        p.error(n.value("uuid"), n.path("uuid"), "'" + uuidText + "' is not a UUID (expected "
                                + "8-4-4-4-12 hex digits)");
                    } else {
                        uuid = UUID.fromString(uuidText);
                    }
                } else if (subsystemNqn != null && nsid > 0 && !duplicateNsid) {
                    uuid = derivedUuid(subsystemNqn, nsid);
                }
                String nguid = null;
                String nguidText = n.string("nguid", null);
                if (nguidText != null) {
                    String hex = nguidText.replace("-", "");
                    if (!NGUID_HEX.matcher(hex).matches() || (nguidText.contains("-")
                            && !UUID_TEXT.matcher(nguidText).matches())) {
                        p.error(n.value("nguid"), n.path("nguid"), "'" + nguidText + "' is not an NGUID (expected "
                                + "32 hex digits, optionally in 8-4-4-4-12 groups)");
                    } else if (hex.chars().allMatch(c -> c == '0')) {
                        p.error(n.value("nguid"), n.path("nguid"), "an all-zero NGUID means 'none' (NVMe Base 2.0 "
                                + "section 4.7.1); leave nguid out instead");
                    } else {
                        nguid = hex.toLowerCase(Locale.ROOT);
                    }
                }
                String here = (subsystemNqn == null ? "?" : subsystemNqn) + " nsid " + nsid;
                if (uuid != null) {
                    String other = uuids.putIfAbsent(uuid, here);
                    if (other != null) {
                        p.error(n.value("uuid") != null ? n.value("uuid") : n.node(), n.path("uuid"),
                                "uuid " + uuid + " is already used by " + other + " (namespace UUIDs must be "
                                        + "unique)");
                    }
                }
                if (nguid != null) {
                    String other = nguids.putIfAbsent(nguid, here);
                    if (other != null) {
                        p.error(n.value("nguid"), n.path("nguid"), "nguid " + nguidText + " is already used by "
                                + other + " (NGUIDs must be unique)");
                    }
                }
                boolean readOnly = n.bool("read_only", false);
                boolean enabled = n.bool("enabled", true);
                boolean bufferedIo = n.bool("buffered_io", false);
                int anaGroup = (int) n.integer("ana_group", Limits.ANA_GROUP.min(), Limits.ANA_GROUP);
                if (anaGroup != Limits.ANA_GROUP.min() && subsystemNqn != null) {
                    groupUses.add(new GroupUse(subsystemNqn, nsid, anaGroup, n.value("ana_group"),
                            n.path("ana_group")));
                }
                if (n.has("buffered_io") && kind != null && kind != NamespaceSection.Kind.FILE) {
                    p.error(n.value("buffered_io"), n.path("buffered_io"), "buffered_io applies to file namespaces "
                            + "only (block devices are always opened O_DIRECT, RAM has no page cache, RBD has "
                            + "librbd's cache)");
                }
                n.rejectUnknown();
                boolean backed = kind != NamespaceSection.Kind.RBD || rbd != null;
                if (kind != null && nsid > 0 && backed) {
                    out.add(new NamespaceSection(nsid, kind, backingPath, kind == NamespaceSection.Kind.RAM ? ram : 0,
                            uuid, nguid, readOnly, enabled, kind == NamespaceSection.Kind.FILE && bufferedIo,
                            kind == NamespaceSection.Kind.RBD ? rbd : null, anaGroup));
                }
            }
            return out;
        }

        /**
         * The {@code rbd} mapping of a namespace (null when absent or refused). Names are checked by the backend's
         * own {@link RbdSpec} (its message starts with the key, and is reported at that key); {@code conf} and
         * {@code keyring} are checked as files, like device paths. A keyring's value is never echoed: an operator
         * who pasted the key there must not see it in a log.
         */
        RbdSection rbd(MapReader n, String subsystemNqn, long nsid) {
            if (!n.has("rbd")) {
                n.value("rbd");
                return null;
            }
            MapReader r = n.map("rbd");
            if (r == null) {
                return null;
            }
            int errors = p.errors().size();
            String pool = r.requiredString("pool");
            String image = r.requiredString("image");
            String namespace = r.string("namespace", null);
            String snapshot = r.string("snapshot", null);
            String conf = rbdFile(r, "conf");
            String id = r.string("id", RbdSpec.DEFAULT_ID);
            String keyring = rbdFile(r, "keyring");
            long blockSize = r.integer("block_size", RbdSection.DEFAULT_BLOCK_SIZE, Long.MIN_VALUE, Long.MAX_VALUE);
            if (blockSize != 512 && blockSize != 4096) {
                p.error(r.value("block_size"), r.path("block_size"), "block_size must be 512 or 4096 (the logical "
                        + "block sizes the target serves), found " + blockSize);
            }
            int connect = (int) r.integer("connect_timeout", RbdSection.DEFAULT_CONNECT_TIMEOUT,
                    Limits.RBD_TIMEOUT_SECONDS);
            int osdOp = (int) r.integer("osd_op_timeout", RbdSection.DEFAULT_OSD_OP_TIMEOUT,
                    Limits.RBD_TIMEOUT_SECONDS);
            int monOp = (int) r.integer("mon_op_timeout", RbdSection.DEFAULT_MON_OP_TIMEOUT,
                    Limits.RBD_TIMEOUT_SECONDS);
            if (r.keyNode("key") != null) {
                p.error(r.keyNode("key"), r.path("key"), "the cephx key does not go in this file: keep it in a "
                        + "keyring file (mode 0600) and name that file with 'keyring'");
                r.value("key");
            }
            r.rejectUnknown();
            if (pool == null || image == null || p.errors().size() > errors) {
                return null;
            }
            RbdSection section = new RbdSection(pool, namespace, image, snapshot, conf, id, keyring,
                    (int) blockSize, connect, osdOp, monOp);
            try {
                section.spec();
            } catch (IllegalArgumentException e) {
                String key = e.getMessage().split(" ", 2)[0];
                Node at = r.has(key) ? r.value(key) : r.node();
                p.error(at, r.has(key) ? r.path(key) : r.path(), e.getMessage());
                return null;
            }
            String here = (subsystemNqn == null ? "?" : subsystemNqn) + " nsid " + nsid;
            RbdImage identity = new RbdImage(conf, pool, namespace, image, snapshot);
            RbdUse first = rbdImages.putIfAbsent(identity, new RbdUse(here, r.node()));
            if (first != null) {
                p.warning(r.node(), r.path(), section.describe() + " is also served by " + first.where() + " (at "
                        + Problems.where(first.node()) + "): hosts see two different disks with the same blocks"
                        + (snapshot == null ? ", and the two take turns at the image's exclusive lock" : ""));
            }
            return section;
        }

        /** conf, keyring: an absolute path; with the device check, an existing regular file this user can read. */
        String rbdFile(MapReader r, String key) {
            String path = r.string(key, null);
            if (path == null) {
                return null;
            }
            Node v = r.value(key);
            if (path.isEmpty() || !path.startsWith("/")) {
                p.error(v, r.path(key), "keyring".equals(key) ? "keyring must be the absolute path of a keyring "
                        + "file (the key itself stays in that file)" : "'" + path + "' must be an absolute path");
                return null;
            }
            if (!options.checkDevices()) {
                return path;
            }
            Path file = Path.of(path);
            if (!Files.exists(file)) {
                p.error(v, r.path(key), key + " '" + path + "' does not exist");
            } else if (!Files.isRegularFile(file)) {
                p.error(v, r.path(key), key + " '" + path + "' is not a regular file");
            } else if (!Files.isReadable(file)) {
                p.error(v, r.path(key), key + " '" + path + "' is not readable by this user");
            }
            return path;
        }

        void checkBacking(MapReader n, NamespaceSection.Kind kind, String path) {
            Node v = n.value(kind.key());
            if (path.isEmpty() || !path.startsWith("/")) {
                p.error(v, n.path(kind.key()), "'" + path + "' must be an absolute path");
                return;
            }
            if (!options.checkDevices()) {
                return;
            }
            Path file = Path.of(path);
            if (!Files.exists(file)) {
                p.error(v, n.path(kind.key()), (kind == NamespaceSection.Kind.DEVICE ? "device" : "file") + " '"
                        + path + "' does not exist");
                return;
            }
            if (kind == NamespaceSection.Kind.FILE && !Files.isRegularFile(file)) {
                p.error(v, n.path(kind.key()), "'" + path + "' is not a regular file"
                        + (isBlockDevice(file) ? "; it is a block device, use 'device:'" : ""));
            } else if (kind == NamespaceSection.Kind.DEVICE && !isBlockDevice(file)) {
                p.error(v, n.path(kind.key()), "'" + path + "' is not a block device"
                        + (Files.isRegularFile(file) ? "; it is a regular file, use 'file:'" : ""));
            } else if (!Files.isReadable(file)) {
                p.error(v, n.path(kind.key()), "'" + path + "' is not readable by this user");
            }
        }

        static boolean isBlockDevice(Path file) {
            try {
                Object mode = Files.getAttribute(file, "unix:mode");
                return mode instanceof Integer m && (m & 0170000) == 0060000; // S_IFBLK
            } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
                return false;
            }
        }

        List<PortSection> ports(MapReader top, TransportSection transport) {
            List<PortSection> out = new ArrayList<>();
            List<Node> items = top.list("ports");
            Map<Integer, Node> ids = new HashMap<>();
            Map<String, Node> endpoints = new HashMap<>();
            for (int i = 0; i < items.size(); i++) {
                String path = "ports[" + i + "]";
                MapReader m = MapReader.of(p, items.get(i), path);
                if (m == null) {
                    continue;
                }
                int id = (int) m.integer("id", i + 1, Limits.PORT_ID);
                Node idNode = m.value("id") != null ? m.value("id") : m.node();
                Node firstId = ids.putIfAbsent(id, idNode);
                if (firstId != null) {
                    p.error(idNode, m.path("id"), "duplicate port id " + id + " (first at "
                            + Problems.where(firstId) + ")");
                }
                String trtype = m.string("trtype", "rdma");
                if (!"rdma".equals(trtype)) {
                    p.error(m.value("trtype"), m.path("trtype"), "unsupported trtype '" + trtype + "': this "
                            + "target serves rdma only");
                }
                String adrfam = m.string("adrfam", "ipv4");
                if (!"ipv4".equals(adrfam) && !"ipv6".equals(adrfam)) {
                    p.error(m.value("adrfam"), m.path("adrfam"), "adrfam must be ipv4 or ipv6, found '" + adrfam
                            + "'");
                }
                String traddr = m.requiredString("traddr");
                if (traddr != null) {
                    traddr = address(m, adrfam, traddr);
                }
                int trsvcid = (int) m.integer("trsvcid", 4420, Limits.TRSVCID);
                int icd = inCapsule(m, transport.inCapsuleDataSize(), transport.maxIoSize());
                int maxQueue = (int) m.integer("max_queue_size", transport.maxQueueDepth(), Limits.QUEUE_DEPTH);
                List<String> subs = new ArrayList<>();
                List<Node> subNodes = m.list("subsystems");
                for (int j = 0; j < subNodes.size(); j++) {
                    Node n = subNodes.get(j);
                    String sp = m.path("subsystems") + "[" + j + "]";
                    if (!(n instanceof ScalarNode sc) || MapReader.isNull(n)) {
                        p.error(n, sp, "expected a subsystem NQN, found " + MapReader.describe(n));
                    } else if (refusedSubsystems.contains(sc.getValue())) {
                        continue; // its definition under 'subsystems' already has the error
                    } else if (!subsystemNodes.containsKey(sc.getValue())) {
                        p.error(n, sp, "subsystem '" + sc.getValue() + "' is not defined under 'subsystems'");
                    } else if (subs.contains(sc.getValue())) {
                        p.error(n, sp, "subsystem '" + sc.getValue() + "' is listed twice");
                    } else {
                        subs.add(sc.getValue());
                    }
                }
                List<ReferralSection> referrals = referrals(m);
                List<AnaGroupSection> anaGroups = anaGroups(m);
                m.rejectUnknown();
                if (traddr != null) {
                    String endpoint = traddr + "/" + trsvcid;
                    Node first = endpoints.putIfAbsent(endpoint, m.value("traddr"));
                    if (first != null) {
                        p.error(m.value("traddr"), m.path("traddr"), "another port already listens on " + traddr
                                + " port " + trsvcid + " (at " + Problems.where(first) + ")");
                    }
                    out.add(new PortSection(id, trtype, adrfam, traddr, trsvcid, icd, maxQueue, subs, referrals,
                            anaGroups));
                }
            }
            return out;
        }

        /** ports[].referrals: other discovery services (kernel configfs ports/N/referrals/NAME addr_* attributes). */
        List<ReferralSection> referrals(MapReader port) {
            List<ReferralSection> out = new ArrayList<>();
            Map<ReferralSection, Node> seen = new HashMap<>();
            List<Node> items = port.list("referrals");
            for (int i = 0; i < items.size(); i++) {
                MapReader r = MapReader.of(p, items.get(i), port.path("referrals") + "[" + i + "]");
                if (r == null) {
                    continue;
                }
                String trtype = r.string("trtype", "rdma");
                if (!"rdma".equals(trtype) && !"tcp".equals(trtype)) {
                    p.error(r.value("trtype"), r.path("trtype"), "a referral's trtype must be rdma or tcp, found '"
                            + trtype + "'");
                }
                String adrfam = r.string("adrfam", "ipv4");
                if (!"ipv4".equals(adrfam) && !"ipv6".equals(adrfam)) {
                    p.error(r.value("adrfam"), r.path("adrfam"), "adrfam must be ipv4 or ipv6, found '" + adrfam
                            + "'");
                }
                String traddr = r.requiredString("traddr");
                if (traddr != null) {
                    traddr = address(r, adrfam, traddr);
                }
                int trsvcid = (int) r.integer("trsvcid", 4420, Limits.TRSVCID);
                int portid = (int) r.integer("portid", 0, Limits.REFERRAL_PORT_ID);
                r.rejectUnknown();
                if (traddr != null) {
                    ReferralSection referral = new ReferralSection(trtype, adrfam, traddr, trsvcid, portid);
                    Node first = seen.putIfAbsent(referral, r.node());
                    if (first != null) {
                        p.error(r.node(), r.path(), "referral " + referral.describe() + " is listed twice (first at "
                                + Problems.where(first) + ")");
                    } else {
                        out.add(referral);
                    }
                }
            }
            return out;
        }

        /**
         * ports[].ana_groups: {@code grpid} and {@code state} (kernel configfs ports/N/ana_groups/G/ana_state, whose
         * state names these are), each group once per port, in ascending order afterwards.
         */
        List<AnaGroupSection> anaGroups(MapReader port) {
            Map<Integer, Node> seen = new HashMap<>();
            List<AnaGroupSection> out = new ArrayList<>();
            List<Node> items = port.list("ana_groups");
            for (int i = 0; i < items.size(); i++) {
                MapReader g = MapReader.of(p, items.get(i), port.path("ana_groups") + "[" + i + "]");
                if (g == null) {
                    continue;
                }
                boolean hasId = g.has("grpid");
                int grpid = (int) g.integer("grpid", -1, Limits.ANA_GROUP);
                if (!hasId) {
                    p.error(g.node(), g.path(), "missing required key 'grpid' (the ANA group, "
                            + Limits.ANA_GROUP.text() + ")");
                }
                String name = g.requiredString("state");
                AnaState state = name == null ? null : AnaState.ofName(name);
                if (name != null && state == null) {
                    p.error(g.value("state"), g.path("state"), "'" + name + "' is not an ANA state; expected one of "
                            + AnaState.names());
                }
                g.rejectUnknown();
                if (grpid > 0 && hasId) {
                    Node first = seen.putIfAbsent(grpid, g.value("grpid"));
                    if (first != null) {
                        p.error(g.value("grpid"), g.path("grpid"), "ANA group " + grpid + " is listed twice on this "
                                + "port (first at " + Problems.where(first) + ")");
                    } else if (state != null) {
                        out.add(new AnaGroupSection(grpid, state));
                    }
                }
            }
            out.sort(java.util.Comparator.comparingInt(AnaGroupSection::grpid));
            return out;
        }

        /**
         * A namespace in a group other than 1 that no port sets a state for is inaccessible through every port (the
         * default of such a group): most likely a forgotten {@code ana_groups} entry. A group that a port sets
         * inaccessible on purpose (another daemon serves it) is not warned about.
         */
        void warnUnconfiguredGroups(List<PortSection> ports) {
            for (GroupUse u : groupUses) {
                boolean configured = ports.stream().anyMatch(port -> port.configuredAnaState(u.group()).isPresent());
                if (!configured) {
                    p.warning(u.at(), u.path(), "namespace " + u.nsid() + " of " + u.nqn() + " is in ANA group "
                            + u.group() + ", which no port lists in ana_groups: it is inaccessible through every port "
                            + "(the default of a group other than 1)");
                }
            }
        }

        /** discovery: all_ports. */
        DiscoverySection discovery(MapReader m) {
            DiscoverySection d = DiscoverySection.defaults();
            if (m == null) {
                return d;
            }
            boolean allPorts = m.bool("all_ports", d.allPorts());
            m.rejectUnknown();
            return new DiscoverySection(allPorts);
        }

        /** Checks an IP literal against its family; returns the canonical text or null. No DNS lookups. */
        String address(MapReader m, String adrfam, String traddr) {
            boolean v6 = traddr.contains(":");
            boolean literal = v6 ? traddr.matches("[0-9a-fA-F:.]+")
                    : traddr.matches("\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");
            InetAddress address = null;
            if (literal) {
                try {
                    address = InetAddress.getByName(traddr);
                } catch (UnknownHostException e) {
                    address = null;
                }
            }
            if (address == null) {
                p.error(m.value("traddr"), m.path("traddr"), "'" + traddr + "' is not an IP address (host names "
                        + "are not resolved; write the address)");
                return null;
            }
            if ("ipv4".equals(adrfam) && !(address instanceof Inet4Address)) {
                p.error(m.value("traddr"), m.path("traddr"), "'" + traddr + "' is not an IPv4 address but adrfam "
                        + "is ipv4");
                return null;
            }
            if ("ipv6".equals(adrfam) && !(address instanceof Inet6Address)) {
                p.error(m.value("traddr"), m.path("traddr"), "'" + traddr + "' is not an IPv6 address but adrfam "
                        + "is ipv6");
                return null;
            }
            return traddr;
        }

        MetricsSection metrics(MapReader m) {
            MetricsSection d = MetricsSection.defaults();
            if (m == null) {
                return d;
            }
            boolean enabled = m.bool("enabled", d.enabled());
            String listen = m.string("listen", d.listen());
            String host = d.host();
            int port = d.port();
            if (m.has("listen")) {
                var matcher = Pattern.compile("(?:\\[([0-9a-fA-F:.]+)]|([^:\\[\\]]+)):(\\d{1,5})")
                        .matcher(listen);
                int parsedPort = matcher.matches() ? Integer.parseInt(matcher.group(3)) : -1;
                if (!matcher.matches() || !Limits.METRICS_PORT.contains(parsedPort)) {
                    p.error(m.value("listen"), m.path("listen"), "expected ADDRESS:PORT such as 127.0.0.1:9464 or "
                            + "[::1]:9464, found '" + listen + "'");
                } else {
                    host = matcher.group(1) != null ? matcher.group(1) : matcher.group(2);
                    port = parsedPort;
                }
            }
            m.rejectUnknown();
            return new MetricsSection(enabled, host, port);
        }

        LoggingSection logging(MapReader m) {
            LoggingSection d = LoggingSection.defaults();
            if (m == null) {
                return d;
            }
            LoggingSection.Level level = enumValue(m, "level", LoggingSection.Level.class, d.level());
            LoggingSection.Format format = enumValue(m, "format", LoggingSection.Format.class, d.format());
            m.rejectUnknown();
            return new LoggingSection(level, format);
        }

        <E extends Enum<E>> E enumValue(MapReader m, String key, Class<E> type, E fallback) {
            String text = m.string(key, null);
            if (text == null) {
                return fallback;
            }
            for (E e : type.getEnumConstants()) {
                if (e.name().equalsIgnoreCase(text)) {
                    return e;
                }
            }
            List<String> names = new ArrayList<>();
            for (E e : type.getEnumConstants()) {
                names.add(e.name().toLowerCase(Locale.ROOT));
            }
            p.error(m.value(key), m.path(key), "'" + text + "' is not one of " + String.join(", ", names));
            return fallback;
        }
    }
}
