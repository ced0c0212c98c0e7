package dev.nvmf.target.cli;

import java.nio.file.Path;
import java.util.Map;

import dev.nvmf.target.cli.CommandSpec.Type;

/**
 * The values of one command's options and parameters, converted and with their defaults, as the command's
 * {@link CliCommand#bind} reads them: an option by its long name ({@code --config}), a parameter by its label
 * ({@code FILE}). Asking for a name the command does not declare, or as another type, is a bug and throws.
 */
final class Arguments {
    private final CommandSpec command;
    private final Map<String, Object> values;

    Arguments(CommandSpec command, Map<String, Object> values) {
        this.command = command;
        this.values = values;
    }

    /** An option's or parameter's path; null when absent. */
    Path path(String name) {
        return (Path) value(name, Type.PATH);
    }

    /** A string option's or parameter's value; null when absent. */
    String string(String name) {
        return (String) value(name, Type.STRING);
    }

    /** An int option's or parameter's value (its default when absent); 0 when absent without a default. */
    int integer(String name) {
        Object v = value(name, Type.INT);
        return v == null ? 0 : (Integer) v;
    }

    /** Whether a flag was given. */
    boolean flag(String name) {
        return Boolean.TRUE.equals(value(name, Type.FLAG));
    }

    private Object value(String name, Type type) {
        Type declared = null;
        for (CommandSpec.Option o : command.options()) {
            if (o.longName().equals(name)) {
                declared = o.type();
            }
        }
        for (CommandSpec.Parameter p : command.parameters()) {
            if (p.label().equals(name)) {
                declared = p.type();
            }
        }
        if (declared != type) {
            throw new IllegalArgumentException(command.path() + " declares no " + type + " '" + name + "'"
                    + (declared == null ? "" : " (it is a " + declared + ")"));
        }
        return values.get(name);
    }
}
