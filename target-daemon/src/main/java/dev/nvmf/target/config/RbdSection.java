package dev.nvmf.target.config;

import dev.nvmf.target.backend.rbd.RbdSpec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The {@code rbd} mapping of a namespace: a Ceph RBD image and how to reach its cluster (docs/rbd.md). Only paths
 * are held: the cephx key stays in the keyring file, which librados reads itself.
 *
 * @param pool                  the RADOS pool holding the image
 * @param namespace             the RADOS namespace inside the pool, or null for the default one
 * @param image                 the image
 * @param snapshot              a snapshot of the image to serve (read-only), or null
 * @param conf                  the ceph.conf to read, or null for librados' search
 * @param id                    the cephx user without {@code client.}
 * @param keyring               the keyring file with that user's key, or null for librados' search
 * @param blockSize             the namespace's LBA size, 512 or 4096
 * @param connectTimeoutSeconds how long opening waits for a monitor
 * @param osdOpTimeoutSeconds   how long one I/O waits for the OSDs
 * @param monOpTimeoutSeconds   how long a monitor request may take
 */
public record RbdSection(String pool, String namespace, String image, String snapshot, String conf, String id,
                         String keyring, int blockSize, int connectTimeoutSeconds, int osdOpTimeoutSeconds,
                         int monOpTimeoutSeconds) {
    public static final int DEFAULT_BLOCK_SIZE = RbdSpec.DEFAULT_BLOCK_SIZE;
    public static final int DEFAULT_CONNECT_TIMEOUT = (int) RbdSpec.DEFAULT_CONNECT_TIMEOUT.toSeconds();
    public static final int DEFAULT_OSD_OP_TIMEOUT = (int) RbdSpec.DEFAULT_OSD_OP_TIMEOUT.toSeconds();
    public static final int DEFAULT_MON_OP_TIMEOUT = (int) RbdSpec.DEFAULT_MON_OP_TIMEOUT.toSeconds();

    /** An image with every other key at its default. */
    public static RbdSection of(String pool, String image) {
        return new RbdSection(pool, null, image, null, null, RbdSpec.DEFAULT_ID, null, DEFAULT_BLOCK_SIZE,
                DEFAULT_CONNECT_TIMEOUT, DEFAULT_OSD_OP_TIMEOUT, DEFAULT_MON_OP_TIMEOUT);
    }

    /**
     * What the backend opens. Its constructor checks names and ranges and throws {@link IllegalArgumentException}
     * with a message that starts with the key; {@link ConfigLoader} calls it to report those at the key.
     */
    public RbdSpec spec() {
        return new RbdSpec(pool, namespace, image, snapshot, conf == null ? null : Path.of(conf), id,
                keyring == null ? null : Path.of(keyring), Duration.ofSeconds(connectTimeoutSeconds),
                Duration.ofSeconds(osdOpTimeoutSeconds), Duration.ofSeconds(monOpTimeoutSeconds), blockSize,
                RbdSpec.DEFAULT_SIZE_POLL_INTERVAL);
    }

    /** The keys whose values differ from {@code other}'s, in the order of the file (names only, never values). */
    public List<String> keysChangedFrom(RbdSection other) {
        List<String> keys = new ArrayList<>();
        String[] names = {"pool", "namespace", "image", "snapshot", "conf", "id", "keyring", "block_size",
                "connect_timeout", "osd_op_timeout", "mon_op_timeout"};
        Object[] mine = values();
        Object[] theirs = other.values();
        for (int i = 0; i < names.length; i++) {
            if (!Objects.equals(mine[i], theirs[i])) {
                keys.add(names[i]);
            }
        }
        return keys;
    }

    private Object[] values() {
        return new Object[] {pool, namespace, image, snapshot, conf, id, keyring, blockSize, connectTimeoutSeconds,
                osdOpTimeoutSeconds, monOpTimeoutSeconds};
    }

    /** "rbd:pool/image" (with namespace and snapshot when given), as the backend names it; no credentials. */
    public String describe() {
        return spec().describe();
    }
}
