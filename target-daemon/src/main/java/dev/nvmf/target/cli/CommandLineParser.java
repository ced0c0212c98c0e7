package dev.nvmf.target.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import dev.nvmf.target.cli.CommandSpec.Option;
import dev.nvmf.target.cli.CommandSpec.Parameter;
import dev.nvmf.target.cli.CommandSpec.Type;

/**
 * Reads a command line against a {@link CommandSpec}: finds the (sub)command, converts every option and parameter
 * to its type, fills in defaults and checks that nothing required is missing. The first problem ends it with a
 * {@link UsageException} whose message names the option or parameter and the value.
 *
 * <p>The grammar, as the former picocli command line had it: {@code --name VALUE}, {@code --name=VALUE},
 * {@code -n VALUE}, {@code -nVALUE}, {@code -n=VALUE}; short flags may be grouped ({@code -qh}); a flag takes
 * {@code =true} or {@code =false}; {@code --} ends the options (everything after it is a positional parameter);
 * an argument that looks like a negative number and is no option's name is a parameter. {@code -h}/{@code --help}
 * and {@code -V}/{@code --version} end the reading wherever they come, before a problem found later.
 */
final class CommandLineParser {
    /** What the command line asks for. */
    enum Request { RUN, HELP, VERSION }

    /** The command chosen, what it is asked to do, and its values (for {@link Request#RUN}). */
    record Parsed(CommandSpec command, Request request, Arguments arguments) {}

    private CommandLineParser() {}

    static Parsed parse(CommandSpec root, String[] args) throws UsageException {
        CommandSpec command = root;
        Map<String, Object> values = new HashMap<>();
        int parameter = 0;
        boolean endOfOptions = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!endOfOptions && arg.equals("--")) {
                endOfOptions = true;
                continue;
            }
            if (!endOfOptions && isOptionLike(command, arg)) {
                Request asked = arg.startsWith("--") ? longOption(command, args, i, values)
                        : shortOptions(command, args, i, values);
                if (asked != Request.RUN) {
                    return new Parsed(command, asked, null);
                }
                if (!arg.contains("=") && takesSeparateValue(command, arg)) {
                    i++;
                }
                continue;
            }
            if (!endOfOptions && parameter == 0 && !command.subcommands().isEmpty()) {
                CommandSpec sub = command.subcommand(arg);
                if (sub == null) {
                    throw new UsageException(command, "Unknown command: '" + arg + "' (commands: "
                            + command.subcommandNames() + ")");
                }
                command = sub;
                values = new HashMap<>();
                continue;
            }
            if (parameter >= command.parameters().size()) {
                throw new UsageException(command, "Unmatched argument at index " + i + ": '" + arg + "'");
            }
            Parameter p = command.parameters().get(parameter++);
            values.put(p.label(), convert(command, p.type(), arg,
                    "positional parameter at index " + (parameter - 1) + " (" + p.label() + ")"));
        }
        for (Option o : command.options()) {
            if (!values.containsKey(o.longName())) {
                if (o.required()) {
                    throw new UsageException(command, "Missing required option: '" + o.longName() + "="
                            + o.label() + "'");
                }
                if (o.defaultValue() != null) {
                    values.put(o.longName(), convert(command, o.type(), o.defaultValue(), optionName(o)));
                }
            }
        }
        StringBuilder missing = new StringBuilder();
        int count = 0;
        for (int p = parameter; p < command.parameters().size(); p++) {
            Parameter each = command.parameters().get(p);
            if (each.required()) {
                missing.append(count++ == 0 ? "'" : ", '").append(each.label()).append('\'');
            }
        }
        if (count > 0) {
            throw new UsageException(command, "Missing required parameter" + (count == 1 ? ": " : "s: ") + missing);
        }
        return new Parsed(command, Request.RUN, new Arguments(command, values));
    }

    /** An option, or options: not "-", not a negative number that is no option's name. */
    private static boolean isOptionLike(CommandSpec command, String arg) {
        if (arg.length() < 2 || arg.charAt(0) != '-') {
            return false;
        }
        if (Character.isDigit(arg.charAt(1))) {
            return command.option(arg.substring(0, 2)) != null;
        }
        return true;
    }

    /** Whether {@code arg} (without "=") is an option whose value is the next argument. */
    private static boolean takesSeparateValue(CommandSpec command, String arg) {
        if (arg.startsWith("--")) {
            Option o = command.option(arg);
            return o != null && o.takesValue();
        }
        // A group of short flags ending in one that takes a value, with nothing attached: -qo FILE.
        for (int c = 1; c < arg.length(); c++) {
            Option o = command.option("-" + arg.charAt(c));
            if (o != null && o.takesValue()) {
                return c == arg.length() - 1;
            }
        }
        return false;
    }

    private static Request longOption(CommandSpec command, String[] args, int i, Map<String, Object> values)
            throws UsageException {
        String arg = args[i];
        int eq = arg.indexOf('=');
        String name = eq < 0 ? arg : arg.substring(0, eq);
        Option o = command.option(name);
        if (o == null) {
            throw new UsageException(command, "Unknown option: '" + name + "'");
        }
        return apply(command, o, eq < 0 ? null : arg.substring(eq + 1), args, i, values);
    }

    private static Request shortOptions(CommandSpec command, String[] args, int i, Map<String, Object> values)
            throws UsageException {
        String arg = args[i];
        for (int c = 1; c < arg.length(); c++) {
            Option o = command.option("-" + arg.charAt(c));
            if (o == null) {
                throw new UsageException(command, "Unknown option: '" + (c == 1 ? arg : "-" + arg.charAt(c))
                        + "'" + (c == 1 ? "" : " (in '" + arg + "')"));
            }
            String rest = arg.substring(c + 1);
            if (o.takesValue() || rest.startsWith("=")) {
                String attached = rest.isEmpty() ? null : rest.startsWith("=") ? rest.substring(1) : rest;
                return apply(command, o, attached, args, i, values);
            }
            Request asked = apply(command, o, null, args, i, values);
            if (asked != Request.RUN) {
                return asked;
            }
        }
        return Request.RUN;
    }

    /** Sets one option from its attached value, or from the next argument. */
    private static Request apply(CommandSpec command, Option o, String attached, String[] args, int i,
                                 Map<String, Object> values) throws UsageException {
        if (!o.takesValue()) {
            boolean on = true;
            if (attached != null) {
                if (attached.equalsIgnoreCase("true") || attached.equalsIgnoreCase("false")) {
                    on = Boolean.parseBoolean(attached);
                } else {
                    throw new UsageException(command, "Invalid value for option '" + o.longName() + "': '"
                            + attached + "' is not a boolean (the option takes no value; true or false)");
                }
            }
            if (on && o == CommandSpec.HELP) {
                return Request.HELP;
            }
            if (on && o == CommandSpec.VERSION) {
                return Request.VERSION;
            }
            values.put(o.longName(), on);
            return Request.RUN;
        }
        String value = attached;
        if (value == null) {
            if (i + 1 >= args.length) {
                throw new UsageException(command, "Missing required parameter for option '" + o.longName()
                        + "' (" + o.label() + ")");
            }
            value = args[i + 1];
            if (value.equals("--") || isOptionLike(command, value) && knownOption(command, value)) {
                throw new UsageException(command, "Expected parameter for option '" + o.longName()
                        + "' but found '" + value + "'");
            }
        }
        if (values.containsKey(o.longName())) {
            throw new UsageException(command, "option '" + o.longName() + "' (" + o.label()
                    + ") should be specified only once");
        }
        values.put(o.longName(), convert(command, o.type(), value, optionName(o)));
        return Request.RUN;
    }

    private static boolean knownOption(CommandSpec command, String arg) {
        int eq = arg.indexOf('=');
        String name = eq < 0 ? arg : arg.substring(0, eq);
        return command.option(arg.startsWith("--") ? name : name.substring(0, 2)) != null;
    }

    private static String optionName(Option o) {
        return "option '" + o.longName() + "'";
    }

    /** The value as {@code type}; {@code what} names the option or parameter in the error. */
    static Object convert(CommandSpec command, Type type, String value, String what) throws UsageException {
        switch (type) {
            case INT:
                try {
                    return Integer.parseInt(value);
                } catch (NumberFormatException e) {
                    throw new UsageException(command, "Invalid value for " + what + ": '" + value
                            + "' is not an int");
                }
            case PATH:
                try {
                    return Path.of(value);
                } catch (InvalidPathException e) {
                    throw new UsageException(command, "Invalid value for " + what + ": '" + value
                            + "' is not a path (" + e.getReason() + ")");
                }
            case FLAG:
                return Boolean.parseBoolean(value);
            default:
                return value;
        }
    }
}
