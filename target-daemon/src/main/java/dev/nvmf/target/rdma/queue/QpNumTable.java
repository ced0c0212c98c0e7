package dev.nvmf.target.rdma.queue;

import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.ToIntFunction;

/**
 * The queues whose QPs use one shared receive queue, by QP number: a receive completion from an SRQ names its
 * connection only by {@code ibv_wc.qp_num} (verbs.h, {@code struct ibv_wc}). Open addressing with linear probing and
 * tombstones; the CM thread adds and removes (synchronized), the poller thread looks up without locks and without
 * allocating. A lookup checks the queue it finds against the number, so a slot reused under it is never mistaken.
 */
final class QpNumTable<T> {
    private static final int EMPTY = -1;
    private static final int REMOVED = -2;

    private final int mask;
    private final AtomicIntegerArray keys;
    private final AtomicReferenceArray<T> values;
    /** The QP number of a value (RdmaQueue::qpNum): what a lookup checks what it found against. */
    private final ToIntFunction<T> qpNumOf;
    private int size;

    /** Room for {@code capacity} queues (the table is twice that, a power of two). */
    QpNumTable(int capacity, ToIntFunction<T> qpNumOf) {
        this.qpNumOf = qpNumOf;
        int n = Integer.highestOneBit(Math.max(2, capacity) * 2 - 1) << 1;
        mask = n - 1;
        keys = new AtomicIntegerArray(n);
        values = new AtomicReferenceArray<>(n);
        for (int i = 0; i < n; i++) keys.set(i, EMPTY);
    }

    private int home(int qpNum) { return (qpNum * 0x9E3779B9) >>> 7 & mask; }

    /** Adds {@code queue} under its QP number (CM thread). */
    synchronized void add(int qpNum, T queue) {
        if (qpNum < 0) throw new IllegalArgumentException("qp_num " + qpNum);
        if (size >= (mask + 1) / 2) throw new IllegalStateException("no room for another queue on the SRQ");
        int free = -1;
        for (int i = home(qpNum), probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
            int k = keys.get(i);
            if (k == qpNum) throw new IllegalStateException("qp_num " + qpNum + " is already on the SRQ");
            if (k == REMOVED && free < 0) free = i;
            if (k == EMPTY) {
                if (free < 0) free = i;
                break;
            }
        }
        values.set(free, queue); // the value before the key: a reader that sees the key sees the queue
        keys.set(free, qpNum);
        size++;
    }

    /** Removes the queue under {@code qpNum}, if it is {@code queue} (CM thread). */
    synchronized void remove(int qpNum, T queue) {
        for (int i = home(qpNum), probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
            int k = keys.get(i);
            if (k == EMPTY) return;
            if (k == qpNum) {
                if (values.get(i) != queue) return;
                keys.set(i, REMOVED);
                values.set(i, null);
                size--;
                return;
            }
        }
    }

    /** The queue whose QP has number {@code qpNum}, or null (poller thread; lock-free, allocation-free). */
    T get(int qpNum) {
        for (int i = home(qpNum), probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
            int k = keys.get(i);
            if (k == EMPTY) return null;
            if (k == qpNum) {
                T q = values.get(i);
                return q != null && qpNumOf.applyAsInt(q) == qpNum ? q : null;
            }
        }
        return null;
    }

    synchronized int size() { return size; }
}
