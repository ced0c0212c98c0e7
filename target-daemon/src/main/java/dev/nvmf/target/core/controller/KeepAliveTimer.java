package dev.nvmf.target.core.controller;

/**
 * A controller's keep-alive timer (NVMe Base 2.0, 3.9 "Keep Alive"; kernel: {@code nvmet_keep_alive_timer}).
 *
 * <p>Traffic based (CTRATT.TBKAS, as the kernel target): any command on any of the controller's queues counts as
 * a keep-alive. Queues stamp their own last-command time on their poller (no shared write on the I/O path); the
 * timer itself only holds the timeout and the last explicit re-arm (Connect, Keep Alive, Set Features KATO).
 * {@code NvmeTarget.checkTimers} compares them with the clock.
 */
public final class KeepAliveTimer {
    private volatile long timeoutMillis;
    private volatile long armedNanos;
    private volatile boolean expired;

    public KeepAliveTimer(long timeoutMillis, long nowNanos) {
        this.timeoutMillis = timeoutMillis;
        this.armedNanos = nowNanos;
    }

    /** KATO in milliseconds; 0 = no keep-alive. */
    public long timeoutMillis() { return timeoutMillis; }

    /** Set Features Keep Alive Timer: a new timeout, counted from now. */
    public void timeoutMillis(long millis, long nowNanos) {
        this.timeoutMillis = millis;
        this.armedNanos = nowNanos;
    }

    public void rearm(long nowNanos) {
        this.armedNanos = nowNanos;
    }

    public long armedNanos() { return armedNanos; }

    /**
     * True once if the timer has run out at {@code nowNanos}, given the latest command time of the controller's
     * queues; later calls return false (the controller is being torn down).
     */
    public boolean expire(long nowNanos, long lastTrafficNanos) {
        long kato = timeoutMillis;
        if (kato <= 0 || expired) {
            return false;
        }
        long last = Math.max(armedNanos, lastTrafficNanos);
        if (nowNanos - last >= kato * 1_000_000L) {
            expired = true;
            return true;
        }
        return false;
    }

    public boolean expired() { return expired; }
}
