package dev.nvmf.target.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;

import dev.nvmf.target.service.ExitCodes;
import org.junit.jupiter.api.Test;

/**
 * The command line's grammar and its answers to mistakes: every usage error exits 2 with one line that names the
 * command, the option or parameter and the value, then the usage line; help and version at every level exit 0.
 */
class CommandLineTest {
    static CliTest.Run run(String... args) {
        return CliTest.run(args);
    }

    /** The usage error's first line, and that the usage and the pointer to --help follow it on stderr. */
    static String usageError(CliTest.Run r, String command) {
        assertEquals(ExitCodes.USAGE, r.code(), r.out() + r.err());
        assertEquals("", r.out());
        List<String> lines = r.err().lines().toList();
        assertTrue(lines.get(1).startsWith("Usage: " + command), r.err());
        assertEquals("Try '" + command + " --help' for more information.", lines.getLast(), r.err());
        return lines.getFirst();
    }

    @Test
    void anUnknownOptionIsNamed() {
        assertEquals("nvmf-target serve: Unknown option: '--bogus'",
                usageError(run("serve", "--config", "x.yaml", "--bogus"), "nvmf-target serve"));
        assertEquals("nvmf-target check-config: Unknown option: '--quiet-please'",
                usageError(run("check-config", "--quiet-please=yes", "f.yaml"), "nvmf-target check-config"));
        assertEquals("nvmf-target check-config: Unknown option: '-x' (in '-qx')",
                usageError(run("check-config", "-qx", "f.yaml"), "nvmf-target check-config"));
        assertEquals("nvmf-target: Unknown option: '--config'",
                usageError(run("--config", "x.yaml", "serve"), "nvmf-target"));
    }

    @Test
    void aMissingValueIsNamedWithItsLabel() {
        assertEquals("nvmf-target serve: Missing required parameter for option '--config' (FILE)",
                usageError(run("serve", "--config"), "nvmf-target serve"));
        assertEquals("nvmf-target serve: Expected parameter for option '--config' but found '--dry-run'",
                usageError(run("serve", "--config", "--dry-run"), "nvmf-target serve"));
        assertEquals("nvmf-target import-nvmetcli: Missing required parameter for option '--output' (FILE.yaml)",
                usageError(run("import-nvmetcli", "a.json", "-o"), "nvmf-target import-nvmetcli"));
    }

    @Test
    void aBadValueNamesTheOptionAndTheValue() {
        assertEquals("nvmf-target selftest: Invalid value for option '--port': '12x' is not an int",
                usageError(run("selftest", "--port", "12x"), "nvmf-target selftest"));
        assertEquals("nvmf-target selftest: Invalid value for option '--step-timeout': '1.5' is not an int",
                usageError(run("selftest", "--step-timeout=1.5"), "nvmf-target selftest"));
        assertEquals("nvmf-target serve: Invalid value for option '--stop-timeout': '30s' is not an int",
                usageError(run("serve", "-c", "x.yaml", "--stop-timeout", "30s"), "nvmf-target serve"));
        assertEquals("nvmf-target ana set: Invalid value for positional parameter at index 1 (GROUP): 'one' is "
                + "not an int", usageError(run("ana", "set", "1", "one", "optimized"), "nvmf-target ana set"));
        assertEquals("nvmf-target check-config: Invalid value for positional parameter at index 0 (FILE): "
                        + "'a\0b.yaml' is not a path (Nul character not allowed)",
                usageError(run("check-config", "a\0b.yaml"), "nvmf-target check-config"));
        assertEquals("nvmf-target check-config: Invalid value for option '--quiet': 'yes' is not a boolean (the "
                + "option takes no value; true or false)",
                usageError(run("check-config", "--quiet=yes", "f.yaml"), "nvmf-target check-config"));
    }

    @Test
    void anUnknownCommandListsTheCommands() {
        assertEquals("nvmf-target: Unknown command: 'srve' (commands: serve, check-config, devices, selftest, "
                + "import-nvmetcli, ana, generate-completion or help)", usageError(run("srve"), "nvmf-target"));
        assertEquals("nvmf-target ana: Unknown command: 'get' (commands: set or show)",
                usageError(run("ana", "get"), "nvmf-target ana"));
        assertEquals("nvmf-target help: Unknown command: 'serv' (commands of nvmf-target: serve, check-config, "
                        + "devices, selftest, import-nvmetcli, ana, generate-completion or help)",
                usageError(run("help", "serv"), "nvmf-target help"));
    }

    @Test
    void aMissingRequiredOptionOrParameterIsNamed() {
        assertEquals("nvmf-target serve: Missing required option: '--config=FILE'",
                usageError(run("serve", "--dry-run"), "nvmf-target serve"));
        assertEquals("nvmf-target check-config: Missing required parameter: 'FILE'",
                usageError(run("check-config", "--quiet"), "nvmf-target check-config"));
        assertEquals("nvmf-target ana set: Missing required parameters: 'GROUP', 'STATE'",
                usageError(run("ana", "set", "1"), "nvmf-target ana set"));
        assertEquals("nvmf-target check-config: Unmatched argument at index 2: 'second.yaml'",
                usageError(run("check-config", "first.yaml", "second.yaml"), "nvmf-target check-config"));
        assertEquals("nvmf-target serve: option '--config' (FILE) should be specified only once",
                usageError(run("serve", "-c", "a.yaml", "--config=b.yaml"), "nvmf-target serve"));
    }

    @Test
    void aGroupWithoutItsCommandPrintsTheCommandsOnStderr() {
        CliTest.Run top = run();
        assertEquals(ExitCodes.USAGE, top.code());
        assertTrue(top.err().startsWith("nvmf-target: a command is required (serve, check-config, "), top.err());
        assertTrue(top.err().contains("\nCommands:\n  serve "), top.err());
        CliTest.Run ana = run("ana");
        assertEquals(ExitCodes.USAGE, ana.code());
        assertTrue(ana.err().startsWith("nvmf-target ana: a command is required (set or show)\nUsage: nvmf-target "
                + "ana [-h] [-V] COMMAND\n"), ana.err());
    }

    @Test
    void doubleDashEndsTheOptions() {
        // After "--" an argument that looks like an option is the FILE: check-config reads a file named --quiet.
        CliTest.Run r = run("check-config", "--", "--quiet");
        assertEquals(ExitCodes.CONFIG, r.code(), r.err());
        assertTrue(r.err().contains("--quiet"), r.err());
        assertEquals("nvmf-target check-config: Unmatched argument at index 3: 'b'",
                usageError(run("check-config", "--", "a", "b"), "nvmf-target check-config"));
        // A negative number is a value, not an option: the command's own check answers it.
        CliTest.Run negative = run("selftest", "--port", "-5");
        assertEquals(ExitCodes.USAGE, negative.code());
        assertEquals("nvmf-target: --port must be 1 to 65534 (the NVMe check uses the next port), not -5\n",
                negative.err());
    }

    @Test
    void valuesMayBeAttachedAndDefaultsApply() throws Exception {
        for (String[] args : List.of(new String[] {"-oout.yaml", "in.json"}, new String[] {"-o=out.yaml", "in.json"},
                new String[] {"in.json", "--output=out.yaml", "--force"}, new String[] {"--output", "out.yaml", "in.json"})) {
            CommandLineParser.Parsed p = CommandLineParser.parse(ImportNvmetcliCommand.SPEC, args);
            ImportNvmetcliCommand c = new ImportNvmetcliCommand();
            c.bind(p.arguments());
            assertEquals(Path.of("out.yaml"), c.output, String.join(" ", args));
            assertEquals(Path.of("in.json"), c.file);
        }
        SelftestCommand selftest = new SelftestCommand();
        selftest.bind(CommandLineParser.parse(SelftestCommand.SPEC, new String[0]).arguments());
        assertEquals(14420, selftest.port);
        assertEquals(30, selftest.stepTimeoutSeconds);
        assertFalse(selftest.verbose);
        ServeCommand serve = new ServeCommand();
        serve.bind(CommandLineParser.parse(ServeCommand.SPEC, new String[] {"-c", "a.yaml", "--dry-run",
                "--control-socket", "none"}).arguments());
        assertEquals(30, serve.stopTimeoutSeconds);
        assertEquals(Path.of("a.yaml"), serve.config);
        assertTrue(serve.dryRun);
        assertEquals("none", serve.controlSocket);
        AnaCommand.Set set = new AnaCommand.Set();
        set.bind(CommandLineParser.parse(Main.SPEC, new String[] {"ana", "set", "--socket", "/tmp/s", "2", "3",
                "change"}).arguments());
        assertEquals(List.of(2, 3, "change", Path.of("/tmp/s")), List.of(set.port, set.group, set.state,
                set.socket.socket));
        CheckConfigCommand check = new CheckConfigCommand();
        check.bind(CommandLineParser.parse(CheckConfigCommand.SPEC, new String[] {"-q", "--no-device-check",
                "--diff-against", "old.yaml", "new.yaml"}).arguments());
        assertEquals(List.of(true, true, Path.of("old.yaml"), Path.of("new.yaml")),
                List.of(check.quiet, check.noDeviceCheck, check.against, check.file));
    }

    @Test
    void everyCommandHasHelpAndVersion() {
        String version = run("--version").out();
        for (CommandSpec c : all(Main.SPEC)) {
            String[] words = c.path().split(" ");
            String[] args = new String[words.length];
            System.arraycopy(words, 1, args, 0, words.length - 1);
            args[words.length - 1] = "--help";
            CliTest.Run help = run(args);
            assertEquals(0, help.code(), c.path());
            assertTrue(help.out().startsWith("Usage: " + c.path()), help.out());
            for (CommandSpec.Option o : c.options()) {
                assertTrue(help.out().contains("  " + o.names()), o.names() + " in\n" + help.out());
            }
            for (CommandSpec.Parameter p : c.parameters()) {
                assertTrue(help.out().contains("  " + p.label() + " "), p.label() + " in\n" + help.out());
            }
            args[words.length - 1] = "-V";
            assertEquals(version, run(args).out(), c.path());
            // help COMMAND [SUBCOMMAND] prints the same
            if (words.length > 1) {
                String[] viaHelp = new String[words.length];
                viaHelp[0] = "help";
                System.arraycopy(words, 1, viaHelp, 1, words.length - 1);
                assertEquals(help.out(), run(viaHelp).out(), c.path());
            }
        }
        // -h wins over a problem that comes after it, and in a group of short flags
        assertEquals(0, run("check-config", "-qh", "--bogus").code());
        CliTest.Run serveHelp = run("serve", "--help");
        assertTrue(serveHelp.out().contains("      --stop-timeout SECONDS"), serveHelp.out());
        assertTrue(serveHelp.out().contains("(default: 30)"), serveHelp.out());
        assertTrue(serveHelp.out().contains("  -c, --config FILE         the YAML configuration (required)"),
                serveHelp.out());
        for (String line : serveHelp.out().lines().toList()) {
            assertTrue(line.length() <= Help.WIDTH, line);
        }
    }

    @Test
    void anExceptionInACommandIsAnInternalErrorWithItsStack() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.execute(DevicesCommand.SPEC, new CliCommand() {
            @Override
            public void bind(Arguments arguments) {}

            @Override
            public int call(PrintWriter o, PrintWriter e) {
                throw new IllegalStateException("boom");
            }
        }, new String[0], new PrintWriter(out), new PrintWriter(err));
        assertEquals(ExitCodes.SOFTWARE, code);
        assertTrue(err.toString().startsWith("nvmf-target: internal error: java.lang.IllegalStateException: boom\n"
                + "java.lang.IllegalStateException: boom\n\tat "), err.toString());
    }

    /** The completion script, run by bash: commands, subcommands, options, and file names for path values. */
    @Test
    void theCompletionScriptCompletesInBash(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Path script = dir.resolve("nvmf-target.bash");
        java.nio.file.Files.writeString(script, run("generate-completion").out());
        java.nio.file.Files.writeString(dir.resolve("minimal.yaml"), "");
        String probe = ". " + script + "\n"
                + "t() { COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _nvmf_target;"
                + " echo \"$*|${COMPREPLY[*]}\"; }\n"
                + "t nvmf-target ''\nt nvmf-target ana s\nt nvmf-target ana set --\nt nvmf-target serve --c\n"
                + "t nvmf-target serve -c " + dir + "/min\nt nvmf-target check-config " + dir + "/min\n"
                + "t nvmf-target selftest --port ''\n";
        Process bash = new ProcessBuilder("bash", "-c", probe).redirectErrorStream(true).start();
        String output = new String(bash.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(0, bash.waitFor(), output);
        assertEquals(List.of(
                "nvmf-target |serve check-config devices selftest import-nvmetcli ana generate-completion help",
                "nvmf-target ana s|set show",
                "nvmf-target ana set --|--socket --help --version",
                "nvmf-target serve --c|--config --control-socket",
                "nvmf-target serve -c " + dir + "/min|" + dir + "/minimal.yaml",
                "nvmf-target check-config " + dir + "/min|" + dir + "/minimal.yaml",
                "nvmf-target selftest --port |"), output.lines().toList());
    }

    static List<CommandSpec> all(CommandSpec c) {
        java.util.ArrayList<CommandSpec> list = new java.util.ArrayList<>();
        list.add(c);
        for (CommandSpec s : c.subcommands()) {
            list.addAll(all(s));
        }
        return list;
    }
}
