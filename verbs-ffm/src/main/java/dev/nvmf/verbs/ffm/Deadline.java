package dev.nvmf.verbs.ffm;

/**
 * The timeout rule shared by every "poll for an event" call: 0 = look once, negative = wait forever, else wait
 * until the deadline. Used around a non-blocking get_event call that reported EAGAIN.
 */
final class Deadline {
    private final long timeoutMillis;
    private final long deadlineNanos;

    Deadline(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
        this.deadlineNanos = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : 0;
    }

    /**
     * Waits for the fd to become readable, bounded by what is left of the timeout.
     *
     * @return true to try the get_event call again, false when the caller should return "nothing" (timeout
     *         expired, look-once mode, or woken up)
     */
    boolean await(FdWaiter waiter) {
        long wait;
        if (timeoutMillis == 0) return false;
        if (timeoutMillis < 0) {
            wait = -1;
        } else {
            long leftNanos = deadlineNanos - System.nanoTime();
            if (leftNanos <= 0) return false;
            wait = Math.max(1, (leftNanos + 999_999) / 1_000_000);
        }
        FdWaiter.Result r = waiter.await(wait);
        if (r == FdWaiter.Result.FAILED) throw Rdma.failure("poll", waiter.errno());
        return r != FdWaiter.Result.WOKEN;
    }
}
