package dev.nvmf.verbs;

import java.net.InetSocketAddress;

/**
 * An RDMA CM identifier ({@code struct rdma_cm_id}): a listener, or one end of a connection with its QP.
 * Control path only: calls throw {@link VerbsException}.
 */
public interface CmId extends AutoCloseable {
    /** The opaque context given at creation (listeners) or inherited from the listener (connect requests). */
    Object context();

    void context(Object context);

    /** The device the id is bound to, or null before it is bound/resolved. Same object for the same device. */
    Device device();

    /** Binds to a local address (port 0 = any); the wildcard address binds every device. */
    void bind(InetSocketAddress address);

    void listen(int backlog);

    /** Active side: resolves the destination (ADDR_RESOLVED / ADDR_ERROR follows on the channel). */
    void resolveAddress(InetSocketAddress source, InetSocketAddress destination, int timeoutMillis);

    /** Active side: resolves the route (ROUTE_RESOLVED / ROUTE_ERROR follows). */
    void resolveRoute(int timeoutMillis);

    /** Creates the RC queue pair of this connection (rdma_create_qp). */
    QueuePair createQueuePair(QpInitAttributes attributes);

    /** The QP created on this id, or null. */
    QueuePair queuePair();

    /** Active side: sends the connect request (CONNECT_RESPONSE/ESTABLISHED, REJECTED or CONNECT_ERROR follow). */
    void connect(ConnectionParameters parameters);

    /** Passive side: accepts a CONNECT_REQUEST; the QP moves to RTR and RTS, ESTABLISHED follows. */
    void accept(ConnectionParameters parameters);

    /** Passive side: rejects a CONNECT_REQUEST with consumer-defined private data. */
    void reject(byte[] privateData);

    /** Starts an orderly disconnect: the QP goes to error (flushing), DISCONNECTED follows on both sides. */
    void disconnect();

    /**
     * Tells the CM the connection is established because a receive completed first (rdma_notify with
     * IBV_EVENT_COMM_EST; thread "posting send requests in RTR").
     */
    void notifyEstablished();

    InetSocketAddress localAddress();

    InetSocketAddress peerAddress();

    /** Destroys the QP (rdma_destroy_qp), if any. Only after the QP is drained. */
    void destroyQueuePair();

    /** Destroys the id (rdma_destroy_id); destroys its QP first if still present. */
    @Override
    void close();
}
