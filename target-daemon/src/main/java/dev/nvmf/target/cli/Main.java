package dev.nvmf.target.cli;

import java.io.InputStream;
import java.io.PrintWriter;
import java.util.Properties;

import dev.nvmf.target.service.ExitCodes;
import picocli.AutoComplete;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code nvmf-target}: the command line (picocli). bin/nvmf-target runs this with the right JDK and flags. */
@Command(name = "nvmf-target", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "NVMe-over-Fabrics target serving namespaces over RDMA.",
        subcommands = {ServeCommand.class, CheckConfigCommand.class, DevicesCommand.class,
                ImportNvmetcliCommand.class, AutoComplete.GenerateCompletion.class, CommandLine.HelpCommand.class},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:success (also after an orderly stop on SIGTERM)",
            "1:internal error (a bug; see the log)",
            "2:invalid command line",
            "3:launcher: no JDK 22 or newer, or the build is missing",
            "4:invalid configuration or nvmetcli file; nothing was started",
            "5:startup failed: listener, device, metrics port or RDMA stack unavailable"})
public final class Main implements java.util.concurrent.Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        // No subcommand: a usage error, with the usage.
        spec.commandLine().getErr().println("nvmf-target: a command is required");
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.USAGE;
    }

    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs the command line with the given streams; returns the exit code (see docs/operations.md). */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = commandLine();
        cl.setOut(out);
        cl.setErr(err);
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            commandLine.getErr().println("nvmf-target: internal error: " + ex);
            ex.printStackTrace(commandLine.getErr());
            return ExitCodes.SOFTWARE;
        });
        return cl;
    }

    /** The version from the jar's Maven metadata (present in a packaged build). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"nvmf-target " + version(),
                    "Java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")"};
        }

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
}
