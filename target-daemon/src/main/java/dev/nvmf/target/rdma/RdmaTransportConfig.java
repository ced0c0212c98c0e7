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
 * @param drainTimeoutMillis how long a queue's drain may take before its QP is destroyed to stop the hardware
 *                           (YAML {@code transport.drain_timeout}; a dead device completes nothing, not even flushes)
 * @param zeroCopyRam        register RAM namespaces with each device and move their data straight between the host
 *                           and namespace memory, without a data buffer or a copy (YAML {@code transport.zero_copy});
 *                           false: every namespace's data goes through the registered buffer pools
 * @param busyPollNanos      how long an idle poller keeps polling after its last completion or inbox item before it
 *                           arms its CQs and blocks on their channels (YAML {@code transport.busy_poll}); 0 = at once
 * @param srqDepth           receive buffers of the shared receive queue each poller has on each device, which all its
 *                           queues on that device take their command capsules from (YAML {@code transport.srq} and
 *                           {@code transport.srq_depth}); 0 = no SRQ, each queue posts receives of its own
 * @param pollerCpus         the CPUs the poller threads are pinned to, poller i to the i-th modulo the list's length
 *                           (YAML {@code transport.poller_cpus}); empty = not pinned
 */
public record RdmaTransportConfig(List<RdmaPortConfig> ports, int pollers, boolean remoteInvalidation,
                                  int maxIoSize, int maxIoQueues, int cqSize, int smallBuffers,
                                  int largeBuffers, long drainTimeoutMillis, boolean zeroCopyRam, long busyPollNanos,
                                  int srqDepth, List<Integer> pollerCpus) {
    /** Size of the small data-buffer class: covers 4 KiB and 8 KiB I/O without taking a large buffer. */
    public static final int SMALL_BUFFER_SIZE = 8192;

    public RdmaTransportConfig {
        ports = List.copyOf(ports);
        pollerCpus = List.copyOf(pollerCpus);
        for (int cpu : pollerCpus) {
            if (cpu < 0 || cpu >= dev.nvmf.verbs.ffm.Libc.CPU_SETSIZE) {
                throw new IllegalArgumentException("poller CPU " + cpu + " is outside a cpu_set_t");
            }
        }
        if (pollers < 1 || pollers > 256) throw new IllegalArgumentException("pollers " + pollers + " must be 1..256");
        if (maxIoSize < 4096 || maxIoSize > (1 << 24) - 1 + 1 || Integer.bitCount(maxIoSize) != 1) {
            throw new IllegalArgumentException("max_io_size " + maxIoSize + " must be a power of two, 4 KiB..16 MiB");
        }
        if (maxIoQueues < 1 || maxIoQueues > 65534) throw new IllegalArgumentException("maxIoQueues " + maxIoQueues);
        if (cqSize < 64) throw new IllegalArgumentException("cqSize " + cqSize + " must be at least 64");
        if (smallBuffers < 1 || largeBuffers < 1) throw new IllegalArgumentException("buffer counts must be >= 1");
        if (drainTimeoutMillis < 1) throw new IllegalArgumentException("drain timeout must be >= 1 ms");
        if (busyPollNanos < 0) throw new IllegalArgumentException("busy-poll period must be >= 0");
        if (srqDepth < 0) throw new IllegalArgumentException("srq depth " + srqDepth + " must be >= 0");
        java.util.Set<Integer> ids = new java.util.HashSet<>();
        for (RdmaPortConfig p : ports) {
            if (!ids.add(p.portId())) throw new IllegalArgumentException("duplicate port id " + p.portId());
        }
    }

    /** The default bound of a queue's drain. */
    public static final long DEFAULT_DRAIN_TIMEOUT_MILLIS = 30_000;

    /**
     * The default busy-poll period (docs/performance.md, section 6): a reasoned choice, not yet a measured one (the soft
     * fabric is too slow to show the benefit; the lab measurement is still to do). Meant to be long enough that a
     * host's next command at queue depth 1 on hardware arrives before the poller arms and sleeps.
     */
    public static final long DEFAULT_BUSY_POLL_NANOS = 50_000;

    /**
     * One poller, remote invalidation on, 128 KiB max I/O, 128 I/O queues, 8192-entry CQs, 30 s drain bound, the
     * default busy-poll period.
     */
    public static RdmaTransportConfig of(List<RdmaPortConfig> ports) {
        return new RdmaTransportConfig(ports, 1, true, 128 * 1024, 128, 8192, 256, 32, DEFAULT_DRAIN_TIMEOUT_MILLIS,
                DEFAULT_ZERO_COPY_RAM, DEFAULT_BUSY_POLL_NANOS, 0, List.of());
    }

    /**
     * Whether RAM namespaces are zero copy unless configured otherwise: on, because the copy was 55-65% of the
     * target's CPU per 4 KiB keyed I/O on the soft fabric (docs/performance.md, section 5); a namespace whose
     * registration fails (RLIMIT_MEMLOCK) keeps the buffered path.
     */
    public static final boolean DEFAULT_ZERO_COPY_RAM = true;

    public RdmaTransportConfig withZeroCopyRam(boolean on) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, drainTimeoutMillis, on, busyPollNanos, srqDepth, pollerCpus);
    }

    public RdmaTransportConfig withBusyPollNanos(long nanos) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, drainTimeoutMillis, zeroCopyRam, nanos, srqDepth, pollerCpus);
    }

    public RdmaTransportConfig withDrainTimeoutMillis(long millis) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, millis, zeroCopyRam, busyPollNanos, srqDepth, pollerCpus);
    }

    public RdmaTransportConfig withPollers(int n) {
        return new RdmaTransportConfig(ports, n, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, drainTimeoutMillis, zeroCopyRam, busyPollNanos, srqDepth, pollerCpus);
    }

    public RdmaTransportConfig withRemoteInvalidation(boolean on) {
        return new RdmaTransportConfig(ports, pollers, on, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, drainTimeoutMillis, zeroCopyRam, busyPollNanos, srqDepth, pollerCpus);
    }

    public RdmaTransportConfig withMaxIoSize(int size) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, size, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, drainTimeoutMillis, zeroCopyRam, busyPollNanos, srqDepth, pollerCpus);
    }

    public RdmaTransportConfig withCqSize(int size) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, size,
                smallBuffers, largeBuffers, drainTimeoutMillis, zeroCopyRam, busyPollNanos, srqDepth, pollerCpus);
    }

    public RdmaTransportConfig withBuffers(int small, int large) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, small,
                large, drainTimeoutMillis, zeroCopyRam, busyPollNanos, srqDepth, pollerCpus);
    }

    public RdmaTransportConfig withMaxIoQueues(int n) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, n, cqSize, smallBuffers,
                largeBuffers, drainTimeoutMillis, zeroCopyRam, busyPollNanos, srqDepth, pollerCpus);
    }

    /**
     * The default number of receive buffers of a shared receive queue: the kernel target's (kernel rdma.c,
     * {@code nvmet_rdma_srq_size}, 1024); SPDK's is 4096 ({@code SPDK_NVMF_RDMA_DEFAULT_SRQ_DEPTH}).
     */
    public static final int DEFAULT_SRQ_DEPTH = 1024;

    /** With a shared receive queue of {@code depth} buffers per poller and device (0: none). */
    public RdmaTransportConfig withSrqDepth(int depth) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, drainTimeoutMillis, zeroCopyRam, busyPollNanos, depth, pollerCpus);
    }

    /** With the poller threads pinned to {@code cpus}, poller i to the i-th modulo their number (empty: not pinned). */
    public RdmaTransportConfig withPollerCpus(List<Integer> cpus) {
        return new RdmaTransportConfig(ports, pollers, remoteInvalidation, maxIoSize, maxIoQueues, cqSize, smallBuffers,
                largeBuffers, drainTimeoutMillis, zeroCopyRam, busyPollNanos, srqDepth, cpus);
    }

    /** The CPU poller {@code index} is pinned to, or -1 when pollers are not pinned. */
    public int pollerCpu(int index) {
        return pollerCpus.isEmpty() ? -1 : pollerCpus.get(index % pollerCpus.size());
    }

    /** Whether pollers take their queues' capsules from a shared receive queue per device. */
    public boolean sharedReceiveQueue() { return srqDepth > 0; }

    /** The largest in-capsule data size of the ports: what one shared receive buffer must hold after the SQE. */
    public int maxInCapsuleDataSize() {
        int max = 0;
        for (RdmaPortConfig p : ports) max = Math.max(max, p.inCapsuleDataSize());
        return max;
    }

    /** The port with this id, or null. */
    public RdmaPortConfig port(int portId) {
        for (RdmaPortConfig p : ports) if (p.portId() == portId) return p;
        return null;
    }
}
