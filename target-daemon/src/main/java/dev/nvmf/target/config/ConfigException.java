package dev.nvmf.target.config;

import java.util.List;
import java.util.stream.Collectors;

/** A configuration was refused; carries every problem found, not just the first. */
public final class ConfigException extends Exception {
    private final List<ConfigError> errors;

    public ConfigException(List<ConfigError> errors) {
        super(errors.stream().map(ConfigError::toString).collect(Collectors.joining("\n")));
        this.errors = List.copyOf(errors);
    }

    public List<ConfigError> errors() {
        return errors;
    }
}
