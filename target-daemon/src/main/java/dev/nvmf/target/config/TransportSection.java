package dev.nvmf.target.config;

import java.util.List;

/**
 * RDMA transport tuning, under SPDK's well-known names ({@code nvmf_create_transport}).
 *
 * @param maxQueueDepth        max_queue_depth: largest I/O queue a host may create (entries), default 128
 * @param maxIoQpairsPerCtrlr  max_io_qpairs_per_ctrlr: I/O queues per controller, default 128 (kernel qid_max)
 * @param inCapsuleDataSize    in_capsule_data_size: bytes of in-capsule data, default 8 KiB; ports may override
 * @param maxIoSize            max_io_size: largest data transfer (MDTS), default 1 MiB
 * @param maxAqDepth           max_aq_depth: largest admin queue, default 32 (kernel NVMET_AQ_DEPTH)
 * @param pollers              pollers: data-plane threads, each owning one completion queue, default 1
 * @param drainTimeout         drain_timeout: seconds a queue's teardown may wait for the hardware to return its work
 *                             before its QP is destroyed, default 30
 * @param zeroCopy             zero_copy: RAM namespaces are registered with each device and their data moves straight
 *                             between the host and namespace memory (no buffer, no copy), default false
 * @param busyPollNanos        busy_poll: how long an idle poller keeps polling after its last work before it arms its
 *                             completion queues and blocks, in nanoseconds; 0 arms at once
 * @param srq                  srq: each poller takes the command capsules of all its queues on a device from one shared
 *                             receive queue, instead of receive buffers per queue, default false
 * @param srqDepth             srq_depth: receive buffers of each such shared receive queue (capped by the device's
 *                             max_srq_wr), default 1024 (the kernel target's srq_size)
 * @param pollerCpus           poller_cpus: the CPUs the pollers run on, poller i on the i-th modulo the list's length
 *                             (SPDK's reactor mask, one core each); empty, the default: where the scheduler puts them
 */
public record TransportSection(int maxQueueDepth, int maxIoQpairsPerCtrlr, int inCapsuleDataSize, int maxIoSize,
                              int maxAqDepth, int pollers, int drainTimeout, boolean zeroCopy, long busyPollNanos,
                              boolean srq, int srqDepth, List<Integer> pollerCpus) {
    public TransportSection {
        pollerCpus = List.copyOf(pollerCpus);
    }

    public static final int DEFAULT_MAX_QUEUE_DEPTH = 128;
    public static final int DEFAULT_MAX_IO_QPAIRS_PER_CTRLR = 128;
    public static final int DEFAULT_IN_CAPSULE_DATA_SIZE = 8192;
    public static final int DEFAULT_MAX_IO_SIZE = 1 << 20;
    public static final int DEFAULT_MAX_AQ_DEPTH = 32;
    public static final int DEFAULT_POLLERS = 1;
    public static final int DEFAULT_DRAIN_TIMEOUT = 30;
    /** Zero copy for RAM namespaces (docs/performance.md, section 5, says how it was chosen). */
    public static final boolean DEFAULT_ZERO_COPY = dev.nvmf.target.rdma.RdmaTransportConfig.DEFAULT_ZERO_COPY_RAM;
    /** The busy-poll period (docs/performance.md, section 6, says how it was chosen). */
    public static final long DEFAULT_BUSY_POLL_NANOS = dev.nvmf.target.rdma.RdmaTransportConfig.DEFAULT_BUSY_POLL_NANOS;

    public static final boolean DEFAULT_SRQ = false;
    public static final int DEFAULT_SRQ_DEPTH = dev.nvmf.target.rdma.RdmaTransportConfig.DEFAULT_SRQ_DEPTH;

    public static TransportSection defaults() {
        return new TransportSection(DEFAULT_MAX_QUEUE_DEPTH, DEFAULT_MAX_IO_QPAIRS_PER_CTRLR,
                DEFAULT_IN_CAPSULE_DATA_SIZE, DEFAULT_MAX_IO_SIZE, DEFAULT_MAX_AQ_DEPTH, DEFAULT_POLLERS,
                DEFAULT_DRAIN_TIMEOUT, DEFAULT_ZERO_COPY, DEFAULT_BUSY_POLL_NANOS, DEFAULT_SRQ, DEFAULT_SRQ_DEPTH,
                List.of());
    }
}
