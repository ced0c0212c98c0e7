package dev.nvmf.target.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

import dev.nvmf.target.cli.CommandSpec.Option;
import dev.nvmf.target.cli.CommandSpec.Parameter;

/**
 * A command's help, from its {@link CommandSpec}: the usage line, the description, the parameters, the options
 * with their defaults, the subcommands and (for the program) the exit codes; wrapped at {@value #WIDTH} columns.
 */
final class Help {
    static final int WIDTH = 80;
    /** Where descriptions start in the option and command lists. */
    static final int COLUMN = 28;
    /** Joins an option and its value in the usage line, so that a line never breaks between them. */
    private static final char NO_BREAK = '\u00a0';

    private Help() {}

    /** The whole help. */
    static void print(CommandSpec command, PrintWriter out) {
        usage(command, out);
        out.println();
        wrap(out, command.description(), 0, 0);
        List<Parameter> parameters = command.parameters();
        if (!parameters.isEmpty()) {
            out.println();
            out.println("Parameters:");
            for (Parameter p : parameters) {
                item(out, p.label(), p.description() + (p.required() ? "" : " (optional)"));
            }
        }
        out.println();
        out.println("Options:");
        for (Option o : command.options()) {
            String names = (o.shortName() == null ? "    " : "") + o.names()
                    + (o.takesValue() ? " " + o.label() : "");
            String text = o.description();
            if (o.required()) {
                text += " (required)";
            } else if (o.defaultValue() != null) {
                text += " (default: " + o.defaultValue() + ")";
            }
            item(out, names, text);
        }
        if (!command.subcommands().isEmpty()) {
            out.println();
            out.println("Commands:");
            for (CommandSpec s : command.subcommands()) {
                item(out, s.name(), s.summary());
            }
            out.println();
            out.println("'" + command.path() + " COMMAND --help' describes a command.");
        }
        if (!command.exitCodes().isEmpty()) {
            out.println();
            out.println("Exit codes:");
            for (String line : command.exitCodes()) {
                int tab = line.indexOf('\t');
                String code = line.substring(0, tab);
                out.print("  " + code + " ".repeat(Math.max(1, 4 - code.length())));
                wrap(out, line.substring(tab + 1), 2 + Math.max(code.length() + 1, 4), 2 + Math.max(code.length() + 1, 4));
            }
        }
        out.flush();
    }

    /** The usage line: {@code Usage: nvmf-target serve -c FILE [--dry-run] ... [-h] [-V]}. */
    static void usage(CommandSpec command, PrintWriter out) {
        List<String> words = new ArrayList<>();
        for (Option o : command.options()) {
            String name = o.shortName() != null ? o.shortName() : o.longName();
            String word = o.takesValue() ? name + NO_BREAK + o.label() : name;
            words.add(o.required() ? word : "[" + word + "]");
        }
        StringBuilder closing = new StringBuilder();
        for (Parameter p : command.parameters()) {
            if (p.required()) {
                words.add(p.label());
            } else {
                words.add("[" + p.label());
                closing.append(']');
            }
        }
        if (closing.length() > 0) {
            words.set(words.size() - 1, words.get(words.size() - 1) + closing);
        }
        if (!command.subcommands().isEmpty()) {
            words.add("COMMAND");
        }
        String head = "Usage: " + command.path();
        wrap(out, head + " " + String.join(" ", words), 0, head.length() + 1);
    }

    /** One entry of a list: the term, then its text from {@link #COLUMN} on (on the next line if it is long). */
    private static void item(PrintWriter out, String term, String text) {
        String start = "  " + term;
        if (start.length() + 2 > COLUMN) {
            out.println(start);
            out.print(" ".repeat(COLUMN));
        } else {
            out.print(start + " ".repeat(COLUMN - start.length()));
        }
        wrap(out, text, COLUMN, COLUMN);
    }

    /**
     * Prints {@code text} word-wrapped; the cursor is at column {@code first} already, continuation lines are
     * indented by {@code indent}.
     */
    private static void wrap(PrintWriter out, String text, int first, int indent) {
        int column = first;
        boolean lineStart = true;
        for (String word : text.split(" ")) {
            if (word.isEmpty()) {
                continue;
            }
            if (!lineStart && column + 1 + word.length() > WIDTH) {
                out.println();
                out.print(" ".repeat(indent));
                column = indent;
                lineStart = true;
            }
            if (!lineStart) {
                out.print(' ');
                column++;
            }
            out.print(word.replace(NO_BREAK, ' '));
            column += word.length();
            lineStart = false;
        }
        out.println();
    }
}
