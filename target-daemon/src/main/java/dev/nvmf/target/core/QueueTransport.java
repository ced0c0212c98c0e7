package dev.nvmf.target.core;

import java.net.InetAddress;

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

    /**
     * The local address the host reached this queue on (for RDMA: the CM id's source address, {@code
     * route.addr.src_addr}), or null if the transport does not know it. A port that listens on a wildcard address
     * (0.0.0.0, ::) advertises this address in the discovery log instead of the wildcard (kernel discovery.c,
     * {@code nvmet_set_disc_traddr}; rdma.c, {@code nvmet_rdma_disc_port_addr}). Read on the control path (Get Log
     * Page of a discovery controller) from the queue's poller; may allocate; must not change for the connection's
     * life.
     */
    default InetAddress localAddress() {
        return null;
    }
}
