package dev.nvmf.target.core;

/**
 * What the core needs from the transport side of one queue (RDMA today). Implemented by the transport.
 */
public interface QueueTransport {
    /**
     * The core has written the response of {@code request} and is done with it. Called exactly once per
     * request that {@link CommandQueue#begin} accepted or refused, from any thread (backend completions arrive on
     * backend threads; held Asynchronous Event Requests complete from the control plane). The transport hands it
     * to the queue's poller without locks on the I/O path.
     */
    void complete(NvmeRequest request);

    /**
     * The core wants this queue torn down (keep-alive expiry, controller reset or shutdown, fatal controller
     * status, removed subsystem). Any thread; returns at once; the transport drains the queue and then calls
     * {@link CommandQueue#close}.
     */
    void requestDisconnect(String reason);

    /** The host's address as "ip:port", for logs. */
    String peer();
}
