package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WorkCompletion;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * A completion queue of exactly the size asked for. Overrunning it (a completion arrives while it holds capacity()
 * unpolled entries) loses the completion, raises IBV_EVENT_CQ_ERR, and puts every QP on it in the error state.
 */
public final class SoftCompletionQueue implements CompletionQueue {
    final SoftDevice context;
    final SoftFabric fabric;
    private final int capacity;
    final SoftCompletionChannel channel;
    private final ArrayDeque<Cqe> entries;
    final List<SoftQueuePair> qps = new ArrayList<>();
    private boolean armed;
    private boolean solicitedOnly;
    boolean overrun;
    /** An injected CQ failure: poll returns -failedErrno from then on. */
    int failedErrno;
    private boolean closed;

    SoftCompletionQueue(SoftDevice context, int capacity, SoftCompletionChannel channel) {
        this.context = context;
        this.fabric = context.fabric;
        this.capacity = capacity;
        this.channel = channel;
        this.entries = new ArrayDeque<>(Math.min(capacity, 4096));
        if (channel != null) channel.cqs++;
    }

    @Override
    public int capacity() { return capacity; }

    void deliver(Cqe c) {
        if (closed || overrun || failedErrno != 0 || context.node.dead) {
            if (!closed && c.qp != null) c.qp.lostCompletions++;
            fabric.recycle(c);
            return;
        }
        if (entries.size() >= capacity) {
            overrun = true;
            if (c.qp != null) c.qp.lostCompletions++;
            fabric.recycle(c);
            enterError();
            return;
        }
        entries.add(c);
        if (armed && (!solicitedOnly || c.solicited || c.status != 0)) {
            armed = false;
            if (channel != null) channel.notify(this);
        }
    }

    /** A CQ error (IBA chapter 11, affiliated asynchronous errors: CQ error): IBV_EVENT_CQ_ERR on the context; every QP on the CQ goes to error. */
    private void enterError() {
        context.postAsync(AsyncEvent.ofCompletionQueue(AsyncEvent.Type.CQ_ERR, this));
        for (SoftQueuePair qp : new ArrayList<>(qps)) qp.enterError(true);
    }

    /** The CQ fails (a fault): poll returns -errno from now on, even with completions queued. */
    void fail(int errno) {
        if (closed || failedErrno != 0) return;
        failedErrno = errno;
        enterError();
    }

    /** Removes the completions of a destroyed QP (as mlx5 cleans the CQ in ibv_destroy_qp). */
    int purge(SoftQueuePair qp) {
        int n = 0;
        for (Iterator<Cqe> it = entries.iterator(); it.hasNext(); ) {
            Cqe c = it.next();
            if (c.qp == qp) {
                it.remove();
                fabric.recycle(c);
                n++;
            }
        }
        return n;
    }

    boolean holds(SoftQueuePair qp) {
        for (Cqe c : entries) {
            if (c.qp == qp) return true;
        }
        return false;
    }

    @Override
    public int poll(WorkCompletion wc) {
        fabric.lock.lock();
        try {
            fabric.pumpIfAutomatic();
            if (failedErrno != 0) return -failedErrno;
            int max = wc.capacity();
            int n = 0;
            Cqe c;
            while (n < max && (c = entries.poll()) != null) {
                wc.set(n, c.wrId, c.status, c.opcode, c.byteLen, c.invalidatedRkey, c.qpNum, c.wcFlags);
                if (c.qp != null) c.qp.retire(c);
                fabric.recycle(c);
                n++;
            }
            if (n == 0 && overrun) return -Errno.EIO;
            return n;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public int requestNotify(boolean solicitedOnly) {
        fabric.lock.lock();
        try {
            if (closed) return Errno.EINVAL;
            armed = true;
            this.solicitedOnly = solicitedOnly;
            return 0;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** Unpolled completions (soft-specific, for tests). */
    public int size() {
        fabric.lock.lock();
        try {
            return entries.size();
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public void close() {
        fabric.lock.lock();
        try {
            if (closed) return;
            context.checkOpen("ibv_destroy_cq");
            if (!qps.isEmpty()) throw new VerbsException("ibv_destroy_cq", Errno.EBUSY, "Device or resource busy");
            closed = true;
            for (Cqe c : entries) fabric.recycle(c);
            entries.clear();
            if (channel != null) {
                channel.cqs--;
                channel.forget(this);
            }
            context.children--;
            fabric.resources.remove(SoftResources.Kind.CQ, this);
        } finally {
            fabric.lock.unlock();
        }
    }
}
