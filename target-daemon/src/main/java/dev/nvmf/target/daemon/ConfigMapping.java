package dev.nvmf.target.daemon;

import dev.nvmf.target.backend.AsyncFdBackend;
import dev.nvmf.target.backend.BackendSpec;
import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.backend.rbd.RbdBackend;
import dev.nvmf.target.config.DiscoverySection;
import dev.nvmf.target.config.NamespaceSection;
import dev.nvmf.target.config.PortSection;
import dev.nvmf.target.config.ReferralSection;
import dev.nvmf.target.config.SubsystemSection;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.config.TransportSection;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Referral;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransportConfig;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The YAML model ({@code dev.nvmf.target.config}) as the core and the RDMA transport want it. Pure functions that do
 * not check again: every bound was checked by {@code ConfigLoader} against {@link dev.nvmf.target.config.Limits},
 * which holds the core's and the transport's limits, so a loaded configuration maps without error
 * ({@code LimitsAgreementTest} shows it at every bound). The core and transport records still check their own
 * invariants in their constructors; the daemon calls these functions in a reload's prepare phase, before anything
 * changes.
 */
final class ConfigMapping {
    private ConfigMapping() {}

    /** Core limits: MDTS from max_io_size (a power of two of 4 KiB pages), admin queue depth from max_aq_depth. */
    static TargetOptions options(TransportSection t) {
        int mdts = Integer.numberOfTrailingZeros(t.maxIoSize() / 4096);
        TargetOptions d = TargetOptions.defaults();
        return new TargetOptions(mdts, t.maxAqDepth(), d.keepAliveGranularity(), d.discoveryKatoMillis(),
                d.asyncEventLimit(), d.errorLogEntries(), d.capTimeout(), d.version());
    }

    static Port port(PortSection p, DiscoverySection discovery) {
        List<Referral> referrals = new ArrayList<>();
        for (ReferralSection r : p.referrals()) {
            referrals.add(referral(r));
        }
        return new Port(p.id(), DiscoveryLog.TRTYPE_RDMA, adrfam(p.adrfam()), p.traddr(),
                Integer.toString(p.trsvcid()), p.inCapsuleDataSize(), p.maxQueueSize(), referrals,
                discovery.allPorts());
    }

    static Referral referral(ReferralSection r) {
        int trtype = "tcp".equals(r.trtype()) ? DiscoveryLog.TRTYPE_TCP : DiscoveryLog.TRTYPE_RDMA;
        return new Referral(r.portid(), trtype, adrfam(r.adrfam()), r.traddr(), Integer.toString(r.trsvcid()));
    }

    private static int adrfam(String adrfam) {
        return "ipv6".equals(adrfam) ? DiscoveryLog.ADRFAM_IPV6 : DiscoveryLog.ADRFAM_IPV4;
    }

    static RdmaPortConfig rdmaPort(PortSection p, TransportSection t) {
        return new RdmaPortConfig(p.id(), p.traddr(), p.trsvcid(), p.inCapsuleDataSize(), p.maxQueueSize(),
                t.maxAqDepth());
    }

    static RdmaTransportConfig transport(TargetConfig c, boolean remoteInvalidation) {
        List<RdmaPortConfig> ports = new ArrayList<>();
        for (PortSection p : c.ports()) {
            ports.add(rdmaPort(p, c.transport()));
        }
        TransportSection t = c.transport();
        return RdmaTransportConfig.of(ports).withPollers(t.pollers()).withRemoteInvalidation(remoteInvalidation)
                .withMaxIoSize(t.maxIoSize()).withMaxIoQueues(t.maxIoQpairsPerCtrlr())
                .withDrainTimeoutMillis(t.drainTimeout() * 1000L).withZeroCopyRam(t.zeroCopy())
                .withBusyPollNanos(t.busyPollNanos()).withSrqDepth(t.srq() ? t.srqDepth() : 0)
                .withPollerCpus(t.pollerCpus());
    }

    /** The core's subsystem identity and limits: every attribute of the YAML subsystem but its lists. */
    static SubsystemConfig subsystem(SubsystemSection s) {
        return new SubsystemConfig(s.nqn(), s.serial(), s.model(), s.firmware(), s.allowAnyHost(), s.cntlidMin(),
                s.cntlidMax(), s.maxQid(), s.version(), s.ieeeOui());
    }

    /**
     * What to open for a namespace: RAM of its size, an existing file (its size), a block device, or an RBD image
     * (its size from the image).
     */
    static BackendSpec backend(NamespaceSection n) {
        BackendSpec spec = switch (n.kind()) {
            case RAM -> BackendSpec.ram(n.ramSize());
            case FILE -> BackendSpec.file(Path.of(n.path())).withBufferedIo(n.bufferedIo());
            case DEVICE -> BackendSpec.device(Path.of(n.path()));
            case RBD -> BackendSpec.rbd(n.rbd().spec());
        };
        return spec.withReadOnly(n.readOnly());
    }

    /**
     * The core's namespace identity. The logical block size is 512 bytes (the kernel target's choice for files,
     * and what hosts expect of a RAM disk) unless the medium cannot address less: under O_DIRECT a device's (or a
     * file system's) logical block size, 4096 when it is more than 512. An RBD image addresses bytes: its backend
     * says which of the two the namespace was configured with ({@code rbd.block_size}).
     */
    static NamespaceConfig namespace(NamespaceSection n, BlockBackend backend) {
        int unit = backend instanceof AsyncFdBackend fd ? fd.logicalBlockSize() : 1;
        int blockSize = backend instanceof RbdBackend rbd ? rbd.logicalBlockSize() : unit <= 512 ? 512 : 4096;
        if (blockSize % unit != 0) {
            throw new IllegalArgumentException("nsid " + n.nsid() + ": " + backend.describe() + " addresses "
                    + unit + "-byte blocks, which neither 512- nor 4096-byte logical blocks are a multiple of");
        }
        byte[] nguid = n.nguid() == null ? null : HexFormat.of().parseHex(n.nguid());
        return new NamespaceConfig((int) n.nsid(), blockSize, n.readOnly(), n.uuid(), nguid, 0, n.anaGroup());
    }
}
