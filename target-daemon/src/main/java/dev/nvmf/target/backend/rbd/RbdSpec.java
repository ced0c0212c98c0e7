package dev.nvmf.target.backend.rbd;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Which RBD image a namespace serves and how to reach its cluster (the YAML namespace kind
 * {@code rbd: {pool, image, conf, id, keyring, ...}}; see docs/rbd.md).
 *
 * @param pool             the RADOS pool holding the image
 * @param namespace        the RADOS namespace inside the pool, or null for the default one
 * @param image            the image name
 * @param snapshot         a snapshot to serve (always read-only), or null for the image itself
 * @param conf             the ceph.conf to read (monitors, options), or null for librados' default search
 *                         ({@code $CEPH_CONF}, {@code /etc/ceph/ceph.conf}, {@code ~/.ceph/config},
 *                         {@code ./ceph.conf})
 * @param id               the cephx user without its {@code client.} prefix, e.g. {@code nvmf} for client.nvmf
 * @param keyring          the keyring file holding that user's key, or null for librados' default search
 *                         ({@code /etc/ceph/ceph.client.ID.keyring}, {@code /etc/ceph/ceph.keyring}, ...). Only the
 *                         path is ever handled or logged, never the key.
 * @param connectTimeout   how long opening may wait for the monitors ({@code client_mount_timeout})
 * @param osdOpTimeout     how long one I/O may wait for the OSDs before it fails with -ETIMEDOUT
 *                         ({@code rados_osd_op_timeout})
 * @param monOpTimeout     how long a monitor request may take ({@code rados_mon_op_timeout})
 * @param blockSize        the namespace's LBA size: 512 (the default) or 4096
 * @param sizePollInterval how often the image size is read in case a header-update notification was missed (the
 *                         update watch reports a resize at once; read-only opens have no watch and rely on this)
 */
public record RbdSpec(String pool, String namespace, String image, String snapshot, Path conf, String id,
                      Path keyring, Duration connectTimeout, Duration osdOpTimeout, Duration monOpTimeout,
                      int blockSize, Duration sizePollInterval) {
    /** The cephx user librados takes when none is named. */
    public static final String DEFAULT_ID = "admin";
    /**
     * Below the Linux host's default NVMe I/O timeout (kernel host core.c, nvme_io_timeout: 30 s), so that an
     * operation stuck in the cluster is answered with a retryable status before the host gives up and resets the
     * controller, and above Ceph's default OSD failure detection (Ceph mon-osd interaction, osd_heartbeat_grace:
     * 20 s) plus a little peering.
     */
    public static final Duration DEFAULT_OSD_OP_TIMEOUT = Duration.ofSeconds(25);
    public static final Duration DEFAULT_MON_OP_TIMEOUT = Duration.ofSeconds(25);
    /** Opening waits this long for a monitor before it fails with a clear error. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(20);
    public static final int DEFAULT_BLOCK_SIZE = 512;
    public static final Duration DEFAULT_SIZE_POLL_INTERVAL = Duration.ofSeconds(30);
    /** No timeout may exceed this (nor be 0, which Ceph reads as "wait forever"). */
    public static final Duration MAX_TIMEOUT = Duration.ofHours(1);

    public RbdSpec {
        requireName("pool", pool, "/");
        if (namespace != null) {
            requireName("namespace", namespace, "/");
        }
        requireName("image", image, "/@");
        if (snapshot != null) {
            requireName("snapshot", snapshot, "/@");
        }
        requireName("id", id, "");
        if (id.startsWith("client.")) {
            throw new IllegalArgumentException("id is the user name after \"client.\": write \""
                    + id.substring("client.".length()) + "\", not \"" + id + "\"");
        }
        requireSeconds("connect_timeout", connectTimeout);
        requireSeconds("osd_op_timeout", osdOpTimeout);
        requireSeconds("mon_op_timeout", monOpTimeout);
        Objects.requireNonNull(sizePollInterval, "size_poll_interval");
        if (sizePollInterval.toMillis() < 1 || sizePollInterval.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("size_poll_interval must be at least 1 ms and at most 1 h, not "
                    + sizePollInterval);
        }
        if (blockSize != 512 && blockSize != 4096) {
            throw new IllegalArgumentException("block_size must be 512 or 4096, not " + blockSize);
        }
    }

    /** An image of the default RADOS namespace, read with librados' default configuration and user. */
    public static RbdSpec of(String pool, String image) {
        return new RbdSpec(pool, null, image, null, null, DEFAULT_ID, null, DEFAULT_CONNECT_TIMEOUT,
                DEFAULT_OSD_OP_TIMEOUT, DEFAULT_MON_OP_TIMEOUT, DEFAULT_BLOCK_SIZE, DEFAULT_SIZE_POLL_INTERVAL);
    }

    /** The same with {@code conf}, {@code id} and {@code keyring} (null: librados' default). */
    public RbdSpec withCredentials(Path conf, String id, Path keyring) {
        return new RbdSpec(pool, namespace, image, snapshot, conf, id == null ? DEFAULT_ID : id, keyring,
                connectTimeout, osdOpTimeout, monOpTimeout, blockSize, sizePollInterval);
    }

    public RbdSpec withNamespace(String namespace) {
        return new RbdSpec(pool, namespace, image, snapshot, conf, id, keyring, connectTimeout, osdOpTimeout,
                monOpTimeout, blockSize, sizePollInterval);
    }

    public RbdSpec withSnapshot(String snapshot) {
        return new RbdSpec(pool, namespace, image, snapshot, conf, id, keyring, connectTimeout, osdOpTimeout,
                monOpTimeout, blockSize, sizePollInterval);
    }

    public RbdSpec withTimeouts(Duration connect, Duration osdOp, Duration monOp) {
        return new RbdSpec(pool, namespace, image, snapshot, conf, id, keyring, connect, osdOp, monOp, blockSize,
                sizePollInterval);
    }

    public RbdSpec withBlockSize(int blockSize) {
        return new RbdSpec(pool, namespace, image, snapshot, conf, id, keyring, connectTimeout, osdOpTimeout,
                monOpTimeout, blockSize, sizePollInterval);
    }

    public RbdSpec withSizePollInterval(Duration interval) {
        return new RbdSpec(pool, namespace, image, snapshot, conf, id, keyring, connectTimeout, osdOpTimeout,
                monOpTimeout, blockSize, interval);
    }

    /** "rbd:pool/image", "rbd:pool/namespace/image@snapshot": for logs, metrics and errors (no credentials). */
    public String describe() {
        StringBuilder s = new StringBuilder("rbd:").append(pool).append('/');
        if (namespace != null) {
            s.append(namespace).append('/');
        }
        s.append(image);
        if (snapshot != null) {
            s.append('@').append(snapshot);
        }
        return s.toString();
    }

    private static void requireName(String key, String value, String forbidden) {
        Objects.requireNonNull(value, key);
        if (value.isEmpty()) {
            throw new IllegalArgumentException(key + " must not be empty");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == 0 || forbidden.indexOf(c) >= 0) {
                throw new IllegalArgumentException(key + " must not contain " + (c == 0 ? "NUL" : "'" + c + "'")
                        + ": \"" + value.replace("\0", "\\0") + "\"");
            }
        }
    }

    /** librados takes these options in whole seconds only, a fraction is refused with -EINVAL (Ceph client options). */
    private static void requireSeconds(String key, Duration d) {
        Objects.requireNonNull(d, key);
        if (d.getNano() != 0 || d.getSeconds() < 1 || d.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException(key + " must be whole seconds from 1 s to 1 h, not " + d);
        }
    }
}
