package dev.nvmf.target.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

import dev.nvmf.target.nvme.AnaState;
import org.junit.jupiter.api.Test;

/** nvmetcli save files (the shape of nvmetcli's own examples: rdma.json, and a fuller two-port save). */
class NvmetcliImporterTest {
    private static final String VOL1 = "nqn.2024-01.com.example:storage:vol1";
    private static final String SCRATCH = "nqn.2024-01.com.example:storage:scratch";
    private static final String HOST1 = "nqn.2014-08.org.nvmexpress:uuid:0c8e2a3e-7c1d-4d3e-9f4a-1b2c3d4e5f60";
    private static final String HOST2 = "nqn.2014-08.org.nvmexpress:uuid:7d3b9f10-22aa-4c1e-8a5b-9e8d7c6b5a40";

    static Path resource(String name) throws Exception {
        return Path.of(NvmetcliImporterTest.class.getResource("/nvmetcli/" + name).toURI());
    }

    @Test
    void convertsPortsSubsystemsNamespacesHostsAndAllowedHosts() throws Exception {
        Path json = resource("rdma-two-ports.json");
        NvmetcliImporter.Result r = NvmetcliImporter.importFile(json);
        TargetConfig c = r.config();

        assertEquals(List.of(new HostSection(HOST1), new HostSection(HOST2)), c.hosts());
        assertEquals(List.of(
                new PortSection(1, "rdma", "ipv4", "192.168.100.8", 4420, 16384, 128, List.of(VOL1, SCRATCH),
                        List.of(), List.of(new AnaGroupSection(1, AnaState.OPTIMIZED))),
                // inline_data_size -1 is the kernel's "transport default"
                new PortSection(2, "rdma", "ipv6", "fd00::8", 4421, 8192, 128, List.of(VOL1), List.of())),
                c.ports());

        SubsystemSection vol1 = c.subsystem(VOL1).orElseThrow();
        assertEquals("a3f9c2e41b7d8e05", vol1.serial());
        assertEquals("Linux", vol1.model());
        assertEquals("1.3", vol1.versionText(), "attr_version kept");
        assertEquals(1, vol1.cntlidMin());
        assertEquals(65519, vol1.cntlidMax());
        assertEquals(false, vol1.allowAnyHost());
        assertEquals(List.of(HOST1, HOST2), vol1.allowedHosts());
        assertEquals(List.of(
                // the all-zero NGUID nvmetcli saves for "unset" is dropped
                new NamespaceSection(1, NamespaceSection.Kind.DEVICE, "/dev/nvme0n1", 0,
                        UUID.fromString("5f6b2c1a-8e4d-4b7a-9c3e-2d1f0a9b8c7d"), null, false, true, false, null),
                new NamespaceSection(2, NamespaceSection.Kind.FILE, "/srv/nvmet/vol1-ns2.img", 0,
                        UUID.fromString("1e2d3c4b-5a69-4788-9a0b-c1d2e3f40516"), "ef90689c6c46d44c89c14067801309a8",
                        false, false, false, null)), vol1.namespaces());

        SubsystemSection scratch = c.subsystem(SCRATCH).orElseThrow();
        assertEquals(true, scratch.allowAnyHost());
        assertEquals(List.of(), scratch.allowedHosts());
        assertEquals(List.of(new NamespaceSection(10, NamespaceSection.Kind.DEVICE, "/dev/nullb0", 0,
                UUID.fromString("9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"), null, false, true, false, null)),
                scratch.namespaces());

        assertEquals(List.of(json + ":62:19: ports[2].addr.trtype: port 3 uses trtype 'tcp'; this target serves "
                + "rdma only, the port is left out"), r.warnings().stream().map(ConfigError::toString).toList());

        // The YAML written is our format and reads back to the same configuration.
        assertTrue(r.yaml().startsWith("# Converted from nvmetcli " + json + " by nvmf-target import-nvmetcli.\n"
                + "# warning: " + json + ":62:19: ports[2].addr.trtype: port 3 uses trtype 'tcp'"), r.yaml());
        assertEquals(c, ConfigLoader.parse(r.yaml(), "converted.yaml", ConfigLoader.Options.NO_DEVICE_CHECK)
                .config());
    }

    /**
     * nvmetcli's own example names are not in the specification's form but the kernel target and the Linux host take
     * them: they are imported unchanged (hosts keep connecting with them), each with a warning at its position.
     */
    @Test
    void nvmetcliExampleNamesAreKeptUnchangedWithAWarning() throws Exception {
        Path json = resource("testnqn.json");
        NvmetcliImporter.Result r = NvmetcliImporter.importFile(json);
        String why = " does not follow NVMe Base 2.0 section 4.5 (nqn.yyyy-mm.reverse-domain[:identifier] or "
                + "nqn.2014-08.org.nvmexpress:uuid:UUID); kept unchanged, as the kernel target and the Linux host "
                + "accept it and hosts already connect with it";
        assertEquals(List.of(
                json + ":4:14: hosts[0].nqn: 'hostnqn'" + why,
                json + ":41:14: subsystems[0].nqn: 'testnqn'" + why),
                r.warnings().stream().map(ConfigError::toString).toList());
        assertEquals(List.of(new HostSection("hostnqn")), r.config().hosts());
        SubsystemSection s = r.config().subsystem("testnqn").orElseThrow();
        assertEquals(List.of("hostnqn"), s.allowedHosts());
        assertEquals(List.of("testnqn"), r.config().port(2).orElseThrow().subsystems());
        // What check-config reads back is the same configuration.
        assertEquals(r.config(), ConfigLoader.parse(r.yaml(), "converted.yaml", ConfigLoader.Options.NO_DEVICE_CHECK)
                .config());
    }

    /** Every subsystem attribute of a kernel 6.1 save, its referrals and buffered_io are kept. */
    @Test
    void kernelAttributesReferralsAndBufferedIoAreKept() throws Exception {
        Path json = resource("kernel-6.1-save.json");
        NvmetcliImporter.Result r = NvmetcliImporter.importFile(json);
        TargetConfig c = r.config();
        SubsystemSection s = c.subsystem("blktests-subsystem-1").orElseThrow();
        assertEquals("9e2e1e2d0b3c4a5f", s.serial());
        assertEquals("Linux", s.model());
        assertEquals("6.1.0-18", s.firmware());
        assertEquals(0x001b21, s.ieeeOui());
        assertEquals(0x010300, s.version());
        assertEquals(16, s.cntlidMin());
        assertEquals(32, s.cntlidMax());
        assertEquals(8, s.maxQid());
        assertEquals(List.of(true, true, false), s.namespaces().stream().map(NamespaceSection::bufferedIo).toList(),
                "buffered_io beside device (where the kernel has it) and inside device");
        assertEquals(List.of(
                new ReferralSection("rdma", "ipv4", "10.77.0.9", 4420, 2),
                new ReferralSection("tcp", "ipv6", "fd00::9", 8009, 0)), c.port(1).orElseThrow().referrals());
        assertEquals(List.of(json + ":4:14: hosts[0].nqn", json + ":109:14: subsystems[0].nqn"),
                r.warnings().stream().map(w -> w.toString().substring(0, w.toString().indexOf(": '"))).toList(),
                "only the two names outside the specification's form are warned about: " + r.warnings());
        String yaml = r.yaml();
        for (String line : List.of("firmware: 6.1.0-18", "version: '1.3'", "ieee_oui: 0x001b21", "cntlid_min: 16",
                "cntlid_max: 32", "max_qid: 8", "buffered_io: true", "traddr: fd00::9", "trtype: tcp")) {
            assertTrue(yaml.contains(line), line + " in\n" + yaml);
        }
        assertEquals(c, ConfigLoader.parse(yaml, "converted.yaml", ConfigLoader.Options.NO_DEVICE_CHECK).config());
    }

    @Test
    void unsupportedFeaturesWarnAndBadValuesFail() throws Exception {
        String json = """
                {
                  "hosts": [],
                  "ports": [
                    {
                      "addr": {"adrfam": "ipv4", "traddr": "10.0.0.1", "treq": "required", "trsvcid": "4420",
                               "trtype": "rdma"},
                      "param": {"inline_data_size": "4096", "pi_enable": "1"},
                      "portid": 1,
                      "referrals": [{"addr": {"trtype": "fc", "traddr": "nn-0x1:pn-0x2"}, "name": "fc"}],
                      "subsystems": ["nqn.2024-01.com.example:a"]
                    }
                  ],
                  "subsystems": [
                    {
                      "attr": {"allow_any_host": "1", "qid_max": "16"},
                      "namespaces": [
                        {"device": {"path": "/dev/sdb"}, "enable": 1, "nsid": "two", "ana_grpid": 2}
                      ],
                      "nqn": "nqn.2024-01.com.example:a"
                    }
                  ]
                }
                """;
        ConfigException e = assertThrows(ConfigException.class,
                () -> NvmetcliImporter.importString(json, "c.json"));
        assertEquals(List.of("c.json:17:63: subsystems[0].namespaces[0].nsid: expected a number, found string "
                + "'two'"), e.errors().stream().map(ConfigError::toString).toList());

        NvmetcliImporter.Result r = NvmetcliImporter.importString(json.replace("\"two\"", "2"), "c.json");
        assertEquals(List.of(
                "c.json:9:41: ports[0].referrals[0].addr.trtype: a referral to trtype 'fc' is left out: this "
                        + "target lists rdma and tcp referrals",
                "c.json:7:58: ports[0].param.pi_enable: protection information is not supported; left out",
                "c.json:5:64: ports[0].addr.treq: secure channel (treq required) is not supported; the port is "
                        + "converted without it"),
                r.warnings().stream().map(ConfigError::toString).toList());
        assertEquals(4096, r.config().ports().get(0).inCapsuleDataSize());
        assertEquals(List.of(), r.config().ports().get(0).referrals());
        assertEquals(16, r.config().subsystems().get(0).maxQid(), "attr_qid_max kept");
        assertEquals(ConfigLoader.derivedUuid("nqn.2024-01.com.example:a", 2),
                r.config().subsystems().get(0).namespaces().get(0).uuid());
        assertEquals(2, r.config().subsystems().get(0).namespaces().get(0).anaGroup(), "ana_grpid kept");
    }

    /** nvmetcli's ANA groups: each port's ana_groups[] {grpid, ana {state}} and each namespace's ana_grpid. */
    @Test
    void anaGroupsOfEachPortAndEachNamespaceAreKept() throws Exception {
        String json = """
                {
                  "hosts": [],
                  "ports": [
                    {"addr": {"adrfam": "ipv4", "traddr": "10.0.0.1", "trsvcid": "4420", "trtype": "rdma"},
                     "ana_groups": [{"ana": {"state": "non-optimized"}, "grpid": 1},
                                    {"ana": {"state": "optimized"}, "grpid": 2}],
                     "portid": 1, "subsystems": ["nqn.2024-01.com.example:a"]},
                    {"addr": {"adrfam": "ipv4", "traddr": "10.0.0.2", "trsvcid": "4420", "trtype": "rdma"},
                     "ana_groups": [{"ana": {"state": "optimized"}, "grpid": 1},
                                    {"ana": {"state": "inaccessible"}, "grpid": 2}],
                     "portid": 2, "subsystems": ["nqn.2024-01.com.example:a"]}
                  ],
                  "subsystems": [
                    {"attr": {"allow_any_host": "1"}, "nqn": "nqn.2024-01.com.example:a",
                     "namespaces": [{"device": {"path": "/dev/sdb"}, "enable": 1, "nsid": 1, "ana_grpid": 1},
                                    {"device": {"path": "/dev/sdc"}, "enable": 1, "nsid": 2, "ana_grpid": 2}]}
                  ]
                }
                """;
        NvmetcliImporter.Result r = NvmetcliImporter.importString(json, "ana.json");
        assertEquals(List.of(), r.warnings());
        assertEquals(List.of(new AnaGroupSection(1, AnaState.NON_OPTIMIZED), new AnaGroupSection(2, AnaState.OPTIMIZED)),
                r.config().port(1).orElseThrow().anaGroups());
        assertEquals(List.of(new AnaGroupSection(1, AnaState.OPTIMIZED), new AnaGroupSection(2, AnaState.INACCESSIBLE)),
                r.config().port(2).orElseThrow().anaGroups());
        assertEquals(List.of(1, 2), r.config().subsystems().get(0).namespaces().stream()
                .map(NamespaceSection::anaGroup).toList());
        // The YAML written reads back to the same configuration.
        TargetConfig again = ConfigLoader.parse(r.yaml(), "ana.yaml", ConfigLoader.Options.NO_DEVICE_CHECK).config();
        assertEquals(r.config().ports(), again.ports());
        assertEquals(r.config().subsystems(), again.subsystems());

        ConfigException e = assertThrows(ConfigException.class, () -> NvmetcliImporter.importString(
                json.replace("\"inaccessible\"", "\"standby\"").replace("\"ana_grpid\": 2", "\"ana_grpid\": 129"),
                "ana.json"));
        assertEquals(List.of(
                "ana.json:16:91: subsystems[0].namespaces[1].ana_grpid: ANA group 129 is out of range 1..128",
                "ana.json:10:39: ports[1].ana_groups[1].ana.state: expected an ANA state (optimized, non-optimized, "
                        + "inaccessible, persistent-loss, change), found 'standby'"),
                e.errors().stream().map(ConfigError::toString).toList());
    }
}
