package dev.nvmf.target.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {
    private static final String SUB = "nqn.2024-01.dev.nvmf:disk1";
    private static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:0c8e2a3e-7c1d-4d3e-9f4a-1b2c3d4e5f60";

    @TempDir
    Path dir;

    /** Parses without device checks and returns the only error's text. */
    private static List<String> errors(String yaml) {
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK));
        return e.errors().stream().map(ConfigError::toString).toList();
    }

    private static TargetConfig ok(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK).config();
    }

    private static final String VALID = """
            hosts:
              - nqn: %s
            subsystems:
              - nqn: %s
                allowed_hosts: [%s]
                namespaces:
                  - nsid: 1
                    ram_size: 64MiB
            ports:
              - traddr: 192.168.1.10
                subsystems: [%s]
            """.formatted(HOST, SUB, HOST, SUB);

    @Test
    void defaultsMatchTheKernelTargetAndTheTransportIssue() throws Exception {
        TargetConfig c = ok(VALID);
        assertEquals(new TransportSection(128, 128, 8192, 1 << 20, 32, 1), c.transport());
        PortSection p = c.ports().get(0);
        assertEquals(new PortSection(1, "rdma", "ipv4", "192.168.1.10", 4420, 8192, 128, List.of(SUB)), p);
        assertEquals(new MetricsSection(true, "127.0.0.1", 9464), c.metrics());
        assertEquals(LoggingSection.defaults(), c.logging());
        SubsystemSection s = c.subsystems().get(0);
        assertEquals("nvmf-target", s.model());
        assertEquals(ConfigLoader.derivedSerial(SUB), s.serial());
        assertEquals(16, s.serial().length());
        NamespaceSection n = s.namespaces().get(0);
        assertEquals(64L << 20, n.ramSize());
        assertEquals(ConfigLoader.derivedUuid(SUB, 1), n.uuid());
        assertTrue(n.enabled());
        assertTrue(!n.readOnly());
    }

    @Test
    void effectiveConfigurationRoundTrips() throws Exception {
        TargetConfig c = ok(VALID);
        String yaml = ConfigWriter.toYaml(c);
        assertEquals(c, ok(yaml));
        assertTrue(yaml.contains("max_queue_depth: 128"), yaml);
        assertTrue(yaml.contains("listen: 127.0.0.1:9464"), yaml);
    }

    @Test
    void unknownKeyNamesPositionPathAndSuggestion() {
        String yaml = VALID.replace("    namespaces:", "    namespces:\n      - nsid: 2\n        ram_size: 1MiB\n"
                + "    namespaces:");
        assertEquals(List.of("t.yaml:6:5: subsystems[0].namespces: unknown key 'namespces' (did you mean "
                + "'namespaces'?); allowed here: allow_any_host, allowed_hosts, model, namespaces, nqn, serial"),
                errors(yaml));
    }

    @Test
    void unknownTopLevelKey() {
        assertEquals(List.of("t.yaml:1:1: hostz: unknown key 'hostz' (did you mean 'hosts'?); allowed here: "
                + "hosts, logging, metrics, ports, subsystems, transport"), errors("hostz: []\n"));
    }

    @Test
    void wrongTypes() {
        String yaml = VALID + """
                transport:
                  max_queue_depth: deep
                  pollers: [1]
                metrics:
                  enabled: "yes"
                """;
        assertEquals(List.of(
                "t.yaml:13:20: transport.max_queue_depth: expected an integer, found string 'deep'",
                "t.yaml:14:12: transport.pollers: expected an integer, found a list",
                "t.yaml:16:12: metrics.enabled: expected true or false, found string 'yes'"), errors(yaml));
    }

    @Test
    void outOfRangeAndAlignment() {
        String yaml = VALID + """
                transport:
                  max_queue_depth: 4096
                  in_capsule_data_size: 1000
                  max_io_size: 768KiB
                """;
        assertEquals(List.of(
                "t.yaml:13:20: transport.max_queue_depth: value 4096 is out of range, allowed 2 to 1024",
                "t.yaml:15:16: transport.max_io_size: must be a power of two (MDTS is a power of two times the "
                        + "memory page size), found 786432",
                "t.yaml:14:25: transport.in_capsule_data_size: must be a multiple of 16 bytes (IOCCSZ is in "
                        + "16-byte units), found 1000"), errors(yaml));
    }

    @Test
    void duplicateNsidAndNqn() {
        String yaml = """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - nsid: 1
                        ram_size: 1MiB
                      - nsid: 1
                        ram_size: 2MiB
                  - nqn: %s
                    allow_any_host: true
                """.formatted(SUB, SUB);
        assertEquals(List.of(
                "t.yaml:7:15: subsystems[0].namespaces[1].nsid: duplicate nsid 1 in this subsystem (first at "
                        + "line 5:15)",
                "t.yaml:9:10: subsystems[1].nqn: duplicate subsystem NQN '" + SUB + "' (first at line 2:10)"),
                errors(yaml));
    }

    @Test
    void invalidNqnSyntax() {
        String longNqn = "nqn.2024-01.dev.nvmf:" + "x".repeat(210);
        String yaml = """
                hosts:
                  - nqn: testnqn
                  - nqn: nqn.2024-13.dev.nvmf:a
                  - nqn: nqn.2014-08.org.nvmexpress:uuid:not-a-uuid
                  - nqn: nqn.2024-01.dev_nvmf:a
                  - nqn: %s
                """.formatted(longNqn);
        assertEquals(List.of(
                "t.yaml:2:10: hosts[0].nqn: 'testnqn' is not a valid NQN: expected "
                        + "nqn.yyyy-mm.reverse-domain[:identifier] or nqn.2014-08.org.nvmexpress:uuid:UUID (NVMe "
                        + "Base 2.0 section 4.5)",
                "t.yaml:3:10: hosts[1].nqn: 'nqn.2024-13.dev.nvmf:a' is not a valid NQN: '2024-13' is not a "
                        + "valid yyyy-mm date (NVMe Base 2.0 section 4.5)",
                "t.yaml:4:10: hosts[2].nqn: 'nqn.2014-08.org.nvmexpress:uuid:not-a-uuid' is not a valid NQN: "
                        + "after 'nqn.2014-08.org.nvmexpress:uuid:' a UUID like "
                        + "3fa85f64-5717-4562-b3fc-2c963f66afa6 must follow (NVMe Base 2.0 section 4.5)",
                "t.yaml:5:10: hosts[3].nqn: 'nqn.2024-01.dev_nvmf:a' is not a valid NQN: 'dev_nvmf' is not a "
                        + "reversed domain name such as com.example (NVMe Base 2.0 section 4.5)",
                "t.yaml:6:10: hosts[4].nqn: NQN is 231 bytes long, at most 223 are allowed (NVMe Base 2.0 "
                        + "section 4.5)"), errors(yaml));
    }

    @Test
    void validNqnForms() {
        assertTrue(Nqn.isValid("nqn.2014-08.org.nvmexpress:uuid:3fa85f64-5717-4562-b3fc-2c963f66afa6"));
        assertTrue(Nqn.isValid("nqn.2016-06.io.spdk:cnode1"));
        assertTrue(Nqn.isValid(Nqn.DISCOVERY));
        assertTrue(Nqn.isValid("nqn.2024-01.dev.nvmf:" + "x".repeat(202))); // exactly 223 bytes
        assertTrue(!Nqn.isValid("nqn.2024-01.dev.nvmf:" + "x".repeat(203)));
    }

    @Test
    void missingDeviceFileAndWrongKind(@TempDir Path tmp) throws IOException {
        Path file = Files.createFile(tmp.resolve("disk.img"));
        String yaml = """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - nsid: 1
                        device: %s
                      - nsid: 2
                        file: %s
                      - nsid: 3
                        file: %s
                """.formatted(SUB, file, tmp.resolve("missing.img"), file);
        ConfigException e = assertThrows(ConfigException.class,
                () -> ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.DEFAULT));
        assertEquals(List.of(
                "t.yaml:6:17: subsystems[0].namespaces[0].device: '" + file + "' is not a block device; it is "
                        + "a regular file, use 'file:'",
                "t.yaml:8:15: subsystems[0].namespaces[1].file: file '" + tmp.resolve("missing.img")
                        + "' does not exist"),
                e.errors().stream().map(ConfigError::toString).toList());
    }

    @Test
    void namespaceBackingIsExactlyOne() {
        String yaml = """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - nsid: 1
                      - nsid: 2
                        ram_size: 1MiB
                        file: /srv/a.img
                """.formatted(SUB);
        assertEquals(List.of(
                "t.yaml:5:9: subsystems[0].namespaces[0]: a namespace needs one of 'device', 'file' or 'ram_size'",
                "t.yaml:6:9: subsystems[0].namespaces[1]: a namespace takes only one of 'device', 'file' or "
                        + "'ram_size', found file and ram_size"), errors(yaml));
    }

    @Test
    void referencesMustResolve() {
        String yaml = """
                subsystems:
                  - nqn: %s
                    allowed_hosts: [%s]
                ports:
                  - traddr: 10.0.0.1
                    subsystems: [nqn.2024-01.dev.nvmf:nope]
                """.formatted(SUB, HOST);
        assertEquals(List.of(
                "t.yaml:3:21: subsystems[0].allowed_hosts[0]: host '" + HOST + "' is not defined under 'hosts'",
                "t.yaml:6:18: ports[0].subsystems[0]: subsystem 'nqn.2024-01.dev.nvmf:nope' is not defined "
                        + "under 'subsystems'"), errors(yaml));
    }

    @Test
    void portAddressesAndDuplicates() {
        String yaml = """
                ports:
                  - traddr: 10.0.0.1
                  - id: 1
                    traddr: 10.0.0.1
                  - id: 3
                    adrfam: ipv6
                    traddr: 10.0.0.2
                  - id: 4
                    traddr: storage.example.com
                    trtype: tcp
                  - id: 5
                """;
        assertEquals(List.of(
                "t.yaml:3:9: ports[1].id: duplicate port id 1 (first at line 2:5)",
                "t.yaml:4:13: ports[1].traddr: another port already listens on 10.0.0.1 port 4420 (at line 2:13)",
                "t.yaml:7:13: ports[2].traddr: '10.0.0.2' is not an IPv6 address but adrfam is ipv6",
                "t.yaml:10:13: ports[3].trtype: unsupported trtype 'tcp': this target serves rdma only",
                "t.yaml:9:13: ports[3].traddr: 'storage.example.com' is not an IP address (host names are not "
                        + "resolved; write the address)",
                "t.yaml:11:5: ports[4]: missing required key 'traddr'"), errors(yaml));
    }

    @Test
    void duplicateYamlKeyAndAllowAnyHostConflict() {
        String yaml = """
                hosts:
                  - nqn: %s
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    allowed_hosts: [%s]
                    model: a
                    model: b
                """.formatted(HOST, SUB, HOST);
        assertEquals(List.of(
                "t.yaml:8:5: subsystems[0].model: duplicate key 'model' (first at line 7:5)",
                "t.yaml:5:21: subsystems[0].allow_any_host: allow_any_host is true but allowed_hosts lists "
                        + "hosts; use one or the other (as the kernel target requires)"), errors(yaml));
    }

    @Test
    void identifiers() {
        String yaml = """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    serial: "this serial is longer than twenty"
                    namespaces:
                      - nsid: 1
                        ram_size: 1MiB
                        uuid: 123
                        nguid: 00000000000000000000000000000000
                      - nsid: 4294967295
                        ram_size: 1MiB
                """.formatted(SUB);
        assertEquals(List.of(
                "t.yaml:4:13: subsystems[0].serial: serial must be 1 to 20 printable ASCII characters (Identify "
                        + "Controller field), found 'this serial is longer than twenty'",
                "t.yaml:8:15: subsystems[0].namespaces[0].uuid: '123' is not a UUID (expected 8-4-4-4-12 hex "
                        + "digits)",
                "t.yaml:9:16: subsystems[0].namespaces[0].nguid: an all-zero NGUID means 'none' (NVMe Base 2.0 "
                        + "section 4.7.1); leave nguid out instead",
                "t.yaml:10:15: subsystems[0].namespaces[1].nsid: value 4294967295 is out of range, allowed 1 to "
                        + "4294967294"), errors(yaml));
    }

    @Test
    void duplicateUuidAcrossSubsystems() {
        String uuid = UUID.randomUUID().toString();
        String yaml = """
                subsystems:
                  - nqn: nqn.2024-01.dev.nvmf:a
                    allow_any_host: true
                    namespaces:
                      - {nsid: 1, ram_size: 1MiB, uuid: %s}
                  - nqn: nqn.2024-01.dev.nvmf:b
                    allow_any_host: true
                    namespaces:
                      - {nsid: 1, ram_size: 1MiB, uuid: %s}
                """.formatted(uuid, uuid);
        assertEquals(List.of("t.yaml:9:41: subsystems[1].namespaces[0].uuid: uuid " + uuid + " is already used by "
                + "nqn.2024-01.dev.nvmf:a nsid 1 (namespace UUIDs must be unique)"), errors(yaml));
    }

    @Test
    void yamlSyntaxError() {
        assertEquals(List.of("t.yaml:2:1: YAML syntax error: while parsing a flow node: expected the node content, "
                + "but found '<stream end>'"), errors("hosts: [\n"));
    }

    @Test
    void metricsAndLogging() throws Exception {
        TargetConfig c = ok(VALID + """
                metrics:
                  listen: "[::1]:9100"
                logging:
                  level: debug
                  format: journal
                """);
        assertEquals(new MetricsSection(true, "::1", 9100), c.metrics());
        assertEquals(new LoggingSection(LoggingSection.Level.DEBUG, LoggingSection.Format.JOURNAL), c.logging());
        assertEquals(List.of(
                "t.yaml:13:11: metrics.listen: expected ADDRESS:PORT such as 127.0.0.1:9464 or [::1]:9464, found "
                        + "'9464'",
                "t.yaml:15:10: logging.level: 'loud' is not one of error, warning, info, debug, trace"),
                errors(VALID + "metrics:\n  listen: \"9464\"\nlogging:\n  level: loud\n"));
    }

    @Test
    void warningsForUnreachableSubsystem() throws Exception {
        var r = ConfigLoader.parse("""
                subsystems:
                  - nqn: %s
                """.formatted(SUB), "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK);
        assertEquals(List.of("t.yaml:2:5: subsystems[0]: no host can connect to '" + SUB + "': allow_any_host is "
                + "false and allowed_hosts is empty"), r.warnings().stream().map(ConfigError::toString).toList());
    }

    @Test
    void unreadableFile() {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.load(dir.resolve("nope.yaml")));
        assertEquals(dir.resolve("nope.yaml") + ":1:1: cannot read the file: NoSuchFileException: "
                + dir.resolve("nope.yaml"), e.errors().get(0).toString());
    }

    @Test
    void sizes() {
        assertEquals(8192, Sizes.parse("8KiB"));
        assertEquals(8192, Sizes.parse("8K"));
        assertEquals(1L << 30, Sizes.parse("1GiB"));
        assertEquals(4096, Sizes.parse("4096"));
        assertEquals(-1, Sizes.parse("1.5GiB"));
        assertEquals(-1, Sizes.parse("10iB"));
        assertEquals("8KiB", Sizes.format(8192));
        assertEquals("1000", Sizes.format(1000));
    }
}
