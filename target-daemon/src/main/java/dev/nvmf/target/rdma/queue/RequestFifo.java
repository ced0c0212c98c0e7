package dev.nvmf.target.rdma.queue;

/**
 * An intrusive FIFO of {@link RdmaRequest}s through their {@code next} field: no allocation. Used for capsules
 * kept before ESTABLISHED, for requests waiting for send budget / READ depth / data buffers, and for receives to
 * repost in one chain.
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

    public RdmaRequest poll() {
        RdmaRequest r = head;
        if (r == null) return null;
        head = r.next;
        if (head == null) tail = null;
        r.next = null;
        size--;
        return r;
    }

    /** Removes every request of {@code queue} (drain), keeping the others' order; returns them as a new FIFO. */
    public RequestFifo removeQueue(RdmaQueue queue) {
        RequestFifo removed = new RequestFifo();
        RdmaRequest prev = null;
        RdmaRequest r = head;
        while (r != null) {
            RdmaRequest nx = r.next;
            if (r.queue == queue) {
                if (prev == null) head = nx; else prev.next = nx;
                if (tail == r) tail = prev;
                size--;
                removed.add(r);
            } else {
                prev = r;
            }
            r = nx;
        }
        return removed;
    }
}
