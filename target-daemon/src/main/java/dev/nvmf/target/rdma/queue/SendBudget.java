package dev.nvmf.target.rdma.queue;

/**
 * The per-QP send-queue budget and RDMA READ depth (thread "two initiators": send-queue space is a budget fed back
 * by completions; the READ depth is the initiator depth the CM negotiated, rdma_accept(3)). Every chain is
 * reserved whole (its data WRs + the SEND) before it is posted and given back when its signaled completion is
 * polled, so the SQ can never overflow; outstanding READs never exceed the negotiated initiator depth.
 * Single-threaded (the owning poller).
 */
public final class SendBudget {
    private final int capacity;
    private final int readCapacity;
    private int available;
    private int readAvailable;

    public SendBudget(int capacity, int readCapacity) {
        if (capacity < 2 || readCapacity < 1) throw new IllegalArgumentException("capacity " + capacity
                + ", read depth " + readCapacity);
        this.capacity = capacity;
        this.readCapacity = readCapacity;
        this.available = capacity;
        this.readAvailable = readCapacity;
    }

    public int capacity() { return capacity; }

    public int readCapacity() { return readCapacity; }

    public int available() { return available; }

    public int readAvailable() { return readAvailable; }

    public boolean fits(int slots) { return available >= slots; }

    public boolean fitsRead() { return readAvailable >= 1 && available >= 1; }

    /**
     * How many of {@code wanted} READs may be posted now: each takes a READ credit and an SQ slot. A request with
     * more descriptors than this posts its READs in parts (SPDK rdma.c, {@code request_prepare_transfer_in_part}).
     */
    public int readsFitting(int wanted) {
        return Math.min(wanted, Math.min(readAvailable, available));
    }

    public void reserve(int slots) {
        if (slots > available) throw new IllegalStateException("send budget overdrawn: " + slots + " > " + available);
        available -= slots;
    }

    /** One READ: one READ credit and one SQ slot. */
    public void reserveRead() { reserveReads(1); }

    /** {@code n} READs (a chain): {@code n} READ credits and {@code n} SQ slots. */
    public void reserveReads(int n) {
        if (n < 1 || readAvailable < n || available < n) throw new IllegalStateException("READ budget overdrawn: " + n);
        readAvailable -= n;
        available -= n;
    }

    public void release(int slots) {
        available += slots;
        if (available > capacity) throw new IllegalStateException("send budget over-released: " + available);
    }

    public void releaseRead() { releaseReads(1); }

    /** The credits and slots of a chain of {@code n} READs, given back when its signaled READ completes. */
    public void releaseReads(int n) {
        readAvailable += n;
        available += n;
        if (readAvailable > readCapacity || available > capacity) {
            throw new IllegalStateException("READ budget over-released");
        }
    }

    public boolean idle() { return available == capacity && readAvailable == readCapacity; }
}
