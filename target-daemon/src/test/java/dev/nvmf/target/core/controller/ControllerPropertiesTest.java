package dev.nvmf.target.core.controller;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.nvmf.target.nvme.Properties;

/**
 * Every I/O command asks {@link ControllerProperties#ready()} (NVMe Base 2.0, 3.5: commands other than Fabrics need
 * CC.EN = CSTS.RDY = 1). Pollers of one controller's I/O queues ask at once, so the answer must not take the lock
 * that CC writes hold: it reads one published state.
 */
class ControllerPropertiesTest {
    /** CC with EN, IOSQES 6 and IOCQES 4 (64- and 16-byte entries), NVM command set, 4 KiB pages. */
    private static final int CC_ENABLE = Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT)
            | (4 << Properties.CC_IOCQES_SHIFT);

    @Test
    void readyFollowsEnableResetAndShutdown() {
        ControllerProperties p = new ControllerProperties(128, 30, 0x20000, false);
        assertFalse(p.ready());
        assertEquals(ControllerProperties.CC_ENABLED, p.writeCc(CC_ENABLE));
        assertTrue(p.ready());
        p.markFatal();
        assertTrue(p.fatal());
        assertEquals(ControllerProperties.CC_RESET, p.writeCc(0));
        assertFalse(p.ready());
        assertFalse(p.fatal(), "a reset clears CFS");
        p.writeCc(CC_ENABLE);
        assertEquals(ControllerProperties.CC_SHUTDOWN, p.writeCc(CC_ENABLE | (1 << Properties.CC_SHN_SHIFT)));
        assertFalse(p.ready(), "a shutdown clears RDY");
        assertEquals(ControllerProperties.CC_ENABLE_FAILED, new ControllerProperties(128, 30, 0x20000, false)
                .writeCc(Properties.CC_EN));
    }

    @Test
    void readyDoesNotWaitForTheLockOfACcWrite() throws Exception {
        ControllerProperties p = new ControllerProperties(128, 30, 0x20000, false);
        p.writeCc(CC_ENABLE);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = Thread.ofPlatform().start(() -> {
            synchronized (p) { // what a CC write on the admin queue's poller holds
                held.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        held.await();
        try {
            CompletableFuture<Boolean> answer = CompletableFuture.supplyAsync(p::ready);
            // Bounded only so that a regression fails instead of hanging: with the lock held it never answers.
            assertTrue(answer.get(30, TimeUnit.SECONDS));
            assertFalse(CompletableFuture.supplyAsync(p::fatal).get(30, TimeUnit.SECONDS));
        } finally {
            release.countDown();
            holder.join();
        }
    }
}
