package dev.nvmf.target.core.controller;

/**
 * A controller's keep-alive timer (NVMe Base 2.0, 3.9 "Keep Alive"; kernel: {@code nvmet_keep_alive_timer}).
 *
 * <p>Traffic based (CTRATT.TBKAS, as the kernel target): any command on any of the controller's queues counts as
 * a keep-alive. Queues stamp their own last-command time on their poller (no shared write on the I/O path); the
 * timer itself only holds the timeout and the last explicit re-arm (Connect, Keep Alive, Set Features KATO).
 * {@code NvmeTarget.checkTimers} compares them with the clock.
 *
 * <p>Expiry works in windows of KATO, as the kernel target's {@code nvmet_keep_alive_timer} does: when a window
 * ends, traffic seen during it opens a new window, and only a window without any command expires the controller.
 * So a controller expires after between KATO and 2 x KATO of silence, never before KATO. The slack matters: a
 * host re-arms its traffic-based keep-alive only about every KATO (Linux 6.1), and a loaded host or target can
 * stretch that; expiring at exactly KATO tears down healthy controllers.
 */
public final class KeepAliveTimer {
    private volatile long timeoutMillis;
    /** Start of the current window: the last explicit re-arm, or the end of a window that saw traffic. */
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
     * queues: a whole window of KATO has passed without a command. A window that saw traffic starts a new one.
     * Later calls return false (the controller is being torn down). Called by one thread (the timer).
     */
    public boolean expire(long nowNanos, long lastTrafficNanos) {
        long kato = timeoutMillis;
        if (kato <= 0 || expired) {
            return false;
        }
        long windowStart = armedNanos;
        if (nowNanos - windowStart < kato * 1_000_000L) {
            return false;
        }
        if (lastTrafficNanos - windowStart > 0) {
            armedNanos = nowNanos; // traffic during the window (TBKAS): a new window
            return false;
        }
        expired = true;
        return true;
    }

    public boolean expired() { return expired; }

    /**
     * When the current window ends ({@link #expire} has something to decide then), or {@link Long#MAX_VALUE} when
     * keep-alive is off or the timer already expired. Between window ends nothing can expire, so a timer thread may
     * sleep until the earliest of them.
     */
    public long windowEndNanos() {
        long kato = timeoutMillis;
        if (kato <= 0 || expired) {
            return Long.MAX_VALUE;
        }
        return armedNanos + kato * 1_000_000L;
    }
}
