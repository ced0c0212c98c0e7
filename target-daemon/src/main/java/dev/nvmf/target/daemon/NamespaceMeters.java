package dev.nvmf.target.daemon;

import dev.nvmf.target.core.subsystem.NamespaceObserver;
import dev.nvmf.target.metrics.IoOpcode;
import dev.nvmf.target.metrics.NamespaceIoMetrics;

/**
 * A namespace's I/O meters as the core sees them: one {@link NamespaceIoMetrics} per {@link IoOpcode}, resolved
 * when the namespace is added, so that recording a completion is an array read and allocates nothing.
 */
final class NamespaceMeters implements NamespaceObserver {
    /** Indexed by {@link IoOpcode#ordinal()}. */
    private final NamespaceIoMetrics[] byOpcode;

    NamespaceMeters(NamespaceIoMetrics[] byOpcode) {
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
}
