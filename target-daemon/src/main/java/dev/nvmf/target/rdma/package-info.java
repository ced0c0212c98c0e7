/**
 * The NVMe-oF RDMA transport: joins the controller core ({@link dev.nvmf.target.core}) to RDMA through the
 * provider-neutral verbs API ({@link dev.nvmf.verbs}); runs the same on rdma-core (ffm) and the soft fabric.
 *
 * <ul>
 *   <li>{@link dev.nvmf.target.rdma.RdmaTransport}: lifecycle ({@code start()} runs the agents on threads,
 *       {@code open()} lets a test drive them through {@code AgentInvoker}s; one {@code stop()} for both),
 *       {@link dev.nvmf.target.rdma.RdmaTransportConfig} / {@link dev.nvmf.target.rdma.RdmaPortConfig}, counters
 *       in {@link dev.nvmf.target.rdma.RdmaMetrics}, and {@link dev.nvmf.target.rdma.NotifyingIdleStrategy}, how
 *       the agents wait (spin, arm, look again, block).</li>
 *   <li>{@code cm}: listeners and the CM agent (control plane): private-data validation and the NVMe RDMA reject
 *       codes, queue sizing, COMM_EST answered with rdma_notify; it has each queue open and release itself.</li>
 *   <li>{@code queue}: one NVMe queue on one QP. {@code RdmaQueue.open}/{@code release} take and give back its
 *       CQ entries, slot, regions, QP and core queue; {@code RdmaQueue.advance} moves each command context
 *       through its {@code RequestState}s. Each queue posts {@code hsqsize + 1} receives and keeps twice as many
 *       contexts, each with its own receive buffer: when a capsule arrives another context's buffer is reposted
 *       at once and the arrived one keeps its SQE and in-capsule data (no copy) until its response SEND
 *       completes. A per-QP send budget (reserved per chain, given back on its signaled completion), the READ
 *       depth, FIFO waiters, credit accounting, and the drain: QP to error, then count every posted receive and
 *       every signaled chain back (flushed, in order) and every request the core holds, before anything is
 *       released. {@code WrId} is the wr_id codec; {@code QueuePoller} and {@code QueueDevice} are what a queue
 *       needs from its poller.</li>
 *   <li>{@code poller}: data-plane agents; each owns one CQ per device and every QP on it, with no locks; core
 *       completions and commands arrive through a lock-free MPSC queue.</li>
 *   <li>{@code memory}: per-device slabs registered once (no registration on the I/O path) and fixed-size
 *       registered buffer pools owned by pollers, each with its FIFO of waiting requests.</li>
 * </ul>
 */
package dev.nvmf.target.rdma;
