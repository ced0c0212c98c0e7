package dev.nvmf.target.rdma.queue;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The SRQ's table of queues by QP number: found while present, gone once removed, slots reused after removal. */
class QpNumTableTest {
    record Q(int qpNum) {}

    @Test
    void findsEveryQueueByItsQpNumberThroughCollisionsAndRemovals() {
        QpNumTable<Q> t = new QpNumTable<>(8, Q::qpNum);
        List<Q> qs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            Q q = new Q(0x11 + i * 16); // close numbers, as rxe hands them out
            qs.add(q);
            t.add(q.qpNum(), q);
        }
        assertEquals(8, t.size());
        for (Q q : qs) assertSame(q, t.get(q.qpNum()));
        assertNull(t.get(0x12), "an unknown number finds nothing");
        assertThrows(IllegalStateException.class, () -> t.add(0x999, new Q(0x999)), "full: 8 queues");
        assertThrows(IllegalStateException.class, () -> t.add(0x11, new Q(0x11)), "a number is there once");

        t.remove(qs.get(3).qpNum(), new Q(qs.get(3).qpNum())); // not the queue it holds: nothing happens
        assertSame(qs.get(3), t.get(qs.get(3).qpNum()));
        for (int i = 0; i < 8; i += 2) t.remove(qs.get(i).qpNum(), qs.get(i));
        assertEquals(4, t.size());
        for (int i = 0; i < 8; i++) {
            if (i % 2 == 0) assertNull(t.get(qs.get(i).qpNum())); else assertSame(qs.get(i), t.get(qs.get(i).qpNum()));
        }
        // Connect and disconnect many times over: removed slots are reused, lookups stay exact.
        for (int n = 0; n < 10_000; n++) {
            Q q = new Q(0x1000 + n);
            t.add(q.qpNum(), q);
            assertSame(q, t.get(q.qpNum()));
            t.remove(q.qpNum(), q);
            assertNull(t.get(q.qpNum()));
        }
        for (int i = 1; i < 8; i += 2) assertSame(qs.get(i), t.get(qs.get(i).qpNum()));
        assertEquals(4, t.size());
    }
}
