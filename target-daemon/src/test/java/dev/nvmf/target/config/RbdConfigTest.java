package dev.nvmf.target.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code rbd} namespace kind: every key, its default, every refusal with its position, the warning for an image
 * served twice, the effective configuration written back, the reload difference, and that no message repeats what
 * might be a key.
 */
class RbdConfigTest {
    private static final String SUB = "nqn.2024-01.dev.nvmf:rbd";
    /** What an operator might paste where a path belongs: it must never come back in a message. */
    private static final String KEY = "AQBx4BdmAAAAABAAa1zyq4QtrcvQAa0d6CrZfg==";

    @TempDir
    Path dir;

    /**
     * A subsystem with namespace 1 whose {@code rbd} mapping is {@code body} (lines of "key: value"); the mapping
     * starts at line 7, column 11, each key at column 11 of its line.
     */
    private static String yaml(String... body) {
        StringBuilder b = new StringBuilder("""
                subsystems:
                  - nqn: %s
                    allow_any_host: true
                    namespaces:
                      - nsid: 1
                        rbd:
                """.formatted(SUB));
        for (String line : body) {
            b.append("          ").append(line).append('\n');
        }
        return b.toString();
    }

    private static ConfigLoader.Result load(String yaml) throws ConfigException {
        return ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK);
    }

    private static RbdSection rbd(String yaml) throws ConfigException {
        NamespaceSection n = load(yaml).config().subsystems().get(0).namespaces().get(0);
        assertEquals(NamespaceSection.Kind.RBD, n.kind());
        assertNull(n.path());
        return n.rbd();
    }

    private static List<String> errors(String yaml, ConfigLoader.Options options) {
        ConfigException e = assertThrows(ConfigException.class, () -> ConfigLoader.parse(yaml, "t.yaml", options));
        return e.errors().stream().map(ConfigError::toString).toList();
    }

    private static List<String> errors(String yaml) {
        return errors(yaml, ConfigLoader.Options.NO_DEVICE_CHECK);
    }

    @Test
    void poolAndImageAloneTakeEveryDefault() throws Exception {
        RbdSection r = rbd(yaml("pool: rbd", "image: disk1"));
        assertEquals(RbdSection.of("rbd", "disk1"), r);
        assertEquals("admin", r.id());
        assertNull(r.conf());
        assertNull(r.keyring());
        assertNull(r.namespace());
        assertNull(r.snapshot());
        assertEquals(512, r.blockSize());
        assertEquals(20, r.connectTimeoutSeconds());
        assertEquals(25, r.osdOpTimeoutSeconds());
        assertEquals(25, r.monOpTimeoutSeconds());
        NamespaceSection n = load(yaml("pool: rbd", "image: disk1")).config().subsystems().get(0).namespaces().get(0);
        assertEquals("rbd:rbd/disk1", n.describeBacking());
        assertEquals(ConfigLoader.derivedUuid(SUB, 1), n.uuid(), "the namespace keys work as for any kind");
    }

    @Test
    void everyKeyIsReadAndReachesTheBackendSpec() throws Exception {
        RbdSection r = rbd(yaml("pool: volumes", "namespace: tenant-a", "image: disk1", "snapshot: nightly",
                "conf: /etc/ceph/ceph.conf", "id: nvmf", "keyring: /etc/ceph/ceph.client.nvmf.keyring",
                "block_size: 4096", "connect_timeout: 5", "osd_op_timeout: 3600", "mon_op_timeout: 1"));
        assertEquals(new RbdSection("volumes", "tenant-a", "disk1", "nightly", "/etc/ceph/ceph.conf", "nvmf",
                "/etc/ceph/ceph.client.nvmf.keyring", 4096, 5, 3600, 1), r);
        var spec = r.spec();
        assertEquals("rbd:volumes/tenant-a/disk1@nightly", spec.describe());
        assertEquals(Path.of("/etc/ceph/ceph.conf"), spec.conf());
        assertEquals(Path.of("/etc/ceph/ceph.client.nvmf.keyring"), spec.keyring());
        assertEquals("nvmf", spec.id());
        assertEquals(4096, spec.blockSize());
        assertEquals(5, spec.connectTimeout().toSeconds());
        assertEquals(3600, spec.osdOpTimeout().toSeconds());
        assertEquals(1, spec.monOpTimeout().toSeconds());
    }

    @Test
    void theEffectiveConfigurationWritesEveryKeyAndReadsBackTheSame() throws Exception {
        for (String[] body : List.of(new String[] {"pool: rbd", "image: disk1"},
                new String[] {"pool: volumes", "namespace: t", "image: d", "snapshot: s", "conf: /c.conf",
                        "id: nvmf", "keyring: /k", "block_size: 4096", "connect_timeout: 2", "osd_op_timeout: 3",
                        "mon_op_timeout: 4"})) {
            TargetConfig c = load(yaml(body)).config();
            String written = ConfigWriter.toYaml(c);
            assertEquals(c, load(written).config(), written);
            for (String key : List.of("pool:", "image:", "id:", "block_size:", "connect_timeout:", "osd_op_timeout:",
                    "mon_op_timeout:")) {
                assertTrue(written.contains(key), key + " is written with its value:\n" + written);
            }
        }
        String defaults = ConfigWriter.toYaml(load(yaml("pool: rbd", "image: disk1")).config());
        assertTrue(defaults.contains("""
                        rbd:
                          pool: rbd
                          image: disk1
                          id: admin
                          block_size: 512
                          connect_timeout: 20
                          osd_op_timeout: 25
                          mon_op_timeout: 25
                """), defaults);
        assertFalse(defaults.contains("keyring") || defaults.contains("conf:"), "unset paths stay librados' search");
    }

    @Test
    void theKindsExcludeEachOther() {
        assertEquals(List.of("t.yaml:5:9: subsystems[0].namespaces[0]: a namespace takes only one of 'device', "
                + "'file', 'ram_size' or 'rbd', found file and rbd"),
                errors(yaml("pool: rbd", "image: disk1").replace("        rbd:", "        file: /a.img\n        rbd:")));
        assertEquals(List.of("t.yaml:5:9: subsystems[0].namespaces[0]: a namespace needs one of 'device', 'file', "
                + "'ram_size' or 'rbd'"), errors(yaml().replace("        rbd:\n", "        rbd: null\n")));
        assertEquals(List.of("t.yaml:9:22: subsystems[0].namespaces[0].buffered_io: buffered_io applies to file "
                + "namespaces only (block devices are always opened O_DIRECT, RAM has no page cache, RBD has "
                + "librbd's cache)"), errors(yaml("pool: rbd", "image: disk1") + "        buffered_io: true\n"));
    }

    @Test
    void theShapeAndTheRequiredKeys() {
        assertEquals(List.of("t.yaml:6:14: subsystems[0].namespaces[0].rbd: expected a mapping, found string "
                + "'rbd/disk1'"), errors(yaml().replace("        rbd:\n", "        rbd: rbd/disk1\n")));
        assertEquals(List.of("t.yaml:7:11: subsystems[0].namespaces[0].rbd: missing required key 'pool'",
                "t.yaml:7:11: subsystems[0].namespaces[0].rbd: missing required key 'image'"),
                errors(yaml("id: nvmf")));
        assertEquals(List.of("t.yaml:7:11: subsystems[0].namespaces[0].rbd.pol: unknown key 'pol' (did you mean "
                + "'pool'?); allowed here: block_size, conf, connect_timeout, id, image, keyring, "
                + "mon_op_timeout, namespace, osd_op_timeout, pool, snapshot"),
                errors(yaml("pol: rbd", "pool: rbd", "image: disk1")));
        assertEquals(List.of("t.yaml:8:18: subsystems[0].namespaces[0].rbd.image: expected a string, found a list"),
                errors(yaml("pool: rbd", "image: [a, b]")));
    }

    @Test
    void namesAreCheckedByTheBackendsOwnRulesAtTheirKey() {
        assertEquals(List.of("t.yaml:7:17: subsystems[0].namespaces[0].rbd.pool: pool must not be empty"),
                errors(yaml("pool: \"\"", "image: disk1")));
        assertEquals(List.of("t.yaml:8:18: subsystems[0].namespaces[0].rbd.image: image must not contain '/': "
                + "\"rbd/disk1\""), errors(yaml("pool: rbd", "image: rbd/disk1")));
        assertEquals(List.of("t.yaml:8:18: subsystems[0].namespaces[0].rbd.image: image must not contain '@': "
                + "\"disk1@snap\""), errors(yaml("pool: rbd", "image: disk1@snap")));
        assertEquals(List.of("t.yaml:9:22: subsystems[0].namespaces[0].rbd.namespace: namespace must not contain "
                + "'/': \"a/b\""), errors(yaml("pool: rbd", "image: disk1", "namespace: a/b")));
        assertEquals(List.of("t.yaml:9:21: subsystems[0].namespaces[0].rbd.snapshot: snapshot must not be empty"),
                errors(yaml("pool: rbd", "image: disk1", "snapshot: ''")));
        assertEquals(List.of("t.yaml:9:15: subsystems[0].namespaces[0].rbd.id: id is the user name after "
                + "\"client.\": write \"nvmf\", not \"client.nvmf\""),
                errors(yaml("pool: rbd", "image: disk1", "id: client.nvmf")));
    }

    @Test
    void numbersAndTheirRanges() {
        assertEquals(List.of("t.yaml:9:23: subsystems[0].namespaces[0].rbd.block_size: block_size must be 512 or "
                + "4096 (the logical block sizes the target serves), found 1024"),
                errors(yaml("pool: rbd", "image: disk1", "block_size: 1024")));
        assertEquals(List.of(
                "t.yaml:9:28: subsystems[0].namespaces[0].rbd.connect_timeout: value 0 is out of range, allowed 1 "
                        + "to 3600",
                "t.yaml:10:27: subsystems[0].namespaces[0].rbd.osd_op_timeout: value 3601 is out of range, allowed "
                        + "1 to 3600",
                "t.yaml:11:27: subsystems[0].namespaces[0].rbd.mon_op_timeout: expected an integer, found string "
                        + "'25s'"),
                errors(yaml("pool: rbd", "image: disk1", "connect_timeout: 0", "osd_op_timeout: 3601",
                        "mon_op_timeout: 25s")));
    }

    @Test
    void pathsMustBeAbsoluteAndAKeyIsNeverRepeated() throws Exception {
        List<String> e = errors(yaml("pool: rbd", "image: disk1", "conf: ceph.conf", "keyring: " + KEY));
        assertEquals(List.of(
                "t.yaml:9:17: subsystems[0].namespaces[0].rbd.conf: 'ceph.conf' must be an absolute path",
                "t.yaml:10:20: subsystems[0].namespaces[0].rbd.keyring: keyring must be the absolute path of a "
                        + "keyring file (the key itself stays in that file)"), e);
        List<String> k = errors(yaml("pool: rbd", "image: disk1", "key: " + KEY));
        assertEquals(List.of("t.yaml:9:11: subsystems[0].namespaces[0].rbd.key: the cephx key does not go in this "
                + "file: keep it in a keyring file (mode 0600) and name that file with 'keyring'"), k);
        for (String line : concat(e, k)) {
            assertFalse(line.contains(KEY), "a message repeats the key: " + line);
        }
    }

    @Test
    void withTheDeviceCheckTheConfAndKeyringFilesMustBeThere() throws Exception {
        Path conf = Files.writeString(dir.resolve("ceph.conf"), "[global]\nmon_host = 127.0.0.1\n");
        Path keyring = Files.writeString(dir.resolve("ceph.client.nvmf.keyring"), "[client.nvmf]\n\tkey = " + KEY + "\n");
        String good = yaml("pool: rbd", "image: disk1", "conf: " + conf, "id: nvmf", "keyring: " + keyring);
        RbdSection r = ConfigLoader.parse(good, "t.yaml", ConfigLoader.Options.DEFAULT).config().subsystems().get(0)
                .namespaces().get(0).rbd();
        assertEquals(keyring.toString(), r.keyring());
        assertFalse(r.toString().contains(KEY), "only the path is held, the file is never read");

        assertEquals(List.of(
                "t.yaml:9:17: subsystems[0].namespaces[0].rbd.conf: conf '" + dir.resolve("missing.conf")
                        + "' does not exist",
                "t.yaml:10:20: subsystems[0].namespaces[0].rbd.keyring: keyring '" + dir + "' is not a regular "
                        + "file"),
                errors(yaml("pool: rbd", "image: disk1", "conf: " + dir.resolve("missing.conf"), "keyring: " + dir),
                        ConfigLoader.Options.DEFAULT));
        // Without the check (a file prepared for another machine) the paths are taken as they are.
        assertEquals(dir.resolve("missing.conf").toString(),
                rbd(yaml("pool: rbd", "image: disk1", "conf: " + dir.resolve("missing.conf"))).conf());
    }

    @Test
    void twoNamespacesOnOneImageAreWarnedAbout() throws Exception {
        String two = yaml("pool: rbd", "image: disk1")
                + "      - nsid: 2\n        rbd: {pool: rbd, image: disk1, id: other}\n"
                + "      - nsid: 3\n        rbd: {pool: rbd, image: disk1, conf: /etc/ceph/other-cluster.conf}\n"
                + "      - nsid: 4\n        rbd: {pool: rbd, image: disk1, snapshot: s}\n"
                + "      - nsid: 5\n        rbd: {pool: rbd, image: disk1, snapshot: s}\n";
        assertEquals(List.of(
                "t.yaml:10:14: subsystems[0].namespaces[1].rbd: rbd:rbd/disk1 is also served by " + SUB + " nsid 1 "
                        + "(at line 7:11): hosts see two different disks with the same blocks, and the two take "
                        + "turns at the image's exclusive lock",
                "t.yaml:16:14: subsystems[0].namespaces[4].rbd: rbd:rbd/disk1@s is also served by " + SUB + " nsid 4 "
                        + "(at line 14:14): hosts see two different disks with the same blocks"),
                load(two).warnings().stream().map(ConfigError::toString).toList(),
                "the same user does not matter; another cluster's image of the same name is another image");
    }

    @Test
    void aReloadReopensTheNamespaceWhenAnyKeyChangesAndKeepsItOtherwise() throws Exception {
        TargetConfig before = load(yaml("pool: rbd", "image: disk1", "id: nvmf", "keyring: /etc/ceph/a.keyring"))
                .config();
        assertTrue(ConfigDiff.between(before, load(yaml("pool: rbd", "image: disk1", "id: nvmf",
                "keyring: /etc/ceph/a.keyring")).config()).isEmpty(), "the same image, the same client: kept");
        List<String[]> changes = List.of(
                new String[] {"pool: rbd", "image: disk1", "id: nvmf", "keyring: /etc/ceph/b.keyring"},
                new String[] {"pool: rbd", "image: disk1", "id: nvmf2", "keyring: /etc/ceph/b.keyring"},
                new String[] {"pool: rbd", "image: disk2", "id: nvmf", "keyring: /etc/ceph/a.keyring"},
                new String[] {"pool: rbd", "image: disk1", "id: nvmf", "keyring: /etc/ceph/a.keyring",
                        "osd_op_timeout: 10"});
        List<String> lines = List.of(
                "~ namespace " + SUB + " nsid 1 rbd:rbd/disk1 (rbd: keyring)",
                "~ namespace " + SUB + " nsid 1 rbd:rbd/disk1 (rbd: id, keyring)",
                "~ namespace " + SUB + " nsid 1 rbd:rbd/disk2 (rbd: image)",
                "~ namespace " + SUB + " nsid 1 rbd:rbd/disk1 (rbd: osd_op_timeout)");
        for (int i = 0; i < changes.size(); i++) {
            String[] change = changes.get(i);
            ConfigDiff diff = ConfigDiff.between(before, load(yaml(change)).config());
            assertEquals(1, diff.subsystemsChanged().size(), String.join(", ", change));
            var nc = diff.subsystemsChanged().get(0).namespacesChanged();
            assertEquals(1, nc.size(), String.join(", ", change));
            assertFalse(nc.get(0).enabledOnly());
            assertEquals(List.of(lines.get(i)), diff.describe(), "which keys changed, never their values");
        }
        ConfigDiff disabled = ConfigDiff.between(before, load(yaml("pool: rbd", "image: disk1", "id: nvmf",
                "keyring: /etc/ceph/a.keyring") + "        enabled: false\n").config());
        assertTrue(disabled.subsystemsChanged().get(0).namespacesChanged().get(0).enabledOnly());
        assertEquals(List.of("~ namespace " + SUB + " nsid 1 disabled"), disabled.describe());
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new java.util.ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
