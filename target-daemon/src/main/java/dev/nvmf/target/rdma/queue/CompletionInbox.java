package dev.nvmf.target.rdma.queue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The requests the core has finished, on their way from any thread to the poller that owns them: an intrusive,
 * unbounded, lock-free multi-producer single-consumer queue linked through the requests themselves (D. Vyukov's
 * intrusive MPSC node-based queue, as in Aeron's and JCTools' MPSC linked queues). A request is on it at most once
 * (the core completes it once, and it is reused only after the poller took it off), so the inbox holds every
 * completion that can be outstanding, however many queues and contexts the poller admitted, and it allocates
 * nothing: a bounded array would have to be sized for the worst case or refuse a completion it cannot drop.
 *
 * <p>{@link #offer} from any thread (wait-free: one atomic swap); {@link #offerFromConsumer}, {@link #poll} and
 * {@link #isEmpty} from the owning poller only.
 *
 * <p>Most completions come from the poller itself (a RAM namespace completes inline, on the poller's thread, in the
 * call that started the command). Those go on a second, poller-only list with plain stores: through the
 * multi-producer list each cost an atomic swap to offer and, when it was the last node, a second one to put the
 * stub back on poll, locked instructions on x86 (docs/performance.md, section 2). A node is on one of the two
 * lists at a time, linked through the same field.
 */
public final class CompletionInbox {
    /** What the inbox links: a request carries its own link. */
    public abstract static class Node {
        @SuppressWarnings("unused") // through NEXT
        private volatile Node inboxNext;
    }

    private static final VarHandle NEXT;
    private static final VarHandle PRODUCER;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            NEXT = l.findVarHandle(Node.class, "inboxNext", Node.class);
            PRODUCER = l.findVarHandle(CompletionInbox.class, "producer", Node.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Stands in the list when it is empty, so that producers always have a node to link behind. */
    private final Node stub = new Node() { };
    /** The last node offered: producers swap themselves in here. */
    @SuppressWarnings("unused") // through PRODUCER
    private volatile Node producer = stub;
    /** The next node to take (the consumer's end); the stub when nothing was taken since the list emptied. */
    private Node consumer = stub;
    /** The consumer's own list (first and last node; null when empty): only the poller's thread touches these. */
    private Node ownFirst;
    private Node ownLast;

    /** Adds {@code n} (any thread). {@code n} must not be on the inbox already. */
    public void offer(Node n) {
        NEXT.setRelease(n, (Node) null);
        Node previous = (Node) PRODUCER.getAndSet(this, n);
        // From the swap to this store the list is briefly unlinked: poll() then reports nothing and is called again.
        NEXT.setRelease(previous, n);
    }

    /**
     * Adds {@code n} from the consumer's own thread: plain stores, no atomic. {@code n} must not be on the inbox
     * already. Poller only.
     */
    public void offerFromConsumer(Node n) {
        NEXT.set(n, (Node) null);
        if (ownLast == null) {
            ownFirst = n;
        } else {
            NEXT.set(ownLast, n);
        }
        ownLast = n;
    }

    /**
     * The next node, or null when there is none (or a producer is half-way through its offer). Each list gives its
     * nodes in the order they were offered; the consumer's own come first. Poller only.
     */
    public Node poll() {
        Node own = ownFirst;
        if (own != null) {
            Node next = (Node) NEXT.get(own);
            ownFirst = next;
            if (next == null) ownLast = null;
            return own;
        }
        Node c = consumer;
        Node next = (Node) NEXT.getAcquire(c);
        if (c == stub) {
            if (next == null) return null;
            consumer = next;
            c = next;
            next = (Node) NEXT.getAcquire(c);
        }
        if (next != null) {
            consumer = next;
            return c;
        }
        if (c != PRODUCER.getVolatile(this)) return null; // a producer swapped but has not linked yet
        // c is the last node: put the stub behind it, so that c can leave the list.
        offer(stub);
        next = (Node) NEXT.getAcquire(c);
        if (next != null) {
            consumer = next;
            return c;
        }
        return null;
    }

    /** Whether nothing is waiting, not even a half-finished offer (poller only): what the poller checks before it sleeps. */
    public boolean isEmpty() {
        Node c = consumer;
        return ownFirst == null && c == stub && NEXT.getAcquire(c) == null && PRODUCER.getVolatile(this) == stub;
    }
}
