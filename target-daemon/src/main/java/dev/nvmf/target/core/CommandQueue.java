package dev.nvmf.target.core;

/**
 * The core's side of one submission/completion queue pair (kernel: {@code nvmet_sq}/{@code nvmet_cq}): created
 * by {@link QueueAcceptor#openQueue} when a transport accepts a connection, bound to a controller by the Fabrics
 * Connect command that arrives on it, closed when the transport has drained it.
 *
 * <p>{@link #begin} and {@link #execute} are called on the queue's poller thread only.
 */
public interface CommandQueue {
    /**
     * Parses a newly received command: advances the SQ head, re-arms keep-alive, checks the command is allowed
     * now (Connect first, CC.EN, namespace, opcode) and sets {@link NvmeRequest#dataDirection()}.
     *
     * @return true if the transport should move the data and call {@link #execute}; false if the core already
     *         completed the request (through {@link QueueTransport#complete}) with an error status
     */
    boolean begin(NvmeRequest request);

    /** Executes a command accepted by {@link #begin}, whose host data (if any) is in {@link NvmeRequest#data()}. */
    void execute(NvmeRequest request);

    /**
     * The transport is tearing the queue down: complete every request the core holds with no end in sight
     * (Asynchronous Event Requests) with "Commands Aborted due to SQ Deletion". Requests in a backend still
     * complete normally. Any thread.
     */
    void abortHeld();

    /**
     * The transport lost this queue to an error other than a flush (an error work completion, a failed post):
     * that is fatal for the whole controller, as in the kernel target (kernel rdma.c, nvmet_rdma_error_comp, and
     * core.c, nvmet_ctrl_fatal_error): CSTS.CFS is set and every queue of the controller is disconnected, so the
     * host sees the failure and recovers through a reset. A queue not yet bound to a controller only goes away.
     * Any thread; idempotent.
     */
    void transportFailed(String reason);

    /**
     * The transport drained the queue and will never call or expect anything for it again: detach it from its
     * controller (losing the admin queue ends the controller). Any thread.
     */
    void close();

    /** The queue id (0 = admin) from the transport's connect data. */
    int qid();
}
