package dev.nvmf.target.service;

import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.logging.Formatter;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * One line per event. Under systemd ({@code JOURNAL_STREAM} set) a syslog priority prefix such as {@code <6>}
 * and no timestamp (journald adds its own and parses the prefix, SyslogLevelPrefix=); otherwise an ISO time and
 * the level name. A thrown exception is summarised on the same line (class: message, and its causes); newlines in
 * a message become " | " so one event is always one journal entry.
 */
public final class JournalFormatter extends Formatter {
    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX").withZone(ZoneId.systemDefault());

    private final boolean journal;

    public JournalFormatter(boolean journal) {
        this.journal = journal;
    }

    /** syslog priority for a java.util.logging level: 3 err, 4 warning, 6 info, 7 debug. */
    public static int priority(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return 3;
        }
        if (v >= Level.WARNING.intValue()) {
            return 4;
        }
        if (v >= Level.INFO.intValue()) {
            return 6;
        }
        return 7;
    }

    private static String levelName(Level level) {
        return switch (priority(level)) {
            case 3 -> "ERROR";
            case 4 -> "WARN ";
            case 6 -> "INFO ";
            default -> "DEBUG";
        };
    }

    @Override
    public String format(LogRecord record) {
        StringBuilder sb = new StringBuilder(128);
        if (journal) {
            sb.append('<').append(priority(record.getLevel())).append('>');
        } else {
            sb.append(TIME.format(Instant.ofEpochMilli(record.getMillis()))).append(' ')
                    .append(levelName(record.getLevel())).append(' ');
        }
        String message = formatMessage(record);
        sb.append(message == null ? "" : message.replace("\r", "").replace("\n", " | "));
        Throwable t = record.getThrown();
        int depth = 0;
        while (t != null && depth++ < 5) {
            sb.append(depth == 1 ? ": " : " <- ").append(t.getClass().getName());
            if (t.getMessage() != null) {
                sb.append(": ").append(t.getMessage().replace("\n", " | "));
            }
            StackTraceElement[] trace = t.getStackTrace();
            if (depth == 1 && trace.length > 0) {
                sb.append(" (at ").append(trace[0]).append(')');
            }
            t = t.getCause();
        }
        return sb.append('\n').toString();
    }
}
