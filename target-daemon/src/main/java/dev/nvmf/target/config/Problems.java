package dev.nvmf.target.config;

import java.util.ArrayList;
import java.util.List;

import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.nodes.Node;

/** Collects errors and warnings against one source file, each with its position and key path. */
final class Problems {
    private final String source;
    private final List<ConfigError> errors = new ArrayList<>();
    private final List<ConfigError> warnings = new ArrayList<>();

    Problems(String source) {
        this.source = source;
    }

    String source() {
        return source;
    }

    void error(Node node, String path, String message) {
        errors.add(at(node, path, message));
    }

    void error(int line, int column, String path, String message) {
        errors.add(new ConfigError(source, line, column, path, message));
    }

    void warning(Node node, String path, String message) {
        warnings.add(at(node, path, message));
    }

    ConfigError at(Node node, String path, String message) {
        Mark mark = node == null ? null : node.getStartMark().orElse(null);
        int line = mark == null ? 1 : mark.getLine() + 1;
        int column = mark == null ? 1 : mark.getColumn() + 1;
        return new ConfigError(source, line, column, path, message);
    }

    /** "line 9:7" of a node, to point back at a first occurrence. */
    static String where(Node node) {
        Mark mark = node.getStartMark().orElse(null);
        return mark == null ? "elsewhere" : "line " + (mark.getLine() + 1) + ":" + (mark.getColumn() + 1);
    }

    boolean hasErrors() {
        return !errors.isEmpty();
    }

    List<ConfigError> errors() {
        return errors;
    }

    List<ConfigError> warnings() {
        return warnings;
    }
}
