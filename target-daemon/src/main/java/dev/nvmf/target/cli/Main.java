package dev.nvmf.target.cli;

import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;

import dev.nvmf.target.cli.CommandSpec.Type;
import dev.nvmf.target.service.ExitCodes;

/**
 * {@code nvmf-target}: the command line. bin/nvmf-target runs this with the right JDK and flags. The grammar is
 * each command's {@link CommandSpec} (declared in the command's class), read by {@link CommandLineParser}; a
 * start loads only these few classes and the one command that runs.
 */
public final class Main {
    static final CommandSpec HELP_COMMAND = CommandSpec.command("nvmf-target help",
                    "print a command's help",
                    "Prints the help of the program, or of COMMAND (and its SUBCOMMAND, as in 'help ana set').")
            .optionalParameter("COMMAND", Type.STRING, "the command")
            .optionalParameter("SUBCOMMAND", Type.STRING, "the command's subcommand");

    static final CommandSpec COMPLETION_COMMAND = CommandSpec.command("nvmf-target generate-completion",
            "print a bash completion script",
            "Prints a bash completion script for nvmf-target's commands and options; install it with: "
                    + "nvmf-target generate-completion > /etc/bash_completion.d/nvmf-target");

    static final CommandSpec SPEC = CommandSpec.command("nvmf-target", null,
                    "NVMe-over-Fabrics target serving namespaces over RDMA.")
            .subcommand(ServeCommand.SPEC)
            .subcommand(CheckConfigCommand.SPEC)
            .subcommand(DevicesCommand.SPEC)
            .subcommand(SelftestCommand.SPEC)
            .subcommand(ImportNvmetcliCommand.SPEC)
            .subcommand(AnaCommand.SPEC)
            .subcommand(COMPLETION_COMMAND)
            .subcommand(HELP_COMMAND)
            .exitCode(ExitCodes.OK, "success (also after an orderly stop on SIGTERM)")
            .exitCode(ExitCodes.SOFTWARE, "internal error (a bug; see the log)")
            .exitCode(ExitCodes.USAGE, "invalid command line")
            .exitCode(ExitCodes.LAUNCHER, "launcher: no JDK 22 or newer, or the build is missing")
            .exitCode(ExitCodes.CONFIG, "invalid configuration or nvmetcli file; nothing was started")
            .exitCode(ExitCodes.UNAVAILABLE, "startup failed: listener, device, metrics port or RDMA stack "
                    + "unavailable; ana: the daemon cannot be reached")
            .exitCode(ExitCodes.SELFTEST_FAILED, "selftest: a capability the target needs failed (one FAIL line "
                    + "each)");

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line with the given streams; returns the exit code (see docs/operations.md). */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        return execute(SPEC, null, args, out, err);
    }

    /**
     * Parses {@code args} against {@code root} and runs the command they name: {@code instance} when given (a test's
     * command with its own provider), else a new one.
     */
    static int execute(CommandSpec root, CliCommand instance, String[] args, PrintWriter out, PrintWriter err) {
        int code;
        try {
            code = dispatch(root, instance, args, out, err);
        } catch (RuntimeException | LinkageError e) {
            err.println("nvmf-target: internal error: " + e);
            e.printStackTrace(err);
            code = ExitCodes.SOFTWARE;
        }
        out.flush();
        err.flush();
        return code;
    }

    private static int dispatch(CommandSpec root, CliCommand instance, String[] args, PrintWriter out,
                                PrintWriter err) {
        CommandLineParser.Parsed parsed;
        try {
            parsed = CommandLineParser.parse(root, args);
        } catch (UsageException e) {
            return usageError(e.command(), e.getMessage(), err);
        }
        CommandSpec command = parsed.command();
        switch (parsed.request()) {
            case HELP:
                Help.print(command, out);
                return ExitCodes.OK;
            case VERSION:
                out.println("nvmf-target " + version());
                out.println("Java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")");
                return ExitCodes.OK;
            default:
                break;
        }
        if (command == HELP_COMMAND) {
            return help(root, parsed.arguments(), out, err);
        }
        if (command == COMPLETION_COMMAND) {
            Completion.print(root, out);
            return ExitCodes.OK;
        }
        if (!command.subcommands().isEmpty()) {
            // A command that only groups others (the program, ana): a usage error, with the usage.
            err.println(command.path() + ": a command is required (" + command.subcommandNames() + ")");
            Help.print(command, err);
            return ExitCodes.USAGE;
        }
        CliCommand cli = instance != null ? instance : create(command);
        cli.bind(parsed.arguments());
        return cli.call(out, err);
    }

    /** The message, the usage line and where the help is: on stderr, exit 2. */
    static int usageError(CommandSpec command, String message, PrintWriter err) {
        err.println(command.path() + ": " + message);
        Help.usage(command, err);
        err.println("Try '" + command.path() + " --help' for more information.");
        return ExitCodes.USAGE;
    }

    private static int help(CommandSpec root, Arguments arguments, PrintWriter out, PrintWriter err) {
        CommandSpec command = root;
        for (String name : new String[] {arguments.string("COMMAND"), arguments.string("SUBCOMMAND")}) {
            if (name == null) {
                break;
            }
            CommandSpec sub = command.subcommand(name);
            if (sub == null) {
                return usageError(HELP_COMMAND, "Unknown command: '" + name + "'"
                        + (command.subcommands().isEmpty() ? " (" + command.path() + " has no subcommands)"
                        : " (commands of " + command.path() + ": " + command.subcommandNames() + ")"), err);
            }
            command = sub;
        }
        Help.print(command, out);
        return ExitCodes.OK;
    }

    /** A new command for the spec the parser chose (only that command's class is loaded). */
    private static CliCommand create(CommandSpec command) {
        return switch (command.path()) {
            case "nvmf-target serve" -> new ServeCommand();
            case "nvmf-target check-config" -> new CheckConfigCommand();
            case "nvmf-target devices" -> new DevicesCommand();
            case "nvmf-target selftest" -> new SelftestCommand();
            case "nvmf-target import-nvmetcli" -> new ImportNvmetcliCommand();
            case "nvmf-target ana set" -> new AnaCommand.Set();
            case "nvmf-target ana show" -> new AnaCommand.Show();
            default -> throw new IllegalStateException("no command class for " + command.path());
        };
    }

    /** The version from the jar's Maven metadata (present in a packaged build). */
    static String version() {
        String v = Main.class.getPackage().getImplementationVersion();
        if (v != null) {
            return v;
        }
        try (InputStream in = Main.class.getResourceAsStream(
                "/META-INF/maven/dev.nvmf/target-daemon/pom.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version", "unknown");
            }
        } catch (java.io.IOException e) {
            // fall through
        }
        return "development build";
    }
}
