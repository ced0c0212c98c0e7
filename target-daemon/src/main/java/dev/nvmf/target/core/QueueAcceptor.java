package dev.nvmf.target.core;

/** How a transport asks the core for a new queue. Implemented by the core (the target as a whole). */
public interface QueueAcceptor {
    /**
     * A transport accepted a connection for queue {@code qid} of {@code sqSize} entries (1's based) on the
     * configured port {@code portId}. The queue is bound to a controller later, by Fabrics Connect.
     */
    CommandQueue openQueue(int portId, int qid, int sqSize, QueueTransport transport);
}
