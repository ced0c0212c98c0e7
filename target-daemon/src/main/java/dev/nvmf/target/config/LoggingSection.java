package dev.nvmf.target.config;

/**
 * Logging.
 *
 * @param level  error, warning, info, debug or trace
 * @param format auto (journal under systemd, plain otherwise), journal, or plain
 */
public record LoggingSection(Level level, Format format) {
    public enum Level { ERROR, WARNING, INFO, DEBUG, TRACE }

    public enum Format { AUTO, JOURNAL, PLAIN }

    public static LoggingSection defaults() {
        return new LoggingSection(Level.INFO, Format.AUTO);
    }
}
