package dev.nvmf.target.backend.rbd;

import dev.nvmf.verbs.Errno;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One librados cluster handle, connected, and an I/O context on the image's pool (and RADOS namespace): the control
 * path under {@link RbdBackend}.
 *
 * <p>Configuration order: ceph.conf first, then the options this target insists on, so that they win over the file:
 * the keyring path, the three timeouts of {@link RbdSpec} (Ceph's defaults wait forever: Ceph client options),
 * {@code rbd_non_blocking_aio = true} (submissions are queued to librbd's own thread and never block a poller) and
 * {@code rbd_skip_partial_discard = false} (both: Ceph librbd settings). Connecting blocks the caller for at most
 * {@code connectTimeout}.
 */
final class RadosConnection implements AutoCloseable {
    private final String image;
    private final long cluster;
    private final long ioctx;
    private boolean closed;

    private RadosConnection(String image, long cluster, long ioctx) {
        this.image = image;
        this.cluster = cluster;
        this.ioctx = ioctx;
    }

    /** The {@code rados_t}. */
    long cluster() {
        return cluster;
    }

    /** The {@code rados_ioctx_t} on the image's pool. */
    long ioctx() {
        return ioctx;
    }

    static RadosConnection open(RbdSpec spec) throws RbdOpenException {
        String name = spec.describe();
        String failure = CephLibraries.failure();
        if (failure != null) {
            throw new RbdOpenException(name, "loading librbd", 0, failure);
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(JAVA_LONG);
            int rc = CephNative.radosCreate(out, arena.allocateFrom(spec.id()));
            if (rc < 0) {
                throw new RbdOpenException(name, "rados_create(client." + spec.id() + ")", rc, null);
            }
            long cluster = out.get(JAVA_LONG, 0);
            try {
                configure(arena, cluster, spec);
                String monitors = confGet(arena, cluster, "mon_host");
                rc = CephNative.radosConnect(cluster);
                if (rc < 0) {
                    throw new RbdOpenException(name, "rados_connect as client." + spec.id() + " to "
                            + (monitors.isEmpty() ? "(no mon_host configured)" : monitors), rc,
                            connectHint(rc, spec));
                }
                rc = CephNative.radosIoctxCreate(cluster, arena.allocateFrom(spec.pool()), out);
                if (rc < 0) {
                    throw new RbdOpenException(name, "rados_ioctx_create(pool " + spec.pool() + ")", rc,
                            rc == -Errno.ENOENT ? "no such pool" : null);
                }
                long ioctx = out.get(JAVA_LONG, 0);
                if (spec.namespace() != null) {
                    CephNative.radosIoctxSetNamespace(ioctx, arena.allocateFrom(spec.namespace()));
                }
                return new RadosConnection(name, cluster, ioctx);
            } catch (RbdOpenException | RuntimeException e) {
                CephNative.radosShutdown(cluster);
                throw e;
            }
        }
    }

    private static void configure(Arena arena, long cluster, RbdSpec spec) throws RbdOpenException {
        String name = spec.describe();
        Path conf = spec.conf();
        int rc;
        if (conf != null) {
            if (!Files.isReadable(conf)) {
                throw new RbdOpenException(name, "conf " + conf, Files.exists(conf) ? -Errno.EACCES : -Errno.ENOENT,
                        null);
            }
            rc = CephNative.radosConfReadFile(cluster, arena.allocateFrom(conf.toString()));
            if (rc < 0) {
                throw new RbdOpenException(name, "rados_conf_read_file(" + conf + ")", rc, "not a valid ceph.conf?");
            }
        } else {
            rc = CephNative.radosConfReadFile(cluster, MemorySegment.NULL);
            if (rc < 0 && rc != -Errno.ENOENT) {
                throw new RbdOpenException(name, "rados_conf_read_file(default locations)", rc, null);
            }
            // -ENOENT: no ceph.conf anywhere; CEPH_ARGS may still name the monitors, else rados_connect says so.
        }
        if (spec.keyring() != null) {
            Path keyring = spec.keyring();
            if (!Files.isReadable(keyring)) {
                throw new RbdOpenException(name, "keyring " + keyring,
                        Files.exists(keyring) ? -Errno.EACCES : -Errno.ENOENT, null);
            }
            set(arena, cluster, name, "keyring", keyring.toString());
        }
        set(arena, cluster, name, "client_mount_timeout", seconds(spec.connectTimeout()));
        set(arena, cluster, name, "rados_osd_op_timeout", seconds(spec.osdOpTimeout()));
        set(arena, cluster, name, "rados_mon_op_timeout", seconds(spec.monOpTimeout()));
        set(arena, cluster, name, "rbd_non_blocking_aio", "true");
        // Deallocated blocks read back as zeroes (the core reports DLFEAT "read zeroes"): librbd's default skips
        // the parts of a discard that do not cover rbd_discard_granularity_bytes (64 KiB) and leaves old data there.
        set(arena, cluster, name, "rbd_skip_partial_discard", "false");
    }

    private static String connectHint(int rc, RbdSpec spec) {
        return switch (-rc) {
            case Errno.ETIMEDOUT -> "after " + spec.connectTimeout().getSeconds()
                    + " s (connect_timeout): is a monitor reachable at that address?";
            case Errno.EACCES, Errno.EPERM -> "the cluster refused client." + spec.id()
                    + ": check that its key in the keyring is the cluster's";
            case Errno.ENOENT -> "no key for client." + spec.id() + (spec.keyring() == null
                    ? " in the default keyrings (name one with keyring)" : " in " + spec.keyring());
            case Errno.EINVAL -> "no monitor address (conf names none?)";
            default -> null;
        };
    }

    private static void set(Arena arena, long cluster, String name, String option, String value)
            throws RbdOpenException {
        int rc = CephNative.radosConfSet(cluster, arena.allocateFrom(option), arena.allocateFrom(value));
        if (rc < 0) {
            // The value is not in the message: for "keyring" it is only a path, but keep one rule for all options.
            throw new RbdOpenException(name, "rados_conf_set(" + option + ")", rc, null);
        }
    }

    private static String confGet(Arena arena, long cluster, String option) {
        MemorySegment buf = arena.allocate(1024);
        int rc = CephNative.radosConfGet(cluster, arena.allocateFrom(option), buf, buf.byteSize());
        return rc < 0 ? "" : buf.getString(0);
    }

    private static String seconds(Duration d) {
        return Long.toString(d.getSeconds());
    }

    /** Destroys the I/O context and shuts the cluster handle down (its threads and sockets). Idempotent. */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            CephNative.radosIoctxDestroy(ioctx);
            CephNative.radosShutdown(cluster);
        }
    }

    @Override
    public String toString() {
        return "rados connection for " + image;
    }
}
