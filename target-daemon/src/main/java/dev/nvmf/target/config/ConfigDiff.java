package dev.nvmf.target.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What a reload changes, as data the runtime applies in order: removals first (ports, then subsystems, then
 * hosts), then additions (hosts, subsystems, ports), so a subsystem is never exposed on a port before it exists
 * and never exists without the hosts it allows.
 *
 * <p>Identity: hosts and subsystems by NQN, namespaces by NSID within their subsystem, ports by id. A namespace
 * whose backing (device/file/RAM size, any key of an RBD image including its user and keyring) or identifiers
 * changed is reported as changed; the runtime removes and re-adds it (hosts see a namespace-attribute-changed event).
 * A port whose address or queue parameters changed must be re-created ({@link PortChange#listenerChanged}); one whose
 * subsystem list or referrals alone changed is re-linked.
 *
 * <p>What applies live and what on restart: allowed hosts, allow_any_host, namespaces, subsystems, hosts, ports,
 * referrals, ANA groups (a port's states, a namespace's group: {@link PortChange#anaGroupsChanged},
 * {@link NamespaceChange#anaGroupOnly}), discovery.all_ports and logging apply live. A subsystem's identity and limits (serial, model, firmware,
 * version, ieee_oui, cntlid_min, cntlid_max, max_qid: {@link #RESTART_SUBSYSTEM_ATTRIBUTES}) take effect on restart,
 * since connected hosts hold the old values (the kernel target refuses to change most of them once a host has seen
 * the subsystem); transport tuning and the metrics listener too ({@link #restartRequired}).
 *
 * @param hostsAdded         host NQNs newly defined
 * @param hostsRemoved       host NQNs no longer defined
 * @param subsystemsAdded    whole new subsystems (with their namespaces and allowed hosts)
 * @param subsystemsRemoved  NQNs of subsystems that go away (their controllers are disconnected)
 * @param subsystemsChanged  subsystems present in both with differences
 * @param portsAdded         new listeners
 * @param portsRemoved       ids of listeners that go away
 * @param portsChanged       listeners present in both with differences
 * @param restartRequired    settings that changed but only take effect on restart (transport tuning, metrics
 *                           listener), as "key: old -> new"
 * @param loggingChanged     the logging settings changed (applied live by the service itself)
 * @param discoveryChanged   the discovery section changed (applied live)
 */
public record ConfigDiff(List<String> hostsAdded, List<String> hostsRemoved,
                         List<SubsystemSection> subsystemsAdded, List<String> subsystemsRemoved,
                         List<SubsystemChange> subsystemsChanged,
                         List<PortSection> portsAdded, List<Integer> portsRemoved, List<PortChange> portsChanged,
                         List<String> restartRequired, boolean loggingChanged, boolean discoveryChanged) {
    /** Subsystem attributes that a reload records but that take effect on restart. */
    public static final Set<String> RESTART_SUBSYSTEM_ATTRIBUTES = Set.of("serial", "model", "firmware", "version",
            "ieee_oui", "cntlid_min", "cntlid_max", "max_qid");

    /**
     * Differences within one subsystem.
     *
     * @param nqn                 the subsystem
     * @param before              its old configuration
     * @param after               its new configuration
     * @param attributesChanged   names of changed attributes among serial, model, firmware, version, ieee_oui,
     *                            cntlid_min, cntlid_max, max_qid, allow_any_host
     * @param namespacesAdded     new namespaces
     * @param namespacesRemoved   NSIDs that go away
     * @param namespacesChanged   namespaces whose settings differ (same NSID)
     * @param allowedHostsAdded   host NQNs now allowed
     * @param allowedHostsRemoved host NQNs no longer allowed (their controllers on this subsystem are
     *                            disconnected, as the kernel target does)
     */
    public record SubsystemChange(String nqn, SubsystemSection before, SubsystemSection after,
                                  List<String> attributesChanged, List<NamespaceSection> namespacesAdded,
                                  List<Long> namespacesRemoved, List<NamespaceChange> namespacesChanged,
                                  List<String> allowedHostsAdded, List<String> allowedHostsRemoved) {}

    /**
     * One namespace, before and after; {@link #enabledOnly} when nothing but the enabled flag changed,
     * {@link #anaGroupOnly} when nothing but the ANA group did (applied live without touching the namespace).
     */
    public record NamespaceChange(NamespaceSection before, NamespaceSection after) {
        public boolean enabledOnly() {
            return before.enabled() != after.enabled() && before.withEnabled(after.enabled()).equals(after);
        }

        public boolean anaGroupOnly() {
            return before.anaGroup() != after.anaGroup() && before.withAnaGroup(after.anaGroup()).equals(after);
        }
    }

    /**
     * One port, before and after.
     *
     * @param listenerChanged   address or queue parameters changed: the listener is re-created
     * @param subsystemsAdded   subsystems now exposed on it
     * @param subsystemsRemoved subsystems no longer exposed (their controllers through this port disconnect)
     * @param referralsAdded    referrals now listed by this port's discovery log
     * @param referralsRemoved  referrals no longer listed
     */
    public record PortChange(int id, PortSection before, PortSection after, boolean listenerChanged,
                             List<String> subsystemsAdded, List<String> subsystemsRemoved,
                             List<ReferralSection> referralsAdded, List<ReferralSection> referralsRemoved) {
        /**
         * The ANA groups whose entry in this port's {@code ana_groups} changed (a state changed, or the group was
         * added or removed), ascending. A reload applies these and only these, so a state an operator set with
         * {@code nvmf-target ana set} stays until the file changes that group on that port.
         */
        public List<Integer> anaGroupsChanged() {
            Set<Integer> groups = new java.util.TreeSet<>();
            before.anaGroups().forEach(g -> groups.add(g.grpid()));
            after.anaGroups().forEach(g -> groups.add(g.grpid()));
            return groups.stream()
                    .filter(g -> !before.configuredAnaState(g).equals(after.configuredAnaState(g))).toList();
        }
    }

    public static ConfigDiff between(TargetConfig before, TargetConfig after) {
        List<String> hostsAdded = added(nqns(before.hosts()), nqns(after.hosts()));
        List<String> hostsRemoved = added(nqns(after.hosts()), nqns(before.hosts()));

        Map<String, SubsystemSection> oldSubs = new LinkedHashMap<>();
        before.subsystems().forEach(s -> oldSubs.put(s.nqn(), s));
        Map<String, SubsystemSection> newSubs = new LinkedHashMap<>();
        after.subsystems().forEach(s -> newSubs.put(s.nqn(), s));
        List<SubsystemSection> subsAdded = new ArrayList<>();
        List<String> subsRemoved = new ArrayList<>();
        List<SubsystemChange> subsChanged = new ArrayList<>();
        for (SubsystemSection s : after.subsystems()) {
            SubsystemSection old = oldSubs.get(s.nqn());
            if (old == null) {
                subsAdded.add(s);
            } else if (!old.equals(s)) {
                subsChanged.add(subsystemChange(old, s));
            }
        }
        for (String nqn : oldSubs.keySet()) {
            if (!newSubs.containsKey(nqn)) {
                subsRemoved.add(nqn);
            }
        }

        Map<Integer, PortSection> oldPorts = new LinkedHashMap<>();
        before.ports().forEach(p -> oldPorts.put(p.id(), p));
        Set<Integer> newIds = new LinkedHashSet<>();
        List<PortSection> portsAdded = new ArrayList<>();
        List<PortChange> portsChanged = new ArrayList<>();
        for (PortSection p : after.ports()) {
            newIds.add(p.id());
            PortSection old = oldPorts.get(p.id());
            if (old == null) {
                portsAdded.add(p);
            } else if (!old.equals(p)) {
                portsChanged.add(new PortChange(p.id(), old, p, old.listenerDiffers(p),
                        added(old.subsystems(), p.subsystems()), added(p.subsystems(), old.subsystems()),
                        added(old.referrals(), p.referrals()), added(p.referrals(), old.referrals())));
            }
        }
        List<Integer> portsRemoved = new ArrayList<>();
        for (Integer id : oldPorts.keySet()) {
            if (!newIds.contains(id)) {
                portsRemoved.add(id);
            }
        }

        List<String> restart = new ArrayList<>();
        TransportSection a = before.transport();
        TransportSection b = after.transport();
        change(restart, "transport.max_queue_depth", a.maxQueueDepth(), b.maxQueueDepth());
        change(restart, "transport.max_io_qpairs_per_ctrlr", a.maxIoQpairsPerCtrlr(), b.maxIoQpairsPerCtrlr());
        change(restart, "transport.in_capsule_data_size", a.inCapsuleDataSize(), b.inCapsuleDataSize());
        change(restart, "transport.max_io_size", a.maxIoSize(), b.maxIoSize());
        change(restart, "transport.max_aq_depth", a.maxAqDepth(), b.maxAqDepth());
        change(restart, "transport.pollers", a.pollers(), b.pollers());
        change(restart, "transport.drain_timeout", a.drainTimeout(), b.drainTimeout());
        change(restart, "transport.zero_copy", a.zeroCopy(), b.zeroCopy());
        change(restart, "transport.busy_poll", Durations.format(a.busyPollNanos()), Durations.format(b.busyPollNanos()));
        change(restart, "transport.srq", a.srq(), b.srq());
        change(restart, "transport.srq_depth", a.srqDepth(), b.srqDepth());
        change(restart, "transport.poller_cpus", a.pollerCpus(), b.pollerCpus());
        change(restart, "metrics.enabled", before.metrics().enabled(), after.metrics().enabled());
        change(restart, "metrics.listen", before.metrics().listen(), after.metrics().listen());

        return new ConfigDiff(hostsAdded, hostsRemoved, subsAdded, subsRemoved, subsChanged, portsAdded,
                portsRemoved, portsChanged, restart, !before.logging().equals(after.logging()),
                !before.discovery().equals(after.discovery()));
    }

    private static SubsystemChange subsystemChange(SubsystemSection old, SubsystemSection now) {
        List<String> attrs = new ArrayList<>();
        if (!old.serial().equals(now.serial())) {
            attrs.add("serial");
        }
        if (!old.model().equals(now.model())) {
            attrs.add("model");
        }
        if (!old.firmware().equals(now.firmware())) {
            attrs.add("firmware");
        }
        if (old.version() != now.version()) {
            attrs.add("version");
        }
        if (old.ieeeOui() != now.ieeeOui()) {
            attrs.add("ieee_oui");
        }
        if (old.cntlidMin() != now.cntlidMin()) {
            attrs.add("cntlid_min");
        }
        if (old.cntlidMax() != now.cntlidMax()) {
            attrs.add("cntlid_max");
        }
        if (old.maxQid() != now.maxQid()) {
            attrs.add("max_qid");
        }
        if (old.allowAnyHost() != now.allowAnyHost()) {
            attrs.add("allow_any_host");
        }
        List<NamespaceSection> nsAdded = new ArrayList<>();
        List<NamespaceChange> nsChanged = new ArrayList<>();
        for (NamespaceSection n : now.namespaces()) {
            var prior = old.namespace(n.nsid());
            if (prior.isEmpty()) {
                nsAdded.add(n);
            } else if (!prior.get().equals(n)) {
                nsChanged.add(new NamespaceChange(prior.get(), n));
            }
        }
        List<Long> nsRemoved = new ArrayList<>();
        for (NamespaceSection n : old.namespaces()) {
            if (now.namespace(n.nsid()).isEmpty()) {
                nsRemoved.add(n.nsid());
            }
        }
        return new SubsystemChange(now.nqn(), old, now, attrs, nsAdded, nsRemoved, nsChanged,
                added(old.allowedHosts(), now.allowedHosts()), added(now.allowedHosts(), old.allowedHosts()));
    }

    /** " (rbd: id, keyring)" when both sides are RBD images and keys under rbd changed: names, never values. */
    private static String rbdKeysChanged(NamespaceChange n) {
        RbdSection before = n.before().rbd();
        RbdSection after = n.after().rbd();
        if (before == null || after == null || before.equals(after)) {
            return "";
        }
        return " (rbd: " + String.join(", ", after.keysChangedFrom(before)) + ")";
    }

    private static void change(List<String> out, String key, Object before, Object after) {
        if (!Objects.equals(before, after)) {
            out.add(key + ": " + before + " -> " + after);
        }
    }

    private static List<String> nqns(List<HostSection> hosts) {
        return hosts.stream().map(HostSection::nqn).toList();
    }

    /** Items of {@code after} not in {@code before}, in order. */
    private static <T> List<T> added(List<T> before, List<T> after) {
        Set<T> b = new LinkedHashSet<>(before);
        return after.stream().filter(x -> !b.contains(x)).toList();
    }

    public boolean isEmpty() {
        return hostsAdded.isEmpty() && hostsRemoved.isEmpty() && subsystemsAdded.isEmpty()
                && subsystemsRemoved.isEmpty() && subsystemsChanged.isEmpty() && portsAdded.isEmpty()
                && portsRemoved.isEmpty() && portsChanged.isEmpty() && restartRequired.isEmpty() && !loggingChanged
                && !discoveryChanged;
    }

    /** One line per change, "+"/"-"/"~" prefixed, for the log and {@code check-config --against}. */
    public List<String> describe() {
        List<String> out = new ArrayList<>();
        portsRemoved.forEach(id -> out.add("- port " + id));
        subsystemsRemoved.forEach(nqn -> out.add("- subsystem " + nqn));
        hostsRemoved.forEach(nqn -> out.add("- host " + nqn));
        hostsAdded.forEach(nqn -> out.add("+ host " + nqn));
        for (SubsystemSection s : subsystemsAdded) {
            out.add("+ subsystem " + s.nqn() + " (" + s.namespaces().size() + " namespaces)");
        }
        for (SubsystemChange c : subsystemsChanged) {
            c.attributesChanged().forEach(a -> out.add(RESTART_SUBSYSTEM_ATTRIBUTES.contains(a)
                    ? "! subsystem " + c.nqn() + " " + a + " (takes effect on restart)"
                    : "~ subsystem " + c.nqn() + " " + a));
            c.namespacesRemoved().forEach(n -> out.add("- namespace " + c.nqn() + " nsid " + n));
            c.namespacesAdded().forEach(n -> out.add("+ namespace " + c.nqn() + " nsid " + n.nsid() + " "
                    + n.describeBacking()));
            c.namespacesChanged().forEach(n -> out.add("~ namespace " + c.nqn() + " nsid " + n.after().nsid()
                    + (n.enabledOnly() ? (n.after().enabled() ? " enabled" : " disabled")
                    : n.anaGroupOnly() ? " ana_group " + n.before().anaGroup() + " -> " + n.after().anaGroup()
                    : " " + n.after().describeBacking() + rbdKeysChanged(n))));
            c.allowedHostsRemoved().forEach(h -> out.add("- allowed host " + h + " on " + c.nqn()));
            c.allowedHostsAdded().forEach(h -> out.add("+ allowed host " + h + " on " + c.nqn()));
        }
        portsAdded.forEach(p -> out.add("+ port " + p.id() + " " + p.endpoint()));
        for (PortChange c : portsChanged) {
            if (c.listenerChanged()) {
                out.add("~ port " + c.id() + " " + c.before().endpoint() + " -> " + c.after().endpoint()
                        + " (listener re-created)");
            }
            c.subsystemsRemoved().forEach(s -> out.add("- port " + c.id() + " subsystem " + s));
            c.subsystemsAdded().forEach(s -> out.add("+ port " + c.id() + " subsystem " + s));
            c.referralsRemoved().forEach(r -> out.add("- port " + c.id() + " referral " + r.describe()));
            c.referralsAdded().forEach(r -> out.add("+ port " + c.id() + " referral " + r.describe()));
            if (!c.listenerChanged()) {
                c.anaGroupsChanged().forEach(g -> out.add("~ port " + c.id() + " ana group " + g + ": "
                        + c.before().anaState(g) + " -> " + c.after().anaState(g)));
            }
        }
        if (discoveryChanged) {
            out.add("~ discovery.all_ports");
        }
        if (loggingChanged) {
            out.add("~ logging");
        }
        restartRequired.forEach(r -> out.add("! " + r + " (takes effect on restart)"));
        return out;
    }
}
