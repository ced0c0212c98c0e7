package dev.nvmf.tests.aot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The AOT cache is only as good as its training: the workload really serves every kind of command it claims, through
 * the production runtime, and every one of them succeeds (the workload throws on any failed command, missing event,
 * or a serve that does not stop with exit 0). Run in-process and short here; the build runs it for longer under
 * {@code -XX:AOTCacheOutput}.
 */
class AotTrainingTest {

    @Test
    void trainingDoesEveryKindOfWorkAndReleasesTheFabric(@TempDir Path dir) throws Exception {
        // The workload configures logging as serve does (root handler to stderr): give the JVM's back afterwards.
        Logger root = Logger.getLogger("");
        Handler[] handlers = root.getHandlers();
        Level rootLevel = root.getLevel();
        Level ours = Logger.getLogger("dev.nvmf").getLevel();
        AotTraining.Counts c;
        try {
            c = AotTraining.run(Duration.ofMillis(1500), dir);
        } finally {
            for (Handler h : root.getHandlers()) {
                root.removeHandler(h);
            }
            for (Handler h : handlers) {
                root.addHandler(h);
            }
            root.setLevel(rootLevel);
            Logger.getLogger("dev.nvmf").setLevel(ours);
        }
        assertTrue(c.reads > 0, c::toString);
        assertTrue(c.writes > 0, c::toString);
        assertTrue(c.keyedWrites > 0, c::toString);
        assertTrue(c.flushes > 0, c::toString);
        assertTrue(c.writeZeroes > 0, c::toString);
        // Connect-time admin commands of both hosts (11 each) and the changed-namespace reads after the reload.
        assertTrue(c.adminCommands >= 25, c::toString);
        assertEquals(1, c.events, "the namespace added by the reload reaches host A's event request");
        assertTrue(c.scrapes > 0, c::toString);
        assertNull(c.leaked, "the soft fabric still holds resources after the orderly stop");
    }
}
