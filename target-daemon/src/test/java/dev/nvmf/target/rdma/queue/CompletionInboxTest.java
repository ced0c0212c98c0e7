package dev.nvmf.target.rdma.queue;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompletionInboxTest {
    static final class N extends CompletionInbox.Node {
        final int producer;
        final int seq;

        N(int producer, int seq) {
            this.producer = producer;
            this.seq = seq;
        }
    }

    @Test
    void fifoAndReusableOnOneThread() {
        CompletionInbox in = new CompletionInbox();
        assertTrue(in.isEmpty());
        assertNull(in.poll());
        N a = new N(0, 0);
        N b = new N(0, 1);
        in.offer(a);
        assertFalse(in.isEmpty());
        in.offer(b);
        assertSame(a, in.poll());
        in.offer(a); // taken off: it may come back (a request reused for its next command)
        assertSame(b, in.poll());
        assertSame(a, in.poll());
        assertNull(in.poll());
        assertTrue(in.isEmpty());
    }

    @Test
    void theConsumersOwnOffersComeFirstInOrderAndCountForIsEmpty() {
        CompletionInbox in = new CompletionInbox();
        N a = new N(0, 0);
        N b = new N(0, 1);
        N own1 = new N(1, 0);
        N own2 = new N(1, 1);
        in.offerFromConsumer(own1);
        assertFalse(in.isEmpty(), "a node on the consumer's own list is waiting");
        in.offer(a);
        in.offerFromConsumer(own2);
        in.offer(b);
        assertSame(own1, in.poll());
        assertSame(own2, in.poll());
        in.offerFromConsumer(own1); // taken off: reused at once
        assertSame(own1, in.poll());
        assertSame(a, in.poll());
        in.offerFromConsumer(a); // a node moves from one list to the other between uses
        assertSame(a, in.poll());
        assertSame(b, in.poll());
        assertNull(in.poll());
        assertTrue(in.isEmpty());
    }

    /** Producers on other threads and the consumer's own offers at once: every node arrives once, each list in order. */
    @Test
    void theConsumersOwnOffersMixWithConcurrentProducersWithoutLoss() throws Exception {
        consumeWhileProducing(2, 200_000, true);
    }

    /** Four producers, each offering its nodes in order while one consumer polls: each arrives once, in its order. */
    @Test
    void everyNodeOfConcurrentProducersArrivesOnceInProducerOrder() throws Exception {
        consumeWhileProducing(4, 200_000, false);
    }

    /**
     * {@code producers} threads offer {@code perProducer} nodes each while this thread polls (and, with
     * {@code consumerOffers}, offers as many of its own, one per poll): each node must arrive once, in its
     * producer's order.
     */
    private static void consumeWhileProducing(int producers, int perProducer, boolean consumerOffers)
            throws Exception {
        CompletionInbox in = new CompletionInbox();
        CyclicBarrier start = new CyclicBarrier(producers + 1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int id = p;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                for (int i = 0; i < perProducer; i++) in.offer(new N(id, i));
            });
            t.start();
            threads.add(t);
        }
        start.await();
        int own = producers; // the consumer's producer id
        int ownToOffer = consumerOffers ? perProducer : 0;
        int ownOffered = 0;
        int[] next = new int[producers + 1];
        int received = 0;
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (received < producers * perProducer + ownToOffer) {
            if (ownOffered < ownToOffer) {
                in.offerFromConsumer(new N(own, ownOffered++));
            }
            N n = (N) in.poll();
            if (n == null) {
                assertTrue(System.nanoTime() < deadline, "only " + received + " arrived");
                Thread.onSpinWait();
                continue;
            }
            assertEquals(next[n.producer]++, n.seq, "producer " + n.producer + " in order, each once");
            received++;
        }
        for (Thread t : threads) t.join();
        assertNull(in.poll());
        assertTrue(in.isEmpty());
    }
}
