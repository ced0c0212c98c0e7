package dev.nvmf.target.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;
import org.snakeyaml.engine.v2.common.FlowStyle;

/**
 * Writes a configuration as YAML in the same shape {@link ConfigLoader} reads, every value explicit (the
 * "effective configuration" of {@code check-config}, and the output of {@code import-nvmetcli}).
 */
public final class ConfigWriter {
    private ConfigWriter() {}

    public static String toYaml(TargetConfig config) {
        DumpSettings settings = DumpSettings.builder().setDefaultFlowStyle(FlowStyle.BLOCK).setIndent(2)
                .setIndicatorIndent(2).setIndentWithIndicator(true).setWidth(120).build();
        return new Dump(settings).dumpToString(toMap(config));
    }

    /** Every key of an RBD image; the optional ones only when set (absent means librados' default search). */
    static Map<String, Object> rbd(RbdSection r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("pool", r.pool());
        if (r.namespace() != null) {
            m.put("namespace", r.namespace());
        }
        m.put("image", r.image());
        if (r.snapshot() != null) {
            m.put("snapshot", r.snapshot());
        }
        if (r.conf() != null) {
            m.put("conf", r.conf());
        }
        m.put("id", r.id());
        if (r.keyring() != null) {
            m.put("keyring", r.keyring());
        }
        m.put("block_size", r.blockSize());
        m.put("connect_timeout", r.connectTimeoutSeconds());
        m.put("osd_op_timeout", r.osdOpTimeoutSeconds());
        m.put("mon_op_timeout", r.monOpTimeoutSeconds());
        return m;
    }

    static Map<String, Object> toMap(TargetConfig c) {
        Map<String, Object> root = new LinkedHashMap<>();
        List<Object> hosts = new ArrayList<>();
        for (HostSection h : c.hosts()) {
            hosts.add(Map.of("nqn", h.nqn()));
        }
        root.put("hosts", hosts);
        List<Object> ports = new ArrayList<>();
        for (PortSection p : c.ports()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", p.id());
            m.put("trtype", p.trtype());
            m.put("adrfam", p.adrfam());
            m.put("traddr", p.traddr());
            m.put("trsvcid", p.trsvcid());
            m.put("in_capsule_data_size", p.inCapsuleDataSize());
            m.put("max_queue_size", p.maxQueueSize());
            m.put("subsystems", new ArrayList<>(p.subsystems()));
            List<Object> referrals = new ArrayList<>();
            for (ReferralSection r : p.referrals()) {
                Map<String, Object> rm = new LinkedHashMap<>();
                rm.put("trtype", r.trtype());
                rm.put("adrfam", r.adrfam());
                rm.put("traddr", r.traddr());
                rm.put("trsvcid", r.trsvcid());
                rm.put("portid", r.portid());
                referrals.add(rm);
            }
            m.put("referrals", referrals);
            List<Object> groups = new ArrayList<>();
            for (AnaGroupSection g : p.anaGroups()) {
                Map<String, Object> gm = new LinkedHashMap<>();
                gm.put("grpid", g.grpid());
                gm.put("state", g.state().configName());
                groups.add(gm);
            }
            m.put("ana_groups", groups);
            ports.add(m);
        }
        root.put("ports", ports);
        List<Object> subsystems = new ArrayList<>();
        for (SubsystemSection s : c.subsystems()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("nqn", s.nqn());
            m.put("serial", s.serial());
            m.put("model", s.model());
            m.put("firmware", s.firmware());
            m.put("version", s.versionText());
            m.put("ieee_oui", s.ieeeOuiText());
            m.put("cntlid_min", s.cntlidMin());
            m.put("cntlid_max", s.cntlidMax());
            m.put("max_qid", s.maxQid());
            m.put("allow_any_host", s.allowAnyHost());
            m.put("allowed_hosts", new ArrayList<>(s.allowedHosts()));
            List<Object> namespaces = new ArrayList<>();
            for (NamespaceSection n : s.namespaces()) {
                Map<String, Object> nm = new LinkedHashMap<>();
                nm.put("nsid", n.nsid());
                switch (n.kind()) {
                    case DEVICE -> nm.put("device", n.path());
                    case FILE -> nm.put("file", n.path());
                    case RAM -> nm.put("ram_size", Sizes.format(n.ramSize()));
                    case RBD -> nm.put("rbd", rbd(n.rbd()));
                }
                if (n.uuid() != null) {
                    nm.put("uuid", n.uuid().toString());
                }
                if (n.nguid() != null) {
                    nm.put("nguid", n.nguid());
                }
                nm.put("ana_group", n.anaGroup());
                nm.put("read_only", n.readOnly());
                nm.put("enabled", n.enabled());
                if (n.kind() == NamespaceSection.Kind.FILE) {
                    nm.put("buffered_io", n.bufferedIo());
                }
                namespaces.add(nm);
            }
            m.put("namespaces", namespaces);
            subsystems.add(m);
        }
        root.put("subsystems", subsystems);
        TransportSection t = c.transport();
        Map<String, Object> tm = new LinkedHashMap<>();
        tm.put("max_queue_depth", t.maxQueueDepth());
        tm.put("max_io_qpairs_per_ctrlr", t.maxIoQpairsPerCtrlr());
        tm.put("in_capsule_data_size", t.inCapsuleDataSize());
        tm.put("max_io_size", t.maxIoSize());
        tm.put("max_aq_depth", t.maxAqDepth());
        tm.put("pollers", t.pollers());
        tm.put("drain_timeout", t.drainTimeout());
        tm.put("zero_copy", t.zeroCopy());
        tm.put("busy_poll", Durations.format(t.busyPollNanos()));
        tm.put("srq", t.srq());
        // Only where it says something: srq_depth without srq is warned about when the file is read back.
        if (t.srq() || t.srqDepth() != TransportSection.DEFAULT_SRQ_DEPTH) tm.put("srq_depth", t.srqDepth());
        if (!t.pollerCpus().isEmpty()) tm.put("poller_cpus", t.pollerCpus());
        root.put("transport", tm);
        root.put("discovery", Map.of("all_ports", c.discovery().allPorts()));
        Map<String, Object> mm = new LinkedHashMap<>();
        mm.put("enabled", c.metrics().enabled());
        mm.put("listen", c.metrics().listen());
        root.put("metrics", mm);
        Map<String, Object> lm = new LinkedHashMap<>();
        lm.put("level", c.logging().level().name().toLowerCase(Locale.ROOT));
        lm.put("format", c.logging().format().name().toLowerCase(Locale.ROOT));
        root.put("logging", lm);
        return root;
    }
}
