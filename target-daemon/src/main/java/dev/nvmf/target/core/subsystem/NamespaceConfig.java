package dev.nvmf.target.core.subsystem;

import dev.nvmf.target.nvme.AnaLog;

import java.util.Arrays;
import java.util.UUID;

/**
 * A namespace's identity and format (kernel: {@code struct nvmet_ns} attributes).
 *
 * @param nsid      namespace id, 1..{@link #MAX_NSID}
 * @param blockSize logical block size in bytes: 512 or 4096
 * @param readOnly  refuse writes (NSATTR write protected); a read-only backend makes the namespace read-only too
 * @param uuid      namespace UUID (descriptor type 3), or null
 * @param nguid     16-byte namespace globally unique identifier, or null
 * @param eui64     IEEE extended unique identifier (8 bytes, big-endian as a long), or 0 for none
 * @param anaGroupId the ANA group the namespace starts in, 1..128 (kernel configfs {@code ana_grpid}; 1 unless
 *                  configured); {@link Namespace#anaGroupId} follows later moves
 */
public record NamespaceConfig(int nsid, int blockSize, boolean readOnly, UUID uuid, byte[] nguid, long eui64,
                              int anaGroupId) {
    /** The number of namespaces a subsystem supports (Identify Controller NN), as the kernel target. */
    public static final int MAX_NSID = 1024;

    public NamespaceConfig {
        if (nsid < 1 || nsid > MAX_NSID) {
            throw new IllegalArgumentException("NSID must be 1.." + MAX_NSID + ": " + nsid);
        }
        if (blockSize != 512 && blockSize != 4096) {
            throw new IllegalArgumentException("block size must be 512 or 4096: " + blockSize);
        }
        if (nguid != null) {
            if (nguid.length != 16) {
                throw new IllegalArgumentException("NGUID must be 16 bytes: " + nguid.length);
            }
            nguid = nguid.clone();
        }
        if (anaGroupId < 1 || anaGroupId > AnaLog.MAX_GROUP_ID) {
            throw new IllegalArgumentException("ANA group id must be 1.." + AnaLog.MAX_GROUP_ID + ": " + anaGroupId);
        }
    }

    /** In the default ANA group (1). */
    public NamespaceConfig(int nsid, int blockSize, boolean readOnly, UUID uuid, byte[] nguid, long eui64) {
        this(nsid, blockSize, readOnly, uuid, nguid, eui64, AnaLog.DEFAULT_GROUP_ID);
    }

    public static NamespaceConfig of(int nsid, int blockSize) {
        return new NamespaceConfig(nsid, blockSize, false, null, null, 0);
    }

    /** The same namespace in another ANA group. */
    public NamespaceConfig withAnaGroupId(int groupId) {
        return new NamespaceConfig(nsid, blockSize, readOnly, uuid, nguid, eui64, groupId);
    }

    @Override
    public byte[] nguid() {
        return nguid == null ? null : nguid.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NamespaceConfig c && c.nsid == nsid && c.blockSize == blockSize && c.readOnly == readOnly
                && java.util.Objects.equals(c.uuid, uuid) && Arrays.equals(c.nguid, nguid) && c.eui64 == eui64
                && c.anaGroupId == anaGroupId;
    }

    @Override
    public int hashCode() {
        return nsid * 31 + blockSize;
    }
}
