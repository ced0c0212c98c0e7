package dev.nvmf.target.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;

import dev.nvmf.target.nvme.AnaState;
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
    void zeroCopyIsOnByDefaultAndTurnsOffInTheTransportSection() throws Exception {
        assertEquals(true, ok(VALID).transport().zeroCopy());
        TargetConfig off = ok(VALID + "transport:\n  zero_copy: false\n");
        assertEquals(false, off.transport().zeroCopy());
    }

    @Test
    void sharedReceiveQueueIsOffByDefaultAndItsDepthIsChecked() throws Exception {
        assertEquals(false, ok(VALID).transport().srq());
        assertEquals(1024, ok(VALID).transport().srqDepth());
        TargetConfig on = ok(VALID + "transport:\n  srq: true\n  srq_depth: 4096\n");
        assertEquals(true, on.transport().srq());
        assertEquals(4096, on.transport().srqDepth());
        int line = (int) VALID.lines().count() + 2; // the line after "transport:"
        assertEquals(List.of("t.yaml:" + line + ":8: transport.srq: expected true or false, found string 'yes "
                + "please'"), errors(VALID + "transport:\n  srq: yes please\n"));
        assertEquals(List.of("t.yaml:" + (line + 1) + ":14: transport.srq_depth: value 100 is out of range, allowed "
                + "256 to 65536"), errors(VALID + "transport:\n  srq: true\n  srq_depth: 100\n"));
        assertEquals(List.of("t.yaml:" + line + ":14: transport.srq_depth: has no effect without srq: true"),
                ConfigLoader.parse(VALID + "transport:\n  srq_depth: 512\n", "t.yaml",
                        ConfigLoader.Options.NO_DEVICE_CHECK).warnings().stream().map(ConfigError::toString).toList());
    }

    @Test
    void pollerCpusAreCpuNumbersEachListedOnceAndRoundTrip() throws Exception {
        assertEquals(List.of(), ok(VALID).transport().pollerCpus(), "not pinned unless asked");
        TargetConfig pinned = ok(VALID + "transport:\n  pollers: 2\n  poller_cpus: [3, 1]\n");
        assertEquals(List.of(3, 1), pinned.transport().pollerCpus(), "in the order given: poller 0 on CPU 3");
        String yaml = ConfigWriter.toYaml(pinned);
        assertEquals(pinned, ok(yaml), yaml);
        int line = (int) VALID.lines().count() + 2; // the line after "transport:"
        assertEquals(List.of("t.yaml:" + line + ":20: transport.poller_cpus[1]: CPU 2 is listed twice"),
                errors(VALID + "transport:\n  poller_cpus: [2, 2]\n"));
        assertEquals(List.of("t.yaml:" + line + ":17: transport.poller_cpus[0]: value 1024 is out of range, allowed 0"
                + " to 1023"), errors(VALID + "transport:\n  poller_cpus: [1024]\n"));
        assertEquals(List.of("t.yaml:" + line + ":20: transport.poller_cpus[1]: value -1 is out of range, allowed 0"
                + " to 1023"), errors(VALID + "transport:\n  poller_cpus: [0, -1]\n"));
        assertEquals(List.of("t.yaml:" + line + ":17: transport.poller_cpus[0]: expected a CPU number (an integer"
                + " from 0 to 1023), found string 'all'"), errors(VALID + "transport:\n  poller_cpus: [all]\n"));
        assertEquals(List.of("t.yaml:" + line + ":16: transport.poller_cpus: expected a list, found integer '3'"),
                errors(VALID + "transport:\n  poller_cpus: 3\n"));
    }

    @Test
    void defaultsMatchTheKernelTarget() throws Exception {
        TargetConfig c = ok(VALID);
        assertEquals(new TransportSection(128, 128, 8192, 1 << 20, 32, 1, 30, true, 50_000, false, 1024, List.of()),
                c.transport());
        PortSection p = c.ports().get(0);
        assertEquals(new PortSection(1, "rdma", "ipv4", "192.168.1.10", 4420, 8192, 128, List.of(SUB), List.of()), p);
        assertEquals(DiscoverySection.defaults(), c.discovery());
        assertEquals(false, c.discovery().allPorts(), "port-local discovery, as the kernel target");
        assertEquals(new MetricsSection(true, "127.0.0.1", 9464), c.metrics());
        assertEquals(LoggingSection.defaults(), c.logging());
        SubsystemSection s = c.subsystems().get(0);
        assertEquals("nvmf-target", s.model());
        assertEquals("0.1.0", s.firmware());
        assertEquals(1, s.cntlidMin());
        assertEquals(0xFFEF, s.cntlidMax());
        assertEquals(128, s.maxQid(), "transport.max_io_qpairs_per_ctrlr");
        assertEquals("2.0", s.versionText());
        assertEquals(0, s.ieeeOui());
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
                + "'namespaces'?); allowed here: allow_any_host, allowed_hosts, cntlid_max, cntlid_min, firmware, "
                + "ieee_oui, max_qid, model, namespaces, nqn, serial, version"),
                errors(yaml));
    }

    @Test
    void unknownTopLevelKey() {
        assertEquals(List.of("t.yaml:1:1: hostz: unknown key 'hostz' (did you mean 'hosts'?); allowed here: "
                + "discovery, hosts, logging, metrics, ports, subsystems, transport"), errors("hostz: []\n"));
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
                "t.yaml:15:16: transport.max_io_size: size 768KiB is not a power of two (MDTS is a power of two "
                        + "times the 4 KiB memory page size), allowed 8KiB to 8MiB, a power of two",
                "t.yaml:14:25: transport.in_capsule_data_size: size 1000 is not a multiple of 16 bytes (IOCCSZ is "
                        + "in 16-byte units), allowed 0 to 1MiB, a multiple of 16 bytes"), errors(yaml));
    }

    @Test
    void sizeLimitsArePrintedInUnitsWithTheMultipleTheyNeed() {
        String yaml = """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - {nsid: 1, ram_size: 3000}
                      - {nsid: 2, ram_size: 4097}
                      - {nsid: 3, ram_size: 17TiB}
                      - {nsid: 4, ram_size: 4KiB}
                transport:
                  max_io_size: 4KiB
                  in_capsule_data_size: 2MiB
                """.formatted(SUB);
        assertEquals(List.of(
                "t.yaml:10:16: transport.max_io_size: size 4KiB is out of range, allowed 8KiB to 8MiB, a power of "
                        + "two",
                "t.yaml:11:25: transport.in_capsule_data_size: size 2MiB is out of range, allowed 0 to 1MiB, a "
                        + "multiple of 16 bytes",
                "t.yaml:5:29: subsystems[0].namespaces[0].ram_size: size 3000 is out of range, allowed 4KiB to "
                        + "16TiB, a multiple of 512 bytes",
                "t.yaml:6:29: subsystems[0].namespaces[1].ram_size: size 4097 is not a multiple of 512 bytes (a "
                        + "namespace holds whole 512-byte blocks), allowed 4KiB to 16TiB, a multiple of 512 bytes",
                "t.yaml:7:29: subsystems[0].namespaces[2].ram_size: size 17TiB is out of range, allowed 4KiB to "
                        + "16TiB, a multiple of 512 bytes"), errors(yaml));
    }

    @Test
    void inCapsuleDataIsLimitedByMaxIoSizeToo() {
        assertEquals(List.of("t.yaml:12:27: ports[0].in_capsule_data_size: size 32KiB is out of range, allowed 0 "
                + "to 16KiB, a multiple of 16 bytes"), errors(VALID.replace("subsystems: [" + SUB + "]",
                "subsystems: [" + SUB + "]\n    in_capsule_data_size: 32KiB") + "transport:\n  max_io_size: 16KiB\n"));
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

    /** What the kernel target and the Linux host refuse is an error: too long, empty, control characters. */
    @Test
    void nqnsTheKernelRefusesAreErrors() {
        String longNqn = "nqn.2024-01.dev.nvmf:" + "x".repeat(210);
        String yaml = """
                hosts:
                  - nqn: %s
                  - nqn: ""
                  - nqn: "nqn.2024-01.dev.nvmf:a\\u0000b"
                  - nqn: "nqn.2024-01.dev.nvmf:tab\\there"
                """.formatted(longNqn);
        assertEquals(List.of(
                "t.yaml:2:10: hosts[0].nqn: NQN is 231 bytes long, at most 223 are allowed (NVMe Base 2.0 "
                        + "section 4.5)",
                "t.yaml:3:10: hosts[1].nqn: an NQN cannot be empty",
                "t.yaml:4:10: hosts[2].nqn: NQN 'nqn.2024-01.dev.nvmf:a\\u0000b' contains the control character "
                        + "U+0000 at position 23; an NQN is printable text",
                "t.yaml:5:10: hosts[3].nqn: NQN 'nqn.2024-01.dev.nvmf:tab\\u0009here' contains the control "
                        + "character U+0009 at position 25; an NQN is printable text"), errors(yaml));
    }

    /**
     * What the kernel target and the Linux host accept but NVMe Base 4.5 does not describe is served, with a
     * warning: nvmetcli's testnqn, blktests' subsystem names, a uuid host NQN without a UUID.
     */
    @Test
    void nqnsOutsideTheSpecificationsFormAreAcceptedWithAWarning() throws Exception {
        String yaml = """
                hosts:
                  - nqn: nqn.2014-08.org.nvmexpress:uuid:host1
                  - nqn: hostnqn
                subsystems:
                  - nqn: testnqn
                    allowed_hosts: [hostnqn, nqn.2014-08.org.nvmexpress:uuid:host1]
                  - nqn: blktests-subsystem-1
                    allow_any_host: true
                  - nqn: nqn.2024-13.dev.nvmf:a
                    allow_any_host: true
                  - nqn: nqn.2024-01.dev_nvmf:a
                    allow_any_host: true
                ports:
                  - traddr: 10.0.0.1
                    subsystems: [testnqn, blktests-subsystem-1]
                """;
        var r = ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK);
        String tail = "; the Linux kernel target and host accept it, other hosts may not";
        assertEquals(List.of(
                "t.yaml:2:10: hosts[0].nqn: 'nqn.2014-08.org.nvmexpress:uuid:host1' does not follow NVMe Base 2.0 "
                        + "section 4.5: after 'nqn.2014-08.org.nvmexpress:uuid:' a UUID like "
                        + "3fa85f64-5717-4562-b3fc-2c963f66afa6 must follow" + tail,
                "t.yaml:3:10: hosts[1].nqn: 'hostnqn' does not follow NVMe Base 2.0 section 4.5 "
                        + "(nqn.yyyy-mm.reverse-domain[:identifier] or nqn.2014-08.org.nvmexpress:uuid:UUID)" + tail,
                "t.yaml:5:10: subsystems[0].nqn: 'testnqn' does not follow NVMe Base 2.0 section 4.5 "
                        + "(nqn.yyyy-mm.reverse-domain[:identifier] or nqn.2014-08.org.nvmexpress:uuid:UUID)" + tail,
                "t.yaml:7:10: subsystems[1].nqn: 'blktests-subsystem-1' does not follow NVMe Base 2.0 section 4.5 "
                        + "(nqn.yyyy-mm.reverse-domain[:identifier] or nqn.2014-08.org.nvmexpress:uuid:UUID)" + tail,
                "t.yaml:9:10: subsystems[2].nqn: 'nqn.2024-13.dev.nvmf:a' does not follow NVMe Base 2.0 section "
                        + "4.5: '2024-13' is not a valid yyyy-mm date" + tail,
                "t.yaml:11:10: subsystems[3].nqn: 'nqn.2024-01.dev_nvmf:a' does not follow NVMe Base 2.0 section "
                        + "4.5: 'dev_nvmf' is not a reversed domain name such as com.example" + tail),
                r.warnings().stream().map(ConfigError::toString).toList());
        assertEquals(List.of("testnqn", "blktests-subsystem-1", "nqn.2024-13.dev.nvmf:a", "nqn.2024-01.dev_nvmf:a"),
                r.config().subsystems().stream().map(SubsystemSection::nqn).toList(), "names kept as written");
        assertEquals(List.of("hostnqn", "nqn.2014-08.org.nvmexpress:uuid:host1"),
                r.config().subsystem("testnqn").orElseThrow().allowedHosts());
    }

    @Test
    void nqnForms() {
        assertTrue(Nqn.isConforming("nqn.2014-08.org.nvmexpress:uuid:3fa85f64-5717-4562-b3fc-2c963f66afa6"));
        assertTrue(Nqn.isConforming("nqn.2016-06.io.spdk:cnode1"));
        assertTrue(Nqn.isConforming(Nqn.DISCOVERY));
        assertTrue(!Nqn.isConforming("testnqn"));
        assertTrue(Nqn.isAccepted("testnqn"));
        assertTrue(Nqn.isAccepted("nqn.2024-01.dev.nvmf:" + "x".repeat(202))); // exactly 223 bytes
        assertTrue(!Nqn.isAccepted("nqn.2024-01.dev.nvmf:" + "x".repeat(203)));
        assertTrue(!Nqn.isAccepted("nqn.2024-01.dev.nvmf:" + "\u00e9".repeat(102)), "225 bytes of UTF-8");
        assertTrue(Nqn.isAccepted("nqn.2024-01.dev.nvmf:caf\u00e9 \u00fcber"), "UTF-8 text and spaces are printable");
    }

    /** An invalid name is reported once, where it is defined; references to it do not add a second error. */
    @Test
    void anInvalidNameIsReportedOnceNotAgainAtEveryReference() {
        String bad = "nqn.2024-01.dev.nvmf:" + "x".repeat(210);
        String yaml = """
                hosts:
                  - nqn: %s
                subsystems:
                  - nqn: %s
                    allowed_hosts: [%s]
                  - nqn: nqn.2014-08.org.nvmexpress.discovery
                    allow_any_host: true
                ports:
                  - traddr: 10.0.0.1
                    subsystems: [%s, nqn.2014-08.org.nvmexpress.discovery, nqn.2024-01.dev.nvmf:undefined]
                  - traddr: 10.0.0.2
                    subsystems: [%s]
                """.formatted(bad, bad, bad, bad, bad);
        assertEquals(List.of(
                "t.yaml:2:10: hosts[0].nqn: NQN is 231 bytes long, at most 223 are allowed (NVMe Base 2.0 section "
                        + "4.5)",
                "t.yaml:4:10: subsystems[0].nqn: NQN is 231 bytes long, at most 223 are allowed (NVMe Base 2.0 "
                        + "section 4.5)",
                "t.yaml:6:10: subsystems[1].nqn: 'nqn.2014-08.org.nvmexpress.discovery' is the discovery "
                        + "subsystem's NQN; the target provides discovery itself",
                "t.yaml:10:289: ports[0].subsystems[2]: subsystem 'nqn.2024-01.dev.nvmf:undefined' is not defined "
                        + "under 'subsystems'"), errors(yaml));
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
                "t.yaml:5:9: subsystems[0].namespaces[0]: a namespace needs one of 'device', 'file', 'ram_size' or "
                        + "'rbd'",
                "t.yaml:6:9: subsystems[0].namespaces[1]: a namespace takes only one of 'device', 'file', "
                        + "'ram_size' or 'rbd', found file and ram_size"), errors(yaml));
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
                        + "1024"), errors(yaml));
    }

    @Test
    void subsystemIdentityAndLimitsAreReadAndChecked() throws Exception {
        TargetConfig c = ok("""
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    firmware: "6.1.0-18"
                    version: 1.3
                    ieee_oui: 0x001b21
                    cntlid_min: 16
                    cntlid_max: 31
                    max_qid: 8
                """.formatted(SUB));
        SubsystemSection s = c.subsystems().get(0);
        assertEquals("6.1.0-18", s.firmware());
        assertEquals(0x010300, s.version());
        assertEquals("1.3", s.versionText());
        assertEquals(0x001b21, s.ieeeOui());
        assertEquals(16, s.cntlidMin());
        assertEquals(31, s.cntlidMax());
        assertEquals(8, s.maxQid());
        assertEquals(0x010201, ok("subsystems:\n  - {nqn: %s, allow_any_host: true, version: 1.2.1, ieee_oui: '0xac'}\n"
                .formatted(SUB)).subsystems().get(0).version());

        assertEquals(List.of(
                "t.yaml:4:15: subsystems[0].firmware: firmware must be 1 to 8 printable ASCII characters (Identify "
                        + "Controller field), found 'too-long-1'",
                "t.yaml:6:17: subsystems[0].cntlid_max: cntlid_min 40 is above cntlid_max 30: the range of controller "
                        + "ids is empty",
                "t.yaml:7:14: subsystems[0].max_qid: max_qid 200 is above transport.max_io_qpairs_per_ctrlr (128), "
                        + "which the transport enforces for every subsystem; raise that or lower this",
                "t.yaml:8:14: subsystems[0].version: '3.0' is not an NVMe version: expected MAJOR.MINOR or "
                        + "MAJOR.MINOR.TERTIARY with a major version of 1 or 2 (such as 1.3 or 2.0)",
                "t.yaml:9:15: subsystems[0].ieee_oui: expected a 24-bit IEEE OUI, 0x000000 to 0xffffff, found "
                        + "integer '0x1000000'",
                "t.yaml:11:17: subsystems[1].cntlid_min: value 0 is out of range, allowed 1 to 65519"),
                errors("""
                        subsystems:
                          - nqn: %s
                            allow_any_host: true
                            firmware: too-long-1
                            cntlid_min: 40
                            cntlid_max: 30
                            max_qid: 200
                            version: 3.0
                            ieee_oui: 0x1000000
                          - nqn: nqn.2024-01.dev.nvmf:other
                            cntlid_min: 0
                            allow_any_host: true
                        """.formatted(SUB)));
    }

    @Test
    void referralsDiscoveryAndBufferedIo() throws Exception {
        TargetConfig c = ok(VALID.replace("subsystems: [" + SUB + "]", """
                subsystems: [%s]
                    referrals:
                      - traddr: 10.0.0.9
                      - {trtype: tcp, adrfam: ipv6, traddr: "fd00::9", trsvcid: 8009, portid: 3}""".formatted(SUB))
                + "discovery:\n  all_ports: true\n");
        assertEquals(List.of(new ReferralSection("rdma", "ipv4", "10.0.0.9", 4420, 0),
                new ReferralSection("tcp", "ipv6", "fd00::9", 8009, 3)), c.ports().get(0).referrals());
        assertEquals(true, c.discovery().allPorts());
        assertEquals(c, ok(ConfigWriter.toYaml(c)), "the effective configuration reads back the same");

        assertEquals(List.of(
                "t.yaml:13:18: ports[0].referrals[0].trtype: a referral's trtype must be rdma or tcp, found 'fc'",
                "t.yaml:14:18: ports[0].referrals[1].traddr: 'target-b.example' is not an IP address (host names "
                        + "are not resolved; write the address)",
                "t.yaml:16:9: ports[0].referrals[3]: referral rdma 10.0.0.9:4420 is listed twice (first at line 15:9)",
                "t.yaml:20:3: discovery.all_port: unknown key 'all_port' (did you mean 'all_ports'?); allowed here: "
                        + "all_ports"),
                errors(VALID.replace("subsystems: [" + SUB + "]", """
                        subsystems: [%s]
                            referrals:
                              - {trtype: fc, traddr: 10.0.0.8}
                              - {traddr: target-b.example}
                              - {traddr: 10.0.0.9}
                              - {traddr: 10.0.0.9, trsvcid: 4420}""".formatted(SUB))
                        + "metrics:\n  enabled: false\ndiscovery:\n  all_port: true\n"));

        String files = """
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - {nsid: 1, file: /srv/a.img}
                      - {nsid: 2, file: /srv/b.img, buffered_io: true}
                """.formatted(SUB);
        assertEquals(List.of(false, true), ok(files).subsystems().get(0).namespaces().stream()
                .map(NamespaceSection::bufferedIo).toList(), "O_DIRECT unless buffered_io is set");
        assertEquals(List.of("t.yaml:7:48: subsystems[0].namespaces[2].buffered_io: buffered_io applies to file "
                + "namespaces only (block devices are always opened O_DIRECT, RAM has no page cache, RBD has librbd's "
                + "cache)"),
                errors(files + "      - {nsid: 3, ram_size: 1MiB, buffered_io: true}\n"));
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

    /** namespaces[].ana_group and ports[].ana_groups: read, defaulted, written back, and checked with positions. */
    @Test
    void anaGroupsOfNamespacesAndPorts() throws Exception {
        String yaml = VALID.replace("    ram_size: 64MiB\n", "    ram_size: 64MiB\n      - {nsid: 2, ram_size: 1MiB, ana_group: 2}\n")
                .replace("subsystems: [" + SUB + "]", """
                        subsystems: [%s]
                            ana_groups:
                              - {grpid: 2, state: optimized}
                              - {grpid: 1, state: Non-Optimized}""".formatted(SUB));
        TargetConfig c = ok(yaml);
        assertEquals(List.of(1, 2), c.subsystems().get(0).namespaces().stream().map(NamespaceSection::anaGroup)
                .toList(), "group 1 unless configured");
        PortSection p = c.ports().get(0);
        assertEquals(List.of(new AnaGroupSection(1, AnaState.NON_OPTIMIZED), new AnaGroupSection(2, AnaState.OPTIMIZED)),
                p.anaGroups(), "by group id");
        assertEquals(AnaState.NON_OPTIMIZED, p.anaState(1));
        assertEquals(AnaState.INACCESSIBLE, p.anaState(3), "a group the port does not list: inaccessible");
        assertEquals(AnaState.OPTIMIZED, ok(VALID).ports().get(0).anaState(1), "group 1 by default: optimized");
        String written = ConfigWriter.toYaml(c);
        assertTrue(written.contains("state: non-optimized") && written.contains("ana_group: 2"), written);
        assertEquals(c, ok(written), "the effective configuration reads back the same");
        assertEquals(List.of(), ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK).warnings());

        assertEquals(List.of(
                "t.yaml:9:46: subsystems[0].namespaces[1].ana_group: value 129 is out of range, allowed 1 to 128",
                "t.yaml:10:46: subsystems[0].namespaces[2].ana_group: value 0 is out of range, allowed 1 to 128",
                "t.yaml:15:27: ports[0].ana_groups[0].state: 'standby' is not an ANA state; expected one of optimized, "
                        + "non-optimized, inaccessible, persistent-loss, change",
                "t.yaml:16:9: ports[0].ana_groups[1]: missing required key 'grpid' (the ANA group, 1..128)",
                "t.yaml:17:9: ports[0].ana_groups[2]: missing required key 'state'",
                "t.yaml:18:17: ports[0].ana_groups[3].grpid: ANA group 1 is listed twice on this port (first at line "
                        + "15:17)",
                "t.yaml:19:38: ports[0].ana_groups[4].stat: unknown key 'stat' (did you mean 'state'?); allowed here: "
                        + "grpid, state"),
                errors(VALID.replace("    ram_size: 64MiB\n", "    ram_size: 64MiB\n"
                        + "      - {nsid: 2, ram_size: 1MiB, ana_group: 129}\n"
                        + "      - {nsid: 3, ram_size: 1MiB, ana_group: 0}\n").replace("subsystems: [" + SUB + "]", """
                        subsystems: [%s]
                            ana_groups:
                              - {grpid: 1, state: standby}
                              - {state: optimized}
                              - {grpid: 3}
                              - {grpid: 1, state: optimized}
                              - {grpid: 4, state: optimized, stat: x}""".formatted(SUB))));

        // A namespace in a group no port lists is inaccessible everywhere: a warning, at its ana_group.
        var r = ConfigLoader.parse(VALID.replace("    ram_size: 64MiB\n", "    ram_size: 64MiB\n        ana_group: 3\n"),
                "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK);
        assertEquals(List.of("t.yaml:9:20: subsystems[0].namespaces[0].ana_group: namespace 1 of " + SUB + " is in "
                + "ANA group 3, which no port lists in ana_groups: it is inaccessible through every port (the default "
                + "of a group other than 1)"), r.warnings().stream().map(ConfigError::toString).toList());
        // ... but not when a port sets it, even inaccessible (another daemon may serve that group).
        assertEquals(List.of(), ConfigLoader.parse(VALID.replace("    ram_size: 64MiB\n", "    ram_size: 64MiB\n        "
                + "ana_group: 3\n").replace("subsystems: [" + SUB + "]", "subsystems: [" + SUB + "]\n    ana_groups: "
                + "[{grpid: 3, state: inaccessible}]"), "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK).warnings());
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
