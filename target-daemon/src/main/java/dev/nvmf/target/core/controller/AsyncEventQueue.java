package dev.nvmf.target.core.controller;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.nvme.Status;

/**
 * Asynchronous Event Requests held by a controller, and events waiting for one (NVMe Base 2.0, 5.2; kernel:
 * {@code nvmet_add_async_event}, {@code nvmet_async_events_process}).
 *
 * <p>The host submits up to AERL + 1 requests that complete only when something happens. An event raised while no
 * request is held waits (de-duplicated) until one arrives. Held requests are completed from whichever thread
 * raises the event (the control plane on a config change), which {@code QueueTransport.complete} allows; requests
 * are always completed outside this object's lock.
 */
public final class AsyncEventQueue {
    /** {@link #submit} result: the request is held. */
    public static final long HELD = -1;
    /** {@link #submit} result: more requests than AERL + 1. */
    public static final long LIMIT_EXCEEDED = -2;

    private final CommandContext[] held;
    private int heldCount;
    private final int[] pending = new int[16];
    private int pendingCount;

    public AsyncEventQueue(int limit) {
        this.held = new CommandContext[limit];
    }

    /**
     * A new Asynchronous Event Request: returns an event waiting for it (its DW0, &gt;= 0; the caller completes the
     * request with it), or {@link #HELD}, or {@link #LIMIT_EXCEEDED}.
     */
    public synchronized long submit(CommandContext ctx) {
        if (pendingCount > 0) {
            int dw0 = pending[0];
            System.arraycopy(pending, 1, pending, 0, --pendingCount);
            return dw0 & 0xFFFF_FFFFL;
        }
        if (heldCount == held.length) {
            return LIMIT_EXCEEDED;
        }
        held[heldCount++] = ctx;
        return HELD;
    }

    /** Reports an event: completes the oldest held request with it, or keeps it for the next request. */
    public void raise(int dw0) {
        CommandContext ctx;
        synchronized (this) {
            if (heldCount == 0) {
                for (int i = 0; i < pendingCount; i++) {
                    if (pending[i] == dw0) {
                        return;
                    }
                }
                if (pendingCount < pending.length) {
                    pending[pendingCount++] = dw0;
                }
                return;
            }
            ctx = held[0];
            System.arraycopy(held, 1, held, 0, --heldCount);
            held[heldCount] = null;
        }
        ctx.result0 = dw0;
        ctx.complete(Status.SUCCESS);
    }

    /** Completes every held request with {@code status} (queue teardown: Commands Aborted due to SQ Deletion). */
    public void abortAll(int status) {
        CommandContext[] taken;
        int n;
        synchronized (this) {
            n = heldCount;
            taken = new CommandContext[n];
            System.arraycopy(held, 0, taken, 0, n);
            java.util.Arrays.fill(held, null);
            heldCount = 0;
        }
        for (int i = 0; i < n; i++) {
            taken[i].complete(status);
        }
    }

    /** Abort of a held request by command id: completes it with Command Abort Requested; false if none held. */
    public boolean abort(int cid) {
        CommandContext ctx = null;
        synchronized (this) {
            for (int i = 0; i < heldCount; i++) {
                if (held[i].cid == cid) {
                    ctx = held[i];
                    System.arraycopy(held, i + 1, held, i, heldCount - i - 1);
                    held[--heldCount] = null;
                    break;
                }
            }
        }
        if (ctx == null) {
            return false;
        }
        ctx.complete(Status.ABORT_REQUESTED);
        return true;
    }

    public synchronized int heldCount() { return heldCount; }

    public synchronized int pendingCount() { return pendingCount; }
}
