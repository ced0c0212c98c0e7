package dev.nvmf.target.rdma.queue;

/**
 * An intrusive FIFO of {@link RdmaRequest}s through their {@code next} field: no allocation. Used for capsules
 * kept before ESTABLISHED, for requests waiting for send budget or READ depth, for receives to repost in one
 * chain, and for the requests of a queue's send chain.
 */
public final class RequestFifo {
    private RdmaRequest head;
    private RdmaRequest tail;
    private int size;

    public boolean isEmpty() { return head == null; }

    public int size() { return size; }

    public RdmaRequest peek() { return head; }

    public void add(RdmaRequest r) {
        r.next = null;
        if (tail == null) {
            head = r;
        } else {
            tail.next = r;
        }
        tail = r;
        size++;
    }

    /**
     * Empties the FIFO and returns its first request: the requests stay linked, in order, through {@code next} (the
     * last one's is null) until one of them is added to a FIFO again.
     */
    public RdmaRequest takeAll() {
        RdmaRequest r = head;
        head = tail = null;
        size = 0;
        return r;
    }

    public RdmaRequest poll() {
        RdmaRequest r = head;
        if (r == null) return null;
        head = r.next;
        if (head == null) tail = null;
        r.next = null;
        size--;
        return r;
    }
}
