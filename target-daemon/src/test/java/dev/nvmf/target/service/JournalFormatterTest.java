package dev.nvmf.target.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import dev.nvmf.target.config.LoggingSection;
import org.junit.jupiter.api.Test;

class JournalFormatterTest {
    @Test
    void journalLinesHavePriorityPrefixAndNoTimestamp() {
        JournalFormatter f = new JournalFormatter(true);
        assertEquals("<6>subsys=nqn.2024-01.dev.nvmf:a host=nqn.2024-01.dev.nvmf:h qid=3: queue connected\n",
                f.format(new LogRecord(Level.INFO, LogContext.format("nqn.2024-01.dev.nvmf:a",
                        "nqn.2024-01.dev.nvmf:h", 3, "queue connected"))));
        assertEquals("<4>reload refused: a | b\n", f.format(new LogRecord(Level.WARNING, "reload refused: a\nb")));
        assertEquals("<3>x\n", f.format(new LogRecord(Level.SEVERE, "x")));
        assertEquals("<7>x\n", f.format(new LogRecord(Level.FINE, "x")));
        LogRecord r = new LogRecord(Level.SEVERE, "startup failed");
        r.setThrown(new IllegalStateException("bind 10.0.0.1:4420", new java.io.IOException("EADDRINUSE")));
        String line = f.format(r);
        assertTrue(line.startsWith("<3>startup failed: java.lang.IllegalStateException: bind 10.0.0.1:4420 (at "),
                line);
        assertTrue(line.endsWith(" <- java.io.IOException: EADDRINUSE\n"), line);
        assertEquals(1, line.split("\n").length);
    }

    @Test
    void plainLinesHaveTimestampAndLevel() {
        String line = new JournalFormatter(false).format(new LogRecord(Level.WARNING, "hello"));
        assertTrue(line.matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}\\S+ WARN  hello\n"), line);
    }

    @Test
    void autoFormatFollowsJournalStream() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream ps = new PrintStream(out, true, StandardCharsets.UTF_8);
        LogSetup.configure(new LoggingSection(LoggingSection.Level.DEBUG, LoggingSection.Format.AUTO),
                Map.of("JOURNAL_STREAM", "8:12345"), ps);
        Logger log = Logger.getLogger("dev.nvmf.target.test");
        log.fine("debug shown");
        log.finest("trace hidden");
        Logger.getLogger("org.other").info("library info hidden");
        assertEquals("<7>debug shown\n", out.toString(StandardCharsets.UTF_8));
        LogSetup.configure(LoggingSection.defaults(), Map.of(), System.err);
    }
}
