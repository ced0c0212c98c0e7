package dev.nvmf.target.backend.rbd;

import dev.nvmf.target.backend.BackendSpec;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** What an RBD namespace spec accepts and the exact words it refuses with (the config loader shows them). */
class RbdSpecTest {
    private static String refusal(Runnable r) {
        return assertThrows(IllegalArgumentException.class, r::run).getMessage();
    }

    @Test
    void defaultsAreLibradosDefaultsWithBoundedTimeouts() {
        RbdSpec s = RbdSpec.of("rbd", "disk1");
        assertEquals("admin", s.id());
        assertNull(s.conf());
        assertNull(s.keyring());
        assertNull(s.namespace());
        assertNull(s.snapshot());
        assertEquals(512, s.blockSize());
        assertEquals(Duration.ofSeconds(20), s.connectTimeout());
        assertEquals(Duration.ofSeconds(25), s.osdOpTimeout());
        assertEquals(Duration.ofSeconds(25), s.monOpTimeout());
        assertEquals(Duration.ofSeconds(30), s.sizePollInterval());
        assertEquals("rbd:rbd/disk1", s.describe());
        assertEquals("rbd:rbd/ns1/disk1@snap", s.withNamespace("ns1").withSnapshot("snap").describe());
        RbdSpec c = s.withCredentials(Path.of("/etc/ceph/c.conf"), "nvmf", Path.of("/etc/ceph/k"));
        assertEquals("nvmf", c.id());
        assertEquals("rbd:rbd/disk1", c.describe(), "credentials never appear in the description");
    }

    @Test
    void badValuesAreRefusedNamingTheKey() {
        assertEquals("pool must not be empty", refusal(() -> RbdSpec.of("", "disk")));
        assertEquals("image must not contain '/': \"a/b\"", refusal(() -> RbdSpec.of("rbd", "a/b")));
        assertEquals("image must not contain '@': \"a@b\"", refusal(() -> RbdSpec.of("rbd", "a@b")));
        assertEquals("snapshot must not be empty", refusal(() -> RbdSpec.of("rbd", "a").withSnapshot("")));
        assertEquals("namespace must not contain '/': \"x/y\"",
                refusal(() -> RbdSpec.of("rbd", "a").withNamespace("x/y")));
        assertEquals("id is the user name after \"client.\": write \"nvmf\", not \"client.nvmf\"",
                refusal(() -> RbdSpec.of("rbd", "a").withCredentials(null, "client.nvmf", null)));
        assertEquals("osd_op_timeout must be whole seconds from 1 s to 1 h, not PT1.5S",
                refusal(() -> RbdSpec.of("rbd", "a").withTimeouts(Duration.ofSeconds(5), Duration.ofMillis(1500),
                        Duration.ofSeconds(5))));
        assertEquals("connect_timeout must be whole seconds from 1 s to 1 h, not PT0S",
                refusal(() -> RbdSpec.of("rbd", "a").withTimeouts(Duration.ZERO, Duration.ofSeconds(5),
                        Duration.ofSeconds(5))));
        assertEquals("mon_op_timeout must be whole seconds from 1 s to 1 h, not PT2H",
                refusal(() -> RbdSpec.of("rbd", "a").withTimeouts(Duration.ofSeconds(5), Duration.ofSeconds(5),
                        Duration.ofHours(2))));
        assertEquals("block_size must be 512 or 4096, not 1024",
                refusal(() -> RbdSpec.of("rbd", "a").withBlockSize(1024)));
        assertEquals("size_poll_interval must be at least 1 ms and at most 1 h, not PT0S",
                refusal(() -> RbdSpec.of("rbd", "a").withSizePollInterval(Duration.ZERO)));
    }

    @Test
    void theBackendSpecOfAnImageHasNoPathAndTheImagesSize() {
        BackendSpec b = BackendSpec.rbd(RbdSpec.of("rbd", "disk1")).withReadOnly(true).withMaxInFlight(256);
        assertEquals(BackendSpec.Kind.RBD, b.kind());
        assertNull(b.path());
        assertEquals(BackendSpec.SIZE_FROM_MEDIUM, b.sizeBytes());
        assertEquals(256, b.maxInFlight());
        assertEquals("rbd:rbd/disk1", b.rbd().describe());
        assertEquals("an RBD spec goes with kind RBD only", refusal(() -> new BackendSpec(BackendSpec.Kind.FILE,
                Path.of("/x"), BackendSpec.SIZE_FROM_MEDIUM, false, false, 1, 1,
                dev.nvmf.target.backend.AsyncFdBackend.FuaMode.RWF_DSYNC, false, RbdSpec.of("rbd", "disk1"))));
    }
}
