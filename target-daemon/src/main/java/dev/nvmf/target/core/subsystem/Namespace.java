package dev.nvmf.target.core.subsystem;

import dev.nvmf.target.backend.BlockBackend;

import java.util.Objects;
import java.util.UUID;

/**
 * One namespace of a subsystem (kernel: {@code struct nvmet_ns}): its identity, its format, and the backend that
 * stores it. Immutable but for its size, which follows a resized medium ({@link #revalidate}); shared by every
 * controller of the subsystem (NMIC shared).
 */
public final class Namespace {
    private final NamespaceConfig config;
    private final BlockBackend backend;
    private final int blockShift;
    /** NSZE; changes only by {@link #revalidate} (a resized medium), read on the I/O path. */
    private volatile long sizeBlocks;
    private final boolean readOnly;
    private final IoStatistics statistics = new IoStatistics();
    /** The ANA group (kernel {@code nvmet_ns.anagrpid}), moved by the target; read on the I/O path. */
    private volatile int anaGroupId;
    /** The daemon's pre-resolved meters of this namespace, read on the I/O path. */
    private volatile NamespaceObserver observer = NamespaceObserver.NONE;

    public Namespace(NamespaceConfig config, BlockBackend backend) {
        this.config = Objects.requireNonNull(config, "config");
        this.backend = Objects.requireNonNull(backend, "backend");
        this.blockShift = Integer.numberOfTrailingZeros(config.blockSize());
        this.sizeBlocks = backend.sizeBytes() >>> blockShift;
        if (sizeBlocks <= 0) {
            throw new IllegalArgumentException("namespace " + config.nsid() + ": backend " + backend.describe()
                    + " is smaller than one block (" + backend.sizeBytes() + " bytes)");
        }
        this.readOnly = config.readOnly() || backend.readOnly();
        this.anaGroupId = config.anaGroupId();
    }

    public int nsid() { return config.nsid(); }
    public NamespaceConfig config() { return config; }
    public BlockBackend backend() { return backend; }
    public int blockSize() { return config.blockSize(); }
    /** log2 of the block size (LBADS). */
    public int blockShift() { return blockShift; }
    /** NSZE: size in logical blocks (the backend's size rounded down to whole blocks). */
    public long sizeBlocks() { return sizeBlocks; }
    public boolean readOnly() { return readOnly; }

    /**
     * Reads the backend's capacity again (kernel core.c, {@code nvmet_ns_revalidate}) and adopts it in whole blocks;
     * true if the size changed. A capacity below one block is not adopted. Control path; the caller tells the
     * controllers ({@link Subsystem#revalidateNamespace}). Commands already checked against the old size complete
     * against the backend, which refuses what lies beyond its capacity.
     */
    public synchronized boolean revalidate() {
        long blocks = backend.revalidateSize() >>> blockShift;
        if (blocks <= 0 || blocks == sizeBlocks) {
            return false;
        }
        sizeBlocks = blocks;
        return true;
    }
    public UUID uuid() { return config.uuid(); }
    public byte[] nguid() { return config.nguid(); }
    public long eui64() { return config.eui64(); }
    /** The ANA group the namespace is in now (Identify Namespace ANAGRPID). */
    public int anaGroupId() { return anaGroupId; }

    /** For the target only (it counts the change and tells the hosts): moves the namespace to another group. */
    public void anaGroupId(int groupId) {
        AnaPortStates.checkGroup(groupId);
        this.anaGroupId = groupId;
    }

    /** The identity and format it was added with, its ANA group as it is now (so that it can be added again). */
    public NamespaceConfig currentConfig() {
        return config.anaGroupId() == anaGroupId ? config : config.withAnaGroupId(anaGroupId);
    }
    public IoStatistics statistics() { return statistics; }
    public NamespaceObserver observer() { return observer; }
    public void observer(NamespaceObserver observer) { this.observer = Objects.requireNonNull(observer, "observer"); }

    @Override
    public String toString() {
        return "namespace " + nsid() + " (" + backend.describe() + ", " + sizeBlocks + " x " + blockSize() + " B"
                + (readOnly ? ", read-only" : "") + ")";
    }
}
