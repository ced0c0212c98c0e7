package dev.nvmf.target.config;

/**
 * RDMA transport tuning, under SPDK's well-known names ({@code nvmf_create_transport}).
 *
 * @param maxQueueDepth        max_queue_depth: largest I/O queue a host may create (entries), default 128
 * @param maxIoQpairsPerCtrlr  max_io_qpairs_per_ctrlr: I/O queues per controller, default 128 (kernel qid_max)
 * @param inCapsuleDataSize    in_capsule_data_size: bytes of in-capsule data, default 8 KiB; ports may override
 * @param maxIoSize            max_io_size: largest data transfer (MDTS), default 1 MiB
 * @param maxAqDepth           max_aq_depth: largest admin queue, default 32 (kernel NVMET_AQ_DEPTH)
 * @param pollers              pollers: data-plane threads, each owning one completion queue, default 1
 */
public record TransportSection(int maxQueueDepth, int maxIoQpairsPerCtrlr, int inCapsuleDataSize, int maxIoSize,
                              int maxAqDepth, int pollers) {
    public static final int DEFAULT_MAX_QUEUE_DEPTH = 128;
    public static final int DEFAULT_MAX_IO_QPAIRS_PER_CTRLR = 128;
    public static final int DEFAULT_IN_CAPSULE_DATA_SIZE = 8192;
    public static final int DEFAULT_MAX_IO_SIZE = 1 << 20;
    public static final int DEFAULT_MAX_AQ_DEPTH = 32;
    public static final int DEFAULT_POLLERS = 1;

    public static TransportSection defaults() {
        return new TransportSection(DEFAULT_MAX_QUEUE_DEPTH, DEFAULT_MAX_IO_QPAIRS_PER_CTRLR,
                DEFAULT_IN_CAPSULE_DATA_SIZE, DEFAULT_MAX_IO_SIZE, DEFAULT_MAX_AQ_DEPTH, DEFAULT_POLLERS);
    }
}
