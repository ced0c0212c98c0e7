package dev.nvmf.target.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class ConfigDiffTest {
    private static final String A = "nqn.2024-01.dev.nvmf:a";
    private static final String B = "nqn.2024-01.dev.nvmf:b";
    private static final String C = "nqn.2024-01.dev.nvmf:c";
    private static final String H1 = "nqn.2024-01.dev.nvmf:host1";
    private static final String H2 = "nqn.2024-01.dev.nvmf:host2";

    private static final String BEFORE = """
            hosts: [{nqn: %s}, {nqn: %s}]
            subsystems:
              - nqn: %s
                allowed_hosts: [%s]
                namespaces:
                  - {nsid: 1, ram_size: 1MiB}
                  - {nsid: 2, ram_size: 2MiB}
                  - {nsid: 3, ram_size: 2MiB}
              - nqn: %s
                allow_any_host: true
            ports:
              - {id: 1, traddr: 10.0.0.1, subsystems: [%s, %s]}
              - {id: 2, traddr: 10.0.0.2, subsystems: [%s]}
            """.formatted(H1, H2, A, H1, B, A, B, B);

    private static final String AFTER = """
            hosts: [{nqn: %s}]
            subsystems:
              - nqn: %s
                model: renamed
                allowed_hosts: [%s]
                namespaces:
                  - {nsid: 1, ram_size: 1MiB}
                  - {nsid: 2, ram_size: 4MiB}
                  - {nsid: 3, ram_size: 2MiB, enabled: false}
                  - {nsid: 7, file: /srv/seven.img}
              - nqn: %s
                allow_any_host: true
            ports:
              - {id: 1, traddr: 10.0.0.1, subsystems: [%s, %s]}
              - {id: 3, traddr: 10.0.0.3, trsvcid: 4421, subsystems: [%s]}
            transport:
              pollers: 2
            logging:
              level: debug
            """.formatted(H1, A, H1, C, A, C, C);

    private static TargetConfig load(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK).config();
    }

    @Test
    void pinningThePollersTakesARestart() throws Exception {
        ConfigDiff d = ConfigDiff.between(load(BEFORE), load(BEFORE + "transport:\n  poller_cpus: [1]\n"));
        assertEquals(List.of("transport.poller_cpus: [] -> [1]"), d.restartRequired());
    }

    @Test
    void identicalConfigurationsHaveAnEmptyDiff() throws Exception {
        ConfigDiff d = ConfigDiff.between(load(BEFORE), load(BEFORE));
        assertTrue(d.isEmpty());
        assertEquals(List.of(), d.describe());
    }

    @Test
    void everyKindOfChangeIsReported() throws Exception {
        TargetConfig before = load(BEFORE);
        TargetConfig after = load(AFTER);
        ConfigDiff d = ConfigDiff.between(before, after);

        assertEquals(List.of(), d.hostsAdded());
        assertEquals(List.of(H2), d.hostsRemoved());
        assertEquals(List.of(after.subsystem(C).orElseThrow()), d.subsystemsAdded());
        assertEquals(List.of(B), d.subsystemsRemoved());

        assertEquals(1, d.subsystemsChanged().size());
        ConfigDiff.SubsystemChange a = d.subsystemsChanged().get(0);
        assertEquals(A, a.nqn());
        assertEquals(List.of("model"), a.attributesChanged());
        assertEquals(List.of(after.subsystem(A).orElseThrow().namespace(7).orElseThrow()), a.namespacesAdded());
        assertEquals(List.of(), a.namespacesRemoved());
        assertEquals(2, a.namespacesChanged().size());
        assertEquals(2, a.namespacesChanged().get(0).after().nsid());
        assertEquals(false, a.namespacesChanged().get(0).enabledOnly());
        assertEquals(3, a.namespacesChanged().get(1).after().nsid());
        assertEquals(true, a.namespacesChanged().get(1).enabledOnly());

        assertEquals(List.of(after.port(3).orElseThrow()), d.portsAdded());
        assertEquals(List.of(2), d.portsRemoved());
        assertEquals(1, d.portsChanged().size());
        ConfigDiff.PortChange p1 = d.portsChanged().get(0);
        assertEquals(false, p1.listenerChanged());
        assertEquals(List.of(C), p1.subsystemsAdded());
        assertEquals(List.of(B), p1.subsystemsRemoved());

        assertEquals(List.of("transport.pollers: 1 -> 2"), d.restartRequired());
        assertEquals(true, d.loggingChanged());

        assertEquals(List.of(
                "- port 2",
                "- subsystem " + B,
                "- host " + H2,
                "+ subsystem " + C + " (0 namespaces)",
                "! subsystem " + A + " model (takes effect on restart)",
                "+ namespace " + A + " nsid 7 file:/srv/seven.img",
                "~ namespace " + A + " nsid 2 ram:4MiB",
                "~ namespace " + A + " nsid 3 disabled",
                "+ port 3 10.0.0.3:4421",
                "- port 1 subsystem " + B,
                "+ port 1 subsystem " + C,
                "~ logging",
                "! transport.pollers: 1 -> 2 (takes effect on restart)"), d.describe());
    }

    /**
     * ANA: a port's group states and a namespace's group apply live; the diff names exactly the groups whose entry
     * changed on each port, so that a state set at run time on another group is left alone.
     */
    @Test
    void anaStatesOfPortsAndGroupsOfNamespaces() throws Exception {
        String before = BEFORE.replace("{id: 1, traddr: 10.0.0.1,", "{id: 1, ana_groups: [{grpid: 1, state: optimized}, "
                + "{grpid: 2, state: inaccessible}, {grpid: 5, state: optimized}], traddr: 10.0.0.1,");
        String after = BEFORE.replace("{id: 1, traddr: 10.0.0.1,", "{id: 1, ana_groups: [{grpid: 1, state: optimized}, "
                        + "{grpid: 2, state: non-optimized}, {grpid: 4, state: change}], traddr: 10.0.0.1,")
                .replace("{id: 2, traddr: 10.0.0.2,", "{id: 2, ana_groups: [{grpid: 1, state: persistent-loss}], "
                        + "traddr: 10.0.0.2,")
                .replace("{nsid: 2, ram_size: 2MiB}", "{nsid: 2, ram_size: 2MiB, ana_group: 2}");
        ConfigDiff d = ConfigDiff.between(load(before), load(after));
        assertEquals(2, d.portsChanged().size());
        ConfigDiff.PortChange p1 = d.portsChanged().get(0);
        assertEquals(false, p1.listenerChanged(), "no listener is re-created for ANA states");
        assertEquals(List.of(2, 4, 5), p1.anaGroupsChanged(), "group 1 is the same: left out");
        assertEquals(List.of(1), d.portsChanged().get(1).anaGroupsChanged());
        ConfigDiff.NamespaceChange n2 = d.subsystemsChanged().get(0).namespacesChanged().get(0);
        assertEquals(true, n2.anaGroupOnly());
        assertEquals(false, n2.enabledOnly());
        assertEquals(List.of(
                "~ namespace " + A + " nsid 2 ana_group 1 -> 2",
                "~ port 1 ana group 2: inaccessible -> non-optimized",
                "~ port 1 ana group 4: inaccessible -> change",
                "~ port 1 ana group 5: optimized -> inaccessible",
                "~ port 2 ana group 1: optimized -> persistent-loss"), d.describe());
        // A namespace whose group and backing both change is re-created: not a group move.
        ConfigDiff both = ConfigDiff.between(load(before), load(after.replace("{nsid: 2, ram_size: 2MiB, ana_group: 2}",
                "{nsid: 2, ram_size: 4MiB, ana_group: 2}")));
        assertEquals(false, both.subsystemsChanged().get(0).namespacesChanged().get(0).anaGroupOnly());
    }

    @Test
    void allowedHostsAndListenerChanges() throws Exception {
        TargetConfig before = load(BEFORE);
        TargetConfig after = load(BEFORE.replace("allowed_hosts: [" + H1 + "]", "allowed_hosts: [" + H2 + "]")
                .replace("{id: 2, traddr: 10.0.0.2,", "{id: 2, traddr: 10.0.0.2, in_capsule_data_size: 16KiB,")
                .replace("      - {nsid: 3, ram_size: 2MiB}\n", ""));
        ConfigDiff d = ConfigDiff.between(before, after);
        ConfigDiff.SubsystemChange a = d.subsystemsChanged().get(0);
        assertEquals(List.of(H2), a.allowedHostsAdded());
        assertEquals(List.of(H1), a.allowedHostsRemoved());
        assertEquals(List.of(3L), a.namespacesRemoved());
        assertEquals(List.of(), a.attributesChanged());
        ConfigDiff.PortChange p2 = d.portsChanged().get(0);
        assertEquals(2, p2.id());
        assertEquals(true, p2.listenerChanged());
        assertEquals(List.of(
                "- namespace " + A + " nsid 3",
                "- allowed host " + H1 + " on " + A,
                "+ allowed host " + H2 + " on " + A,
                "~ port 2 10.0.0.2:4420 -> 10.0.0.2:4420 (listener re-created)"), d.describe());
    }

    @Test
    void referralsDiscoveryScopeAndSubsystemIdentity() throws Exception {
        TargetConfig before = load(BEFORE);
        TargetConfig after = load(BEFORE
                .replace("{id: 2, traddr: 10.0.0.2, subsystems: [%s]}".formatted(B),
                        "{id: 2, traddr: 10.0.0.2, subsystems: [%s], referrals: [{traddr: 10.0.0.9, portid: 4}]}"
                                .formatted(B))
                .replace("    allowed_hosts: [" + H1 + "]", "    allowed_hosts: [" + H1 + "]\n    firmware: 2.0\n"
                        + "    version: 1.4\n    ieee_oui: 0x001b21\n    cntlid_min: 10\n    cntlid_max: 20\n"
                        + "    max_qid: 4")
                + "discovery:\n  all_ports: true\n");
        ConfigDiff d = ConfigDiff.between(before, after);
        assertEquals(List.of("firmware", "version", "ieee_oui", "cntlid_min", "cntlid_max", "max_qid"),
                d.subsystemsChanged().get(0).attributesChanged());
        ConfigDiff.PortChange p2 = d.portsChanged().get(0);
        assertEquals(false, p2.listenerChanged(), "a referral is not a listener change");
        assertEquals(List.of(new ReferralSection("rdma", "ipv4", "10.0.0.9", 4420, 4)), p2.referralsAdded());
        assertEquals(true, d.discoveryChanged());
        assertEquals(List.of(
                "! subsystem " + A + " firmware (takes effect on restart)",
                "! subsystem " + A + " version (takes effect on restart)",
                "! subsystem " + A + " ieee_oui (takes effect on restart)",
                "! subsystem " + A + " cntlid_min (takes effect on restart)",
                "! subsystem " + A + " cntlid_max (takes effect on restart)",
                "! subsystem " + A + " max_qid (takes effect on restart)",
                "+ port 2 referral rdma 10.0.0.9:4420",
                "~ discovery.all_ports"), d.describe());
        ConfigDiff back = ConfigDiff.between(after, before);
        assertEquals(List.of(new ReferralSection("rdma", "ipv4", "10.0.0.9", 4420, 4)),
                back.portsChanged().get(0).referralsRemoved());
    }
}
