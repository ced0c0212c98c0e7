package dev.nvmf.target.daemon;

import dev.nvmf.target.backend.AsyncFdBackend;
import dev.nvmf.target.backend.BackendSpec;
import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.config.NamespaceSection;
import dev.nvmf.target.config.PortSection;
import dev.nvmf.target.config.SubsystemSection;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.config.TransportSection;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransportConfig;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The YAML model ({@code dev.nvmf.target.config}) as the core and the RDMA transport want it. Pure functions;
 * every constructor check of the core and transport records runs here, so a value they refuse fails before
 * anything changes (start or reload).
 */
final class ConfigMapping {
    /** Firmware revision reported in Identify Controller (FR, 8 characters at most). */
    static final String FIRMWARE = "0.1.0";

    private ConfigMapping() {}

    /** Core limits: MDTS from max_io_size (4 KiB units, a power of two), admin queue depth from max_aq_depth. */
    static TargetOptions options(TransportSection t) {
        int maxIo = t.maxIoSize();
        if (maxIo < 8192 || Integer.bitCount(maxIo) != 1) {
            throw new IllegalArgumentException("transport.max_io_size " + maxIo
                    + " must be a power of two of at least 8 KiB");
        }
        int mdts = Integer.numberOfTrailingZeros(maxIo / 4096);
        TargetOptions d = TargetOptions.defaults();
        return new TargetOptions(mdts, t.maxAqDepth(), d.keepAliveGranularity(), d.discoveryKatoMillis(),
                d.asyncEventLimit(), d.errorLogEntries(), d.capTimeout(), d.version());
    }

    static Port port(PortSection p) {
        int adrfam = "ipv6".equals(p.adrfam()) ? DiscoveryLog.ADRFAM_IPV6 : DiscoveryLog.ADRFAM_IPV4;
        return new Port(p.id(), DiscoveryLog.TRTYPE_RDMA, adrfam, p.traddr(), Integer.toString(p.trsvcid()),
                p.inCapsuleDataSize(), p.maxQueueSize());
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
                .withMaxIoSize(t.maxIoSize()).withMaxIoQueues(t.maxIoQpairsPerCtrlr());
    }

    static SubsystemConfig subsystem(SubsystemSection s, TransportSection t) {
        return new SubsystemConfig(s.nqn(), s.serial(), s.model(), FIRMWARE,
                s.allowAnyHost(), SubsystemConfig.MIN_CNTLID,
                SubsystemConfig.MAX_CNTLID, t.maxIoQpairsPerCtrlr());
    }

    /** What to open for a namespace: RAM of its size, an existing file (its size), or a block device. */
    static BackendSpec backend(NamespaceSection n) {
        BackendSpec spec = switch (n.kind()) {
            case RAM -> BackendSpec.ram(n.ramSize());
            case FILE -> BackendSpec.file(Path.of(n.path()));
            case DEVICE -> BackendSpec.device(Path.of(n.path()));
        };
        return spec.withReadOnly(n.readOnly());
    }

    /**
     * The core's namespace identity: the block size is the device's logical block size when it is 4 KiB, else
     * 512 bytes (the kernel target's choice for files).
     */
    static NamespaceConfig namespace(NamespaceSection n, BlockBackend backend) {
        if (n.nsid() < 1 || n.nsid() > NamespaceConfig.MAX_NSID) {
            throw new IllegalArgumentException("nsid " + n.nsid() + ": this target supports NSIDs 1.."
                    + NamespaceConfig.MAX_NSID);
        }
        int blockSize = backend instanceof AsyncFdBackend fd && fd.logicalBlockSize() == 4096 ? 4096 : 512;
        byte[] nguid = n.nguid() == null ? null : HexFormat.of().parseHex(n.nguid());
        return new NamespaceConfig((int) n.nsid(), blockSize, n.readOnly(), n.uuid(),
                nguid, 0);
    }
}
