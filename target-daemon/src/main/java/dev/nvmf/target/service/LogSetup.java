package dev.nvmf.target.service;

import java.io.PrintStream;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import dev.nvmf.target.config.LoggingSection;

/** Configures java.util.logging for the daemon: one handler on stderr with {@link JournalFormatter}. */
public final class LogSetup {
    /** The daemon's logger namespace. */
    public static final String ROOT = "dev.nvmf";

    private LogSetup() {}

    /** Under systemd with stderr connected to the journal (systemd sets JOURNAL_STREAM). */
    public static boolean underJournal(Map<String, String> env) {
        String s = env.get("JOURNAL_STREAM");
        return s != null && !s.isEmpty();
    }

    public static void configure(LoggingSection config, Map<String, String> env, PrintStream out) {
        boolean journal = switch (config.format()) {
            case JOURNAL -> true;
            case PLAIN -> false;
            case AUTO -> underJournal(env);
        };
        Logger root = Logger.getLogger("");
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h);
        }
        Handler handler = new Handler() {
            @Override
            public synchronized void publish(LogRecord record) {
                if (isLoggable(record)) {
                    out.print(getFormatter().format(record));
                    out.flush();
                }
            }

            @Override
            public void flush() {
                out.flush();
            }

            @Override
            public void close() {
                out.flush();
            }
        };
        handler.setFormatter(new JournalFormatter(journal));
        handler.setLevel(Level.ALL);
        root.addHandler(handler);
        root.setLevel(Level.WARNING); // libraries: warnings only
        Logger.getLogger(ROOT).setLevel(level(config.level()));
    }

    public static void apply(LoggingSection config) {
        Logger.getLogger(ROOT).setLevel(level(config.level()));
    }

    public static Level level(LoggingSection.Level level) {
        return switch (level) {
            case ERROR -> Level.SEVERE;
            case WARNING -> Level.WARNING;
            case INFO -> Level.INFO;
            case DEBUG -> Level.FINE;
            case TRACE -> Level.FINEST;
        };
    }
}
