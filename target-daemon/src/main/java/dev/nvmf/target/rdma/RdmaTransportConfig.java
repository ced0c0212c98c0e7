package dev.nvmf.target.rdma;

import java.util.List;

/**
 * Configuration of the RDMA transport as a whole. Built by the operators' layer from YAML, or directly in tests.
 *
 * @param ports              listening ports (several at once)
 * @param pollers            data-plane threads, one per core to use; each owns one CQ per device
 * @param remoteInvalidation answer a keyed SGL with the invalidate subtype with SEND_WITH_INVALIDATE (when the
 *                           device supports memory-management extensions); false = always a plain SEND
 * @param maxIoSize          largest data transfer of one command, bytes (the core's MDTS should not exceed it)
 * @param maxIoQueues        highest I/O queue id accepted in a connect request
 * @param cqSize             completion-queue entries per poller and device; queues are admitted while their
 *                           worst-case completions fit ("no resources" reject otherwise)
 * @param smallBuffers       registered data buffers of {@link #SMALL_BUFFER_SIZE} bytes per poller and device
 * @param largeBuffers       registered data buffers of maxIoSize bytes per poller and device
 * @param pollerIdleMillis   how long an idle poller blocks on its completion channel before it looks again
 */
public record RdmaTransportConfig(List<RdmaPortConfig> ports, int pollers, boolean remoteInvalidation,
                                  int maxIoSize, int maxIoQueues, int cqSize, int smallBuffers,
                                  int largeBuffers, long pollerIdleMillis) {
    /** Size of the small data-buffer class: covers 4 KiB and 8 KiB I/O without taking a large buffer. */
    public static final int SMALL_BUFFER_SIZE = 8192;

    public RdmaTransportConfig {
        ports = List.copyOf(ports);
        if (pollers < 1 || pollers > 256) throw new IllegalArgumentException("pollers " + pollers + " must be 1..256");
        if (maxIoSize < 4096 || maxIoSize > (1 << 24) - 1 + 1 || Integer.bitCount(maxIoSize) != 1) {
            throw new IllegalArgumentException("max_io_size " + maxIoSize + " must be a power of two, 4 KiB..16 MiB");
        }
        if (maxIoQueues < 1 || maxIoQueues > 65534) throw new IllegalArgumentException("maxIoQueues " + maxIoQueues);
        if (cqSize < 64) throw new IllegalArgumentException("cqSize " + cqSize + " must be at least 64");
        if (smallBuffers < 1 || largeBuffers < 1) throw new IllegalArgumentException("buffer counts must be >= 1");
        if (pollerIdleMillis < 1) throw new IllegalArgumentException("pollerIdleMillis must be >= 1");
        java.util.Set<Integer> ids = new java.util.HashSet<>();
        for (RdmaPortConfig p : ports) {
            if (!ids.add(p.portId())) throw new IllegalArgumentException("duplicate port id " + p.portId());
        }
    }

    /** One poller, remote invalidation on, 128 KiB max I/O, 128 I/O queues, 8192-entry CQs. */
    public static RdmaTransportConfig of(List<RdmaPortConfig> ports) {
        return new RdmaTransportConfig(ports, 1, true, 128 * 1024, 128, 8192, 256, 32, 100);
    }

    public RdmaTransportConfig withPollers(int n) {
        return new RdmaTransportConfig(ports, n, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, pollerIdleMillis);
    }

    public RdmaTransportConfig withRemoteInvalidation(boolean on) {
        return new RdmaTransportConfig(ports, pollers, on, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, pollerIdleMillis);
    }

    public RdmaTransportConfig withMaxIoSize(int size) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, size, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, pollerIdleMillis);
    }

    public RdmaTransportConfig withCqSize(int size) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, size,
                smallBuffers, largeBuffers, pollerIdleMillis);
    }

    public RdmaTransportConfig withBuffers(int small, int large) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, small,
                large, pollerIdleMillis);
    }

    public RdmaTransportConfig withMaxIoQueues(int n) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, n, cqSize, smallBuffers,
                largeBuffers, pollerIdleMillis);
    }

    /** The port with this id, or null. */
    public RdmaPortConfig port(int portId) {
        for (RdmaPortConfig p : ports) if (p.portId() == portId) return p;
        return null;
    }
}
