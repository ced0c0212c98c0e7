package dev.nvmf.target.core;

import dev.nvmf.target.core.controller.KeepAliveTimer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The keep-alive timer's windows: never before KATO of silence, always by 2 x KATO (kernel nvmet semantics). */
class KeepAliveTimerTest {
    private static final long MS = 1_000_000L;

    @Test
    void silenceShorterThanKatoNeverExpires() {
        KeepAliveTimer t = new KeepAliveTimer(1000, 0);
        long lastTraffic = 0;
        // A command every 990 ms for a long time, the timer checked every 10 ms.
        for (long now = 0; now <= 60_000 * MS; now += 10 * MS) {
            if (now % (990 * MS) == 0) lastTraffic = now;
            assertFalse(t.expire(now, lastTraffic), "expired at " + now / MS + " ms");
        }
    }

    @Test
    void aWholeWindowWithoutTrafficExpiresOnce() {
        KeepAliveTimer t = new KeepAliveTimer(1000, 0);
        long lastTraffic = 900 * MS; // traffic in the first window
        assertFalse(t.expire(1000 * MS, lastTraffic), "the first window saw traffic: a new window");
        assertFalse(t.expire(1999 * MS, lastTraffic), "the second window is not over");
        assertTrue(t.expire(2000 * MS, lastTraffic), "a whole window of silence: 1100 ms after the last command");
        assertFalse(t.expire(5000 * MS, lastTraffic), "expires once");
        assertTrue(t.expired());
    }

    @Test
    void anExplicitKeepAliveStartsANewWindow() {
        KeepAliveTimer t = new KeepAliveTimer(1000, 0);
        t.rearm(800 * MS);
        assertFalse(t.expire(1000 * MS, 0));
        assertFalse(t.expire(1799 * MS, 0));
        assertTrue(t.expire(1800 * MS, 0));
    }

    @Test
    void zeroKatoDisablesTheTimer() {
        KeepAliveTimer t = new KeepAliveTimer(0, 0);
        assertFalse(t.expire(Long.MAX_VALUE / 2, 0));
    }
}
