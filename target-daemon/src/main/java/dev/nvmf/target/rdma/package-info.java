/**
 * The NVMe-oF RDMA transport: joins the controller core ({@link dev.nvmf.target.core}) to RDMA through the
 * provider-neutral verbs API ({@link dev.nvmf.verbs}); runs the same on rdma-core (ffm) and the soft fabric.
 *
 * <ul>
 *   <li>{@link dev.nvmf.target.rdma.RdmaTransport}: lifecycle ({@code start()/stop()}, or {@code open()} and
 *       agents driven by a test), {@link dev.nvmf.target.rdma.RdmaTransportConfig} /
 *       {@link dev.nvmf.target.rdma.RdmaPortConfig}, counters in {@link dev.nvmf.target.rdma.RdmaMetrics}.</li>
 *   <li>{@code cm}: listeners and the CM event loop (one thread): private-data validation and the NVMe RDMA reject
 *       codes, QP sizing, receives posted before accept, COMM_EST answered with rdma_notify, release of drained
 *       queues (destroy QP, destroy CM id, memory back, then {@code CommandQueue.close()}).</li>
 *   <li>{@code queue}: per-connection state. Each queue posts {@code hsqsize + 1} receives and keeps twice as
 *       many command contexts, each with its own receive buffer: when a capsule arrives another context's buffer
 *       is reposted at once and the arrived one keeps its SQE and in-capsule data (no copy) until its response
 *       SEND completes. A per-QP send budget (reserved per chain, given back on its signaled completion), the
 *       READ depth, FIFO waiters, credit accounting, and the drain: QP to error, then count every posted receive
 *       and every signaled chain back (flushed, in order) and every request the core holds, before anything is
 *       released.</li>
 *   <li>{@code poller}: data-plane agents; each owns one CQ per device and every QP on it, with no locks; core
 *       completions and commands arrive through a lock-free MPSC queue; idle pollers arm the CQ, poll once more
 *       and block on the completion channel.</li>
 *   <li>{@code memory}: per-device slabs registered once (no registration on the I/O path) and fixed-size
 *       registered buffer pools owned by pollers.</li>
 * </ul>
 */
package dev.nvmf.target.rdma;
