package dev.nvmf.target.rdma.support;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/** The lines one class logs (through System.Logger's default java.util.logging backend), formatted, while open. */
public final class LogCapture implements AutoCloseable {
    private final Logger logger;
    private final List<String> lines = new ArrayList<>();
    private final Handler handler = new Handler() {
        private final SimpleFormatter formatter = new SimpleFormatter();

        @Override
        public void publish(LogRecord r) {
            synchronized (lines) {
                lines.add(r.getLevel() + " " + formatter.formatMessage(r));
            }
        }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };

    public LogCapture(Class<?> source) {
        this(source.getName());
    }

    /** The lines logged by {@code loggerName} and every logger below it (e.g. a package). */
    public LogCapture(String loggerName) {
        logger = Logger.getLogger(loggerName);
        handler.setLevel(Level.ALL);
        logger.addHandler(handler);
    }

    /** The lines logged so far that contain {@code text}. */
    public List<String> containing(String text) {
        synchronized (lines) {
            List<String> out = new ArrayList<>();
            for (String l : lines) if (l.contains(text)) out.add(l);
            return out;
        }
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
