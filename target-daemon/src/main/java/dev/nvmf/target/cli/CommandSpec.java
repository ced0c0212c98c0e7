package dev.nvmf.target.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * One command of the command line as data, declared in code by the command itself: its name, what it does, its
 * options, its positional parameters and its subcommands. {@link CommandLineParser} reads arguments against it and
 * {@link Help} prints it. Every command gets {@code -h}/{@code --help} and {@code -V}/{@code --version}.
 */
final class CommandSpec {
    /** What an option's or parameter's value is converted to; {@code FLAG}: an option without a value. */
    enum Type { FLAG, STRING, INT, PATH }

    /**
     * An option. {@code shortName} ({@code -c}) may be null; {@code longName} ({@code --config}) is the key its
     * value is found under. {@code label} names the value in help and errors ({@code FILE}); null for a flag.
     */
    record Option(String shortName, String longName, Type type, String label, String defaultValue,
                  boolean required, String description) {
        boolean takesValue() {
            return type != Type.FLAG;
        }

        /** {@code -c, --config} or {@code --dry-run}. */
        String names() {
            return shortName == null ? longName : shortName + ", " + longName;
        }
    }

    /** A positional parameter; its label ({@code FILE}) is the key its value is found under. */
    record Parameter(String label, Type type, boolean required, String description) {}

    static final Option HELP = new Option("-h", "--help", Type.FLAG, null, null, false,
            "print this help and exit");
    static final Option VERSION = new Option("-V", "--version", Type.FLAG, null, null, false,
            "print the version and exit");

    private final String path;
    private final String summary;
    private final String description;
    private final List<Option> options = new ArrayList<>();
    private final List<Parameter> parameters = new ArrayList<>();
    private final List<CommandSpec> subcommands = new ArrayList<>();
    private final List<String> exitCodes = new ArrayList<>();

    private CommandSpec(String path, String summary, String description) {
        this.path = path;
        this.summary = summary;
        this.description = description;
    }

    /**
     * A command. {@code path} is how it is typed, from the program's name on ({@code nvmf-target ana set});
     * {@code summary} is its line in its parent's list of commands.
     */
    static CommandSpec command(String path, String summary, String description) {
        return new CommandSpec(path, summary, description);
    }

    /** An option without a value. */
    CommandSpec flag(String shortName, String longName, String description) {
        return add(new Option(shortName, longName, Type.FLAG, null, null, false, description));
    }

    /** An option with a value of {@code type}; {@code defaultValue} (a string as typed, or null) when absent. */
    CommandSpec option(String shortName, String longName, Type type, String label, String defaultValue,
                       String description) {
        return add(new Option(shortName, longName, type, label, defaultValue, false, description));
    }

    /** An option the command cannot run without. */
    CommandSpec requiredOption(String shortName, String longName, Type type, String label, String description) {
        return add(new Option(shortName, longName, type, label, null, true, description));
    }

    /** The next positional parameter, required. */
    CommandSpec parameter(String label, Type type, String description) {
        parameters.add(new Parameter(label, type, true, description));
        return this;
    }

    /** The next positional parameter, which may be left out (then every later one too). */
    CommandSpec optionalParameter(String label, Type type, String description) {
        parameters.add(new Parameter(label, type, false, description));
        return this;
    }

    CommandSpec subcommand(CommandSpec sub) {
        subcommands.add(sub);
        return this;
    }

    /** A line of the help's exit code list: the code and its meaning. */
    CommandSpec exitCode(int code, String meaning) {
        exitCodes.add(code + "\t" + meaning);
        return this;
    }

    private CommandSpec add(Option option) {
        options.add(option);
        return this;
    }

    /** The name it is typed with ({@code set}). */
    String name() {
        return path.substring(path.lastIndexOf(' ') + 1);
    }

    /** The whole command as typed ({@code nvmf-target ana set}). */
    String path() {
        return path;
    }

    String summary() {
        return summary;
    }

    String description() {
        return description;
    }

    /** The command's own options, then help and version. */
    List<Option> options() {
        List<Option> all = new ArrayList<>(options);
        all.add(HELP);
        all.add(VERSION);
        return all;
    }

    List<Parameter> parameters() {
        return parameters;
    }

    List<CommandSpec> subcommands() {
        return subcommands;
    }

    List<String> exitCodes() {
        return exitCodes;
    }

    /** The option named {@code name} ({@code -c} or {@code --config}), or null. */
    Option option(String name) {
        for (Option o : options()) {
            if (name.equals(o.longName()) || name.equals(o.shortName())) {
                return o;
            }
        }
        return null;
    }

    /** The subcommand named {@code name}, or null. */
    CommandSpec subcommand(String name) {
        for (CommandSpec s : subcommands) {
            if (s.name().equals(name)) {
                return s;
            }
        }
        return null;
    }

    /** The subcommands' names as a list for a message: {@code set or show}, {@code a, b or c}. */
    String subcommandNames() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < subcommands.size(); i++) {
            if (i > 0) {
                b.append(i == subcommands.size() - 1 ? " or " : ", ");
            }
            b.append(subcommands.get(i).name());
        }
        return b.toString();
    }
}
