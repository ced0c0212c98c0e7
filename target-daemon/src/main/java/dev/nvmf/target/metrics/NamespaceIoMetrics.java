package dev.nvmf.target.metrics;

import java.util.List;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Meter;

/**
 * The meters of one (subsystem, namespace, opcode), resolved once when the namespace is set up and held by the
 * caller, so that recording an I/O looks nothing up and allocates nothing (asserted by
 * NamespaceIoMetricsAllocationTest). Safe to call from any thread (pollers and backend threads).
 */
public final class NamespaceIoMetrics {
    private final LatencyHistogram latency;
    /** {@code nvmf_io_bytes_total}: read at scrape from the histogram, which counts the bytes with the latency. */
    private final FunctionCounter bytes;
    private final Counter errors;
    private final Counter backendErrors;

    NamespaceIoMetrics(LatencyHistogram latency, FunctionCounter bytes, Counter errors, Counter backendErrors) {
        this.latency = latency;
        this.bytes = bytes;
        this.errors = errors;
        this.backendErrors = backendErrors;
    }

    /** A command completed successfully: its latency (receive to completion) and the bytes it moved. */
    public void record(long latencyNanos, long byteCount) {
        latency.record(latencyNanos, Math.max(0, byteCount));
    }

    /** A command completed with an error status (its latency still counts in the histogram). */
    public void recordError(long latencyNanos) {
        latency.record(latencyNanos);
        errors.increment();
    }

    /** The backend reported a failure (a negative errno) for a command of this kind. */
    public void recordBackendError() {
        backendErrors.increment();
    }

    /** The Micrometer meters (the latency histogram is not one: {@link LatencyHistograms} removes it). */
    List<Meter> meters() {
        return List.of(bytes, errors, backendErrors);
    }
}
