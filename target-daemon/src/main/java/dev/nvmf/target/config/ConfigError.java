package dev.nvmf.target.config;

/**
 * One problem in a configuration file, located precisely enough to fix it without reading code.
 *
 * @param source  the file as the operator named it (or a label such as "&lt;string&gt;")
 * @param line    1-based line
 * @param column  1-based column
 * @param keyPath where in the document, e.g. {@code subsystems[0].namespaces[1].nsid}; empty for the root
 * @param message what is wrong and, where it helps, what is allowed
 */
public record ConfigError(String source, int line, int column, String keyPath, String message) {
    /** {@code FILE:LINE:COLUMN: KEYPATH: MESSAGE}, the shape compilers use, so editors can jump to it. */
    @Override
    public String toString() {
        return source + ":" + line + ":" + column + ": " + (keyPath.isEmpty() ? "" : keyPath + ": ") + message;
    }
}
