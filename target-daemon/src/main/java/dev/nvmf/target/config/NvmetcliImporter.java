package dev.nvmf.target.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.AnaState;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.Tag;

/**
 * Converts a Linux kernel target configuration saved by {@code nvmetcli save} (its {@code config.json}) into
 * this target's YAML. The JSON is read through the YAML composer (JSON is YAML), so problems name
 * file:line:column and the JSON key path just as for our own files.
 *
 * <p>nvmetcli's shape: {@code hosts[].nqn}; {@code ports[]} with {@code portid}, {@code addr} {trtype, adrfam,
 * traddr, trsvcid, treq, tsas}, {@code param} {inline_data_size, pi_enable}, {@code referrals},
 * {@code ana_groups}, {@code subsystems}; {@code subsystems[]} with {@code nqn}, {@code attr} {allow_any_host,
 * serial, model, version, cntlid_min, cntlid_max, qid_max, pi_enable}, {@code allowed_hosts} and
 * {@code namespaces[]} {nsid, enable, buffered_io, device {path, uuid, nguid, buffered_io}, ana_grpid}; referrals
 * are {@code {name, addr {trtype, adrfam, traddr, trsvcid, portid, treq}}}. Values are often strings ("4420", "0"):
 * both strings and numbers are accepted. Names (host and subsystem NQNs) are kept exactly as they are, also where
 * they do not follow the specification's form (nvmetcli's own example {@code testnqn}): the kernel target accepts
 * them and hosts connect with them, so renaming would break every host (a warning says so). The subsystem
 * attributes (version, serial, model, firmware, ieee_oui, cntlid_min, cntlid_max, qid_max), referrals,
 * buffered_io and the ANA groups (each namespace's {@code ana_grpid}, each port's {@code ana_groups[] {grpid,
 * ana {state}}}) are kept. What this target does not support (other transports, protection information, secure
 * channel) is left out with a warning.
 */
public final class NvmetcliImporter {
    /** The outcome: our YAML (with the warnings as leading comments), the config, and the warnings. */
    public record Result(String yaml, TargetConfig config, List<ConfigError> warnings) {}

    private final Problems p;

    private NvmetcliImporter(String source) {
        this.p = new Problems(source);
    }

    public static Result importFile(Path json) throws ConfigException {
        String text;
        try {
            text = Files.readString(json, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException(List.of(new ConfigError(json.toString(), 1, 1, "",
                    "cannot read the file: " + e.getClass().getSimpleName() + ": " + e.getMessage())));
        }
        return importString(text, json.toString());
    }

    public static Result importString(String json, String source) throws ConfigException {
        NvmetcliImporter importer = new NvmetcliImporter(source);
        Node root = ConfigLoader.compose(json, importer.p);
        if (importer.p.hasErrors()) {
            throw new ConfigException(importer.p.errors());
        }
        TargetConfig config = importer.convert(root);
        if (importer.p.hasErrors()) {
            throw new ConfigException(importer.p.errors());
        }
        StringBuilder yaml = new StringBuilder();
        yaml.append("# Converted from nvmetcli ").append(source).append(" by nvmf-target import-nvmetcli.\n");
        for (ConfigError w : importer.p.warnings()) {
            yaml.append("# warning: ").append(w).append('\n');
        }
        yaml.append(ConfigWriter.toYaml(config));
        // The converted file must be one our loader accepts; device paths belong to the machine it will run on.
        try {
            ConfigLoader.parse(yaml.toString(), "<converted>", ConfigLoader.Options.NO_DEVICE_CHECK);
        } catch (ConfigException e) {
            List<ConfigError> errs = new ArrayList<>();
            for (ConfigError err : e.errors()) {
                errs.add(new ConfigError(source, 1, 1, "", "the converted configuration is not valid: " + err));
            }
            throw new ConfigException(errs);
        }
        return new Result(yaml.toString(), config, List.copyOf(importer.p.warnings()));
    }

    private TargetConfig convert(Node root) {
        if (root == null) {
            p.error(1, 1, "", "the file is empty; expected nvmetcli's JSON object with hosts, ports, subsystems");
            return null;
        }
        MapReader top = MapReader.of(p, root, "");
        if (top == null) {
            return null;
        }
        List<HostSection> hosts = new ArrayList<>();
        List<Node> hostNodes = top.list("hosts");
        for (int i = 0; i < hostNodes.size(); i++) {
            MapReader h = MapReader.of(p, hostNodes.get(i), "hosts[" + i + "]");
            if (h == null) {
                continue;
            }
            String nqn = nqn(h, "nqn");
            warnUnread(h);
            if (nqn != null) {
                hosts.add(new HostSection(nqn));
            }
        }
        List<SubsystemSection> subsystems = new ArrayList<>();
        List<Node> subNodes = top.list("subsystems");
        for (int i = 0; i < subNodes.size(); i++) {
            MapReader s = MapReader.of(p, subNodes.get(i), "subsystems[" + i + "]");
            if (s != null) {
                SubsystemSection sub = subsystem(s);
                if (sub != null) {
                    subsystems.add(sub);
                }
            }
        }
        List<PortSection> ports = new ArrayList<>();
        List<Node> portNodes = top.list("ports");
        for (int i = 0; i < portNodes.size(); i++) {
            MapReader m = MapReader.of(p, portNodes.get(i), "ports[" + i + "]");
            if (m != null) {
                PortSection port = port(m);
                if (port != null) {
                    ports.add(port);
                }
            }
        }
        warnUnread(top);
        return new TargetConfig(hosts, ports, subsystems, TransportSection.defaults(), DiscoverySection.defaults(),
                MetricsSection.defaults(), LoggingSection.defaults());
    }

    private SubsystemSection subsystem(MapReader s) {
        String nqn = nqn(s, "nqn");
        MapReader attr = s.map("attr");
        boolean anyHost = false;
        String serial = nqn == null ? null : ConfigLoader.derivedSerial(nqn);
        String model = SubsystemSection.DEFAULT_MODEL;
        String firmware = SubsystemSection.DEFAULT_FIRMWARE;
        int version = SubsystemConfig.DEFAULT_VERSION;
        int ieeeOui = SubsystemConfig.DEFAULT_IEEE_OUI;
        TransportSection t = TransportSection.defaults();
        int cntlidMin = (int) Limits.CNTLID.min();
        int cntlidMax = (int) Limits.CNTLID.max();
        int maxQid = t.maxIoQpairsPerCtrlr();
        if (attr != null) {
            anyHost = number(attr, "allow_any_host", 0) != 0;
            serial = attr.has("serial") ? text(attr, "serial") : serial;
            model = attr.has("model") ? text(attr, "model") : model;
            firmware = attr.has("firmware") ? text(attr, "firmware") : firmware;
            if (number(attr, "pi_enable", 0) != 0) {
                p.warning(attr.value("pi_enable"), attr.path("pi_enable"), "protection information is not "
                        + "supported; the subsystem is converted without it");
            }
            if (attr.has("version")) {
                String v = text(attr, "version");
                version = ConfigLoader.parseVersion(v);
                if (version < 0) {
                    p.error(attr.value("version"), attr.path("version"), "'" + v + "' is not an NVMe version this "
                            + "target can report (MAJOR.MINOR[.TERTIARY], major " + Limits.VERSION_MAJOR.text() + ")");
                    version = SubsystemConfig.DEFAULT_VERSION;
                }
            }
            cntlidMin = (int) number(attr, "cntlid_min", cntlidMin);
            cntlidMax = (int) number(attr, "cntlid_max", cntlidMax);
            maxQid = (int) number(attr, "qid_max", maxQid);
            if (attr.has("ieee_oui")) {
                long oui = ConfigLoader.parseInteger(text(attr, "ieee_oui"));
                if (!Limits.IEEE_OUI.contains(oui)) {
                    p.error(attr.value("ieee_oui"), attr.path("ieee_oui"), "expected a 24-bit IEEE OUI such as "
                            + "0x001b21, found " + MapReader.describe(attr.value("ieee_oui")));
                } else {
                    ieeeOui = (int) oui;
                }
            }
            // Vendor ids are the kernel's own (PCI ids of Linux); this target reports its own.
            attr.value("vendor_id");
            attr.value("subsys_vendor_id");
            warnUnread(attr);
        }
        List<String> allowed = new ArrayList<>();
        List<Node> hostNodes = s.list("allowed_hosts");
        for (int i = 0; i < hostNodes.size(); i++) {
            Node n = hostNodes.get(i);
            if (n instanceof ScalarNode sc && !MapReader.isNull(n)) {
                allowed.add(sc.getValue());
            } else {
                p.error(n, s.path("allowed_hosts") + "[" + i + "]", "expected a host NQN, found "
                        + MapReader.describe(n));
            }
        }
        List<NamespaceSection> namespaces = new ArrayList<>();
        List<Node> nsNodes = s.list("namespaces");
        for (int i = 0; i < nsNodes.size(); i++) {
            MapReader n = MapReader.of(p, nsNodes.get(i), s.path("namespaces") + "[" + i + "]");
            if (n != null && nqn != null) {
                NamespaceSection ns = namespace(n, nqn);
                if (ns != null) {
                    namespaces.add(ns);
                }
            }
        }
        warnUnread(s);
        if (nqn == null) {
            return null;
        }
        // nvmetcli refuses allow_any_host with explicit hosts too; keep the stricter reading: hosts win.
        if (anyHost && !allowed.isEmpty()) {
            p.warning(attr == null ? s.node() : attr.value("allow_any_host"), s.path("attr.allow_any_host"),
                    "allow_any_host is set together with allowed_hosts; converted as allowed_hosts only");
            anyHost = false;
        }
        return new SubsystemSection(nqn, serial, model, firmware, anyHost, allowed, namespaces, cntlidMin, cntlidMax,
                maxQid, version, ieeeOui);
    }

    private NamespaceSection namespace(MapReader n, String subsystemNqn) {
        long nsid = number(n, "nsid", -1);
        if (!n.has("nsid")) {
            p.error(n.node(), n.path(), "missing required key 'nsid'");
        }
        boolean enabled = number(n, "enable", 1) != 0;
        // The kernel keeps buffered_io beside device_path (configfs namespaces/N/buffered_io); accept it there and
        // inside "device", where hand-written files put it.
        boolean bufferedIo = number(n, "buffered_io", 0) != 0;
        Node bufferedIoNode = n.value("buffered_io");
        MapReader device = n.map("device");
        String path = null;
        UUID uuid = null;
        String nguid = null;
        if (device == null) {
            p.error(n.node(), n.path(), "missing required key 'device'");
        } else {
            path = device.has("path") ? text(device, "path") : null;
            if (path == null || path.isEmpty()) {
                p.error(device.node(), device.path("path"), "the namespace has no device path");
            }
            if (device.has("uuid")) {
                String u = text(device, "uuid");
                try {
                    uuid = UUID.fromString(u);
                } catch (IllegalArgumentException e) {
                    p.error(device.value("uuid"), device.path("uuid"), "'" + u + "' is not a UUID");
                }
            }
            if (device.has("nguid")) {
                String g = text(device, "nguid").replace("-", "").toLowerCase(Locale.ROOT);
                // The kernel shows an unset NGUID as zeroes, and nvmetcli saves it that way.
                if (!g.chars().allMatch(c -> c == '0')) {
                    nguid = g;
                }
            }
            if (device.has("buffered_io")) {
                bufferedIo |= number(device, "buffered_io", 0) != 0;
                bufferedIoNode = device.value("buffered_io");
            }
            warnUnread(device);
        }
        int anaGroup = (int) number(n, "ana_grpid", Limits.ANA_GROUP.min());
        if (!Limits.ANA_GROUP.contains(anaGroup)) {
            p.error(n.value("ana_grpid"), n.path("ana_grpid"), "ANA group " + anaGroup + " is out of range "
                    + Limits.ANA_GROUP.text());
            anaGroup = (int) Limits.ANA_GROUP.min();
        }
        warnUnread(n);
        if (path == null || path.isEmpty() || nsid <= 0) {
            return null;
        }
        NamespaceSection.Kind kind = path.startsWith("/dev/") ? NamespaceSection.Kind.DEVICE
                : NamespaceSection.Kind.FILE;
        if (uuid == null) {
            uuid = ConfigLoader.derivedUuid(subsystemNqn, nsid);
        }
        if (bufferedIo && kind == NamespaceSection.Kind.DEVICE) {
            p.warning(bufferedIoNode, n.path("buffered_io"), "buffered_io on the block device " + path + " is left "
                    + "out: this target opens block devices O_DIRECT");
            bufferedIo = false;
        }
        return new NamespaceSection(nsid, kind, path, 0, uuid, nguid, false, enabled, bufferedIo, null, anaGroup);
    }

    private PortSection port(MapReader m) {
        long id = number(m, "portid", -1);
        if (!m.has("portid")) {
            p.error(m.node(), m.path(), "missing required key 'portid'");
        }
        MapReader addr = m.map("addr");
        List<String> subsystems = new ArrayList<>();
        List<Node> subNodes = m.list("subsystems");
        for (Node n : subNodes) {
            if (n instanceof ScalarNode sc && !MapReader.isNull(n)) {
                subsystems.add(sc.getValue());
            }
        }
        List<ReferralSection> referrals = new ArrayList<>();
        List<Node> referralNodes = m.list("referrals");
        for (int i = 0; i < referralNodes.size(); i++) {
            MapReader r = MapReader.of(p, referralNodes.get(i), m.path("referrals") + "[" + i + "]");
            ReferralSection referral = r == null ? null : referral(r);
            if (referral != null) {
                referrals.add(referral);
            }
        }
        List<AnaGroupSection> anaGroups = new ArrayList<>();
        List<Node> groupNodes = m.list("ana_groups");
        for (int i = 0; i < groupNodes.size(); i++) {
            MapReader group = MapReader.of(p, groupNodes.get(i), m.path("ana_groups") + "[" + i + "]");
            AnaGroupSection g = group == null ? null : anaGroup(group);
            if (g != null && anaGroups.stream().noneMatch(x -> x.grpid() == g.grpid())) {
                anaGroups.add(g);
            }
        }
        anaGroups.sort(java.util.Comparator.comparingInt(AnaGroupSection::grpid));
        int icd = -1;
        MapReader param = m.map("param");
        if (param != null) {
            long inline = number(param, "inline_data_size", -1);
            icd = (int) Math.min(inline, Integer.MAX_VALUE); // the kernel's -1 means "transport default"
            if (number(param, "pi_enable", 0) != 0) {
                p.warning(param.value("pi_enable"), param.path("pi_enable"), "protection information is not "
                        + "supported; left out");
            }
            warnUnread(param);
        }
        warnUnread(m);
        if (addr == null) {
            p.error(m.node(), m.path(), "missing required key 'addr'");
            return null;
        }
        String trtype = addr.has("trtype") ? text(addr, "trtype") : "";
        String adrfam = addr.has("adrfam") ? text(addr, "adrfam") : "ipv4";
        String traddr = addr.has("traddr") ? text(addr, "traddr") : null;
        long trsvcid = addr.has("trsvcid") ? number(addr, "trsvcid", 4420) : 4420;
        String treq = addr.has("treq") ? text(addr, "treq") : "not specified";
        addr.value("tsas");
        warnUnread(addr);
        if (!"rdma".equals(trtype)) {
            p.warning(addr.value("trtype") == null ? addr.node() : addr.value("trtype"), addr.path("trtype"),
                    "port " + id + " uses trtype '" + trtype + "'; this target serves rdma only, the port is left "
                            + "out");
            return null;
        }
        if (!"ipv4".equals(adrfam) && !"ipv6".equals(adrfam)) {
            p.warning(addr.value("adrfam"), addr.path("adrfam"), "port " + id + " uses adrfam '" + adrfam
                    + "'; only ipv4 and ipv6 are supported, the port is left out");
            return null;
        }
        if ("required".equals(treq)) {
            p.warning(addr.value("treq"), addr.path("treq"), "secure channel (treq required) is not supported; "
                    + "the port is converted without it");
        }
        if (traddr == null) {
            p.error(addr.node(), addr.path(), "missing required key 'traddr'");
            return null;
        }
        if (id <= 0 || id > 65535) {
            if (m.has("portid")) {
                p.error(m.value("portid"), m.path("portid"), "port id must be 1 to 65535");
            }
            return null;
        }
        TransportSection t = TransportSection.defaults();
        return new PortSection((int) id, "rdma", adrfam, traddr, (int) trsvcid, icd >= 0 ? icd
                : t.inCapsuleDataSize(), t.maxQueueDepth(), subsystems, referrals, anaGroups);
    }

    /** An ANA group of a port: {@code {grpid, ana {state}}} (configfs ports/N/ana_groups/G/ana_state). */
    private AnaGroupSection anaGroup(MapReader g) {
        long grpid = number(g, "grpid", -1);
        MapReader ana = g.map("ana");
        String name = ana != null && ana.has("state") ? text(ana, "state") : null;
        if (ana != null) {
            warnUnread(ana);
        }
        warnUnread(g);
        if (!Limits.ANA_GROUP.contains(grpid)) {
            p.error(g.value("grpid") == null ? g.node() : g.value("grpid"), g.path("grpid"), "expected an ANA group "
                    + "id " + Limits.ANA_GROUP.text());
            return null;
        }
        AnaState state = name == null ? null : AnaState.ofName(name);
        if (state == null) {
            p.error(ana == null ? g.node() : ana.value("state") == null ? ana.node() : ana.value("state"),
                    g.path("ana.state"), "expected an ANA state (" + AnaState.names() + "), found "
                            + (name == null ? "none" : "'" + name + "'"));
            return null;
        }
        return new AnaGroupSection((int) grpid, state);
    }

    /** A referral: {@code {name, addr {trtype, adrfam, traddr, trsvcid, portid, treq}}}; null when left out. */
    private ReferralSection referral(MapReader r) {
        r.value("name"); // the configfs directory name: nothing a host sees
        MapReader addr = r.map("addr");
        warnUnread(r);
        if (addr == null) {
            p.error(r.node(), r.path(), "missing required key 'addr'");
            return null;
        }
        String trtype = addr.has("trtype") ? text(addr, "trtype") : "rdma";
        String adrfam = addr.has("adrfam") ? text(addr, "adrfam") : "ipv4";
        String traddr = addr.has("traddr") ? text(addr, "traddr") : null;
        long trsvcid = addr.has("trsvcid") ? number(addr, "trsvcid", 4420) : 4420;
        long portid = addr.has("portid") ? number(addr, "portid", 0) : 0;
        String treq = addr.has("treq") ? text(addr, "treq") : "not specified";
        addr.value("tsas");
        warnUnread(addr);
        if (!"rdma".equals(trtype) && !"tcp".equals(trtype)) {
            p.warning(addr.value("trtype") == null ? addr.node() : addr.value("trtype"), addr.path("trtype"),
                    "a referral to trtype '" + trtype + "' is left out: this target lists rdma and tcp referrals");
            return null;
        }
        if ("required".equals(treq)) {
            p.warning(addr.value("treq"), addr.path("treq"), "secure channel (treq required) is not supported; "
                    + "the referral is converted without it");
        }
        if (traddr == null) {
            p.error(addr.node(), addr.path(), "missing required key 'traddr'");
            return null;
        }
        return new ReferralSection(trtype, adrfam, traddr, (int) trsvcid, (int) portid);
    }

    private String nqn(MapReader m, String key) {
        String nqn = m.requiredString(key);
        if (nqn == null) {
            return null;
        }
        String problem = Nqn.problem(nqn);
        if (problem != null) {
            p.error(m.value(key), m.path(key), problem);
            return null;
        }
        String form = Nqn.nonconformance(nqn);
        if (form != null) {
            p.warning(m.value(key), m.path(key), form + "; kept unchanged, as the kernel target and the Linux host "
                    + "accept it and hosts already connect with it");
        }
        return nqn;
    }

    /** A scalar as text (nvmetcli writes numbers and strings interchangeably). */
    private String text(MapReader m, String key) {
        Node v = m.value(key);
        if (v instanceof ScalarNode s && !MapReader.isNull(v)) {
            return s.getValue();
        }
        p.error(v == null ? m.node() : v, m.path(key), "expected a string, found " + MapReader.describe(v));
        return "";
    }

    /** An integer written as a number or as a string of digits ("4420", "0"). */
    private long number(MapReader m, String key, long fallback) {
        Node v = m.value(key);
        if (v == null) {
            return fallback;
        }
        if (v instanceof ScalarNode s && (s.getTag().equals(Tag.INT) || s.getTag().equals(Tag.STR))) {
            try {
                return Long.parseLong(s.getValue().trim());
            } catch (NumberFormatException e) {
                // reported below
            }
        }
        if (v instanceof ScalarNode s && s.getTag().equals(Tag.BOOL)) {
            return Boolean.parseBoolean(s.getValue()) ? 1 : 0;
        }
        p.error(v, m.path(key), "expected a number, found " + MapReader.describe(v));
        return fallback;
    }

    private void warnUnread(MapReader m) {
        for (String key : m.unread()) {
            p.warning(m.keyNode(key), m.path(key), "'" + key + "' is not supported by this target; left out");
        }
    }
}
