package dev.nvmf.target.config;

import dev.nvmf.target.nvme.AnaLog;

import java.util.UUID;

/**
 * One entry of {@code subsystems[].namespaces}: a namespace of a subsystem (nvmetcli: {@code namespaces/NSID}).
 *
 * @param nsid     namespace id, {@link Limits#NSID}
 * @param kind     what backs it
 * @param path     the block device or file; null for RAM and RBD
 * @param ramSize  bytes of memory for a RAM namespace; 0 otherwise
 * @param uuid     namespace UUID (Identify Namespace Identification Descriptor); derived from subsystem NQN and
 *                 NSID when not configured, so it is stable across restarts
 * @param nguid    namespace globally unique identifier as 32 lower-case hex digits, or null
 * @param readOnly writes are refused (and the namespace reports write protection)
 * @param enabled  false keeps it configured but invisible to hosts (nvmetcli "enable": 0)
 * @param bufferedIo a file namespace goes through the page cache; false (the default) opens the file O_DIRECT, as
 *                 the kernel target does (kernel io-cmd-file.c, nvmet_file_ns_enable; configfs buffered_io)
 * @param rbd      the Ceph RBD image of an RBD namespace; null for the other kinds
 * @param anaGroup the ANA group, {@link Limits#ANA_GROUP}, 1 unless configured (kernel configfs ana_grpid); each
 *                 port sets the group's state ({@link PortSection#anaGroups})
 */
public record NamespaceSection(long nsid, Kind kind, String path, long ramSize, UUID uuid, String nguid,
                               boolean readOnly, boolean enabled, boolean bufferedIo, RbdSection rbd, int anaGroup) {
    public enum Kind {
        /** A block device, e.g. /dev/nvme0n1 (kernel: io-cmd-bdev.c). */
        DEVICE("device"),
        /** A regular file (kernel: io-cmd-file.c). */
        FILE("file"),
        /** Memory, lost on exit; for tests and benchmarks. */
        RAM("ram_size"),
        /** A Ceph RBD image, through librbd (docs/rbd.md). */
        RBD("rbd");

        private final String key;

        Kind(String key) {
            this.key = key;
        }

        /** The YAML key that selects this kind. */
        public String key() {
            return key;
        }
    }

    /** In the default ANA group. */
    public NamespaceSection(long nsid, Kind kind, String path, long ramSize, UUID uuid, String nguid,
                            boolean readOnly, boolean enabled, boolean bufferedIo, RbdSection rbd) {
        this(nsid, kind, path, ramSize, uuid, nguid, readOnly, enabled, bufferedIo, rbd, AnaLog.DEFAULT_GROUP_ID);
    }

    /** Not an RBD image, in the given ANA group. */
    public NamespaceSection(long nsid, Kind kind, String path, long ramSize, UUID uuid, String nguid,
                            boolean readOnly, boolean enabled, boolean bufferedIo, int anaGroup) {
        this(nsid, kind, path, ramSize, uuid, nguid, readOnly, enabled, bufferedIo, null, anaGroup);
    }

    /** Not an RBD image, in the default ANA group. */
    public NamespaceSection(long nsid, Kind kind, String path, long ramSize, UUID uuid, String nguid,
                            boolean readOnly, boolean enabled, boolean bufferedIo) {
        this(nsid, kind, path, ramSize, uuid, nguid, readOnly, enabled, bufferedIo, null, AnaLog.DEFAULT_GROUP_ID);
    }

    /** The same namespace, enabled or not. */
    public NamespaceSection withEnabled(boolean on) {
        return new NamespaceSection(nsid, kind, path, ramSize, uuid, nguid, readOnly, on, bufferedIo, rbd, anaGroup);
    }

    /** The same namespace in another ANA group. */
    public NamespaceSection withAnaGroup(int group) {
        return new NamespaceSection(nsid, kind, path, ramSize, uuid, nguid, readOnly, enabled, bufferedIo, rbd, group);
    }

    /** "device:/dev/x", "file:/path", "ram:1GiB" or "rbd:pool/image", for logs and diffs (never credentials). */
    public String describeBacking() {
        return switch (kind) {
            case DEVICE -> "device:" + path;
            case FILE -> "file:" + path + (bufferedIo ? " (buffered)" : "");
            case RAM -> "ram:" + Sizes.format(ramSize);
            case RBD -> rbd.describe();
        };
    }
}
