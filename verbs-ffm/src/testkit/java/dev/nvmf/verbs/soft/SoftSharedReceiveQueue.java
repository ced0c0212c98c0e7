package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.SharedReceiveQueue;
import dev.nvmf.verbs.VerbsException;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

/**
 * A shared receive queue: the receives of every QP created on it (IBA chapter 10, shared receive queues). A SEND that
 * reaches any of those QPs takes the receive at the head, in posting order; its completion goes to that QP's receive
 * CQ with that QP's number. An empty SRQ answers a SEND with RNR NAK, exactly like an empty receive queue, and a
 * sender parked on infinite RNR retries resumes when a receive is posted here. A QP that goes to error flushes only
 * its own work: the receives still on the SRQ stay for the other QPs. A receive's slot is free again once a SEND
 * consumed it (or a flush returned it): that is when a real SRQ's WQE leaves the queue.
 */
public final class SoftSharedReceiveQueue implements SharedReceiveQueue {
    final SoftFabric fabric;
    final SoftProtectionDomain pd;
    private final int maxWr;
    private final int maxSge;
    final ArrayDeque<SoftQueuePair.RecvWqe> rq = new ArrayDeque<>();
    private final ArrayDeque<SoftQueuePair.RecvWqe> pool = new ArrayDeque<>();
    /** The QPs created on it and not yet destroyed. */
    final List<SoftQueuePair> qps = new ArrayList<>();
    private long posted;
    private int postedBeforeFailure;
    boolean closed;

    SoftSharedReceiveQueue(SoftProtectionDomain pd, int maxWr, int maxSge) {
        this.fabric = pd.fabric;
        this.pd = pd;
        this.maxWr = maxWr;
        this.maxSge = maxSge;
    }

    @Override
    public int maxWr() { return maxWr; }

    @Override
    public int maxSge() { return maxSge; }

    /** Receives posted and not yet consumed by a SEND. */
    public int postedRecvs() {
        fabric.lock.lock();
        try {
            return rq.size();
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public int postRecv(RecvWorkRequest first) {
        fabric.lock.lock();
        try {
            postedBeforeFailure = 0;
            if (closed) return Errno.EINVAL;
            int rc = 0;
            int n = 0;
            long addr = first.address();
            MemorySegment all = SoftFabric.ALL;
            while (addr != 0) {
                int numSge = all.get(JAVA_INT_UNALIGNED, addr + RecvWorkRequest.NUM_SGE_OFFSET);
                if (numSge < 0 || numSge > maxSge) { rc = Errno.EINVAL; break; }
                if (rq.size() >= maxWr) { rc = Errno.ENOMEM; break; }
                SoftQueuePair.RecvWqe r = pool.poll();
                if (r == null) r = new SoftQueuePair.RecvWqe(Math.max(1, maxSge));
                r.copy(addr, numSge);
                r.index = posted++;
                rq.add(r);
                n++;
                addr = all.get(JAVA_LONG_UNALIGNED, addr + RecvWorkRequest.NEXT_OFFSET);
            }
            if (rc != 0) postedBeforeFailure = n;
            // Senders stalled on receiver-not-ready (infinite RNR retries) towards any QP of this SRQ proceed.
            if (!rq.isEmpty()) {
                for (int i = 0; i < qps.size(); i++) qps.get(i).peerMayProceed();
            }
            fabric.pumpIfAutomatic();
            return rc;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public int postedBeforeFailure() {
        fabric.lock.lock();
        try {
            return postedBeforeFailure;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** The WQE a consuming QP is done with goes back to the pool (called under the fabric lock). */
    void recycle(SoftQueuePair.RecvWqe r) { pool.add(r); }

    /** ibv_destroy_srq: EBUSY while a QP still uses it (ibv_destroy_srq(3)); receives still posted are discarded. */
    @Override
    public void close() {
        fabric.lock.lock();
        try {
            if (closed) return;
            if (!qps.isEmpty()) throw new VerbsException("ibv_destroy_srq", Errno.EBUSY, "Device or resource busy");
            closed = true;
            rq.clear();
            pd.users--;
            fabric.resources.remove(SoftResources.Kind.SRQ, this);
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public String toString() { return "SoftSharedReceiveQueue[max_wr " + maxWr + ", posted " + rq.size() + "]"; }
}
