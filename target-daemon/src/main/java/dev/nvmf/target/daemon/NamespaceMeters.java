package dev.nvmf.target.daemon;

import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.NamespaceObserver;
import dev.nvmf.target.metrics.IoOpcode;
import dev.nvmf.target.metrics.NamespaceIoMetrics;
import dev.nvmf.target.service.LogContext;

import java.util.logging.Logger;

/**
 * A namespace's I/O meters as the core sees them: one {@link NamespaceIoMetrics} per {@link IoOpcode}, resolved
 * when the namespace is added, so that recording a completion is an array read and allocates nothing; and the
 * operator's log line for each resize, whoever found it.
 */
final class NamespaceMeters implements NamespaceObserver {
    private static final Logger LOG = Logger.getLogger(NamespaceMeters.class.getName());

    private final String nqn;
    /** Indexed by {@link IoOpcode#ordinal()}. */
    private final NamespaceIoMetrics[] byOpcode;

    NamespaceMeters(String nqn, NamespaceIoMetrics[] byOpcode) {
        this.nqn = nqn;
        this.byOpcode = byOpcode;
    }

    @Override
    public void ioCompleted(int opcode, int status, long latencyNanos, long bytes) {
        NamespaceIoMetrics m = byOpcode[IoOpcode.of(opcode).ordinal()];
        if (status == 0) {
            m.record(latencyNanos, bytes);
        } else {
            m.recordError(latencyNanos);
        }
    }

    @Override
    public void backendFailed(int opcode, int result) {
        byOpcode[IoOpcode.of(opcode).ordinal()].recordBackendError();
    }

    @Override
    public void resized(Namespace ns, long blocksBefore) {
        LOG.info(LogContext.format(nqn, null, "namespace " + ns.nsid() + ": " + ns.backend().describe()
                + " is now " + ns.backend().sizeBytes() + " bytes, " + blocksBefore + " -> " + ns.sizeBlocks()
                + " blocks of " + ns.blockSize() + " B; connected hosts are told (Namespace Attribute Changed)"));
    }
}
