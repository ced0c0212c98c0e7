package dev.nvmf.target.cli;

import java.io.PrintWriter;
import java.nio.file.Path;

import dev.nvmf.target.cli.CommandSpec.Type;
import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigError;
import dev.nvmf.target.config.ConfigException;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.ConfigWriter;
import dev.nvmf.target.service.ExitCodes;

/** {@code nvmf-target check-config}: validates a file and prints the effective configuration. */
final class CheckConfigCommand implements CliCommand {
    static final CommandSpec SPEC = CommandSpec.command("nvmf-target check-config",
                    "validate a configuration file and print it with every default",
                    "Validates a configuration file and prints the effective configuration, every default filled "
                            + "in. Errors go to stderr as FILE:LINE:COLUMN: KEY.PATH: message; exit code 4.")
            .parameter("FILE", Type.PATH, "the YAML configuration")
            .flag(null, "--no-device-check", "do not check that device and file paths exist (for a file prepared "
                    + "on another machine)")
            .flag("-q", "--quiet", "print nothing on success")
            .option(null, "--diff-against", Type.PATH, "RUNNING", null, "also print what a reload from RUNNING to "
                    + "FILE would change");

    Path file;
    boolean noDeviceCheck;
    boolean quiet;
    Path against;

    @Override
    public void bind(Arguments arguments) {
        file = arguments.path("FILE");
        noDeviceCheck = arguments.flag("--no-device-check");
        quiet = arguments.flag("--quiet");
        against = arguments.path("--diff-against");
    }

    @Override
    public int call(PrintWriter out, PrintWriter err) {
        ConfigLoader.Options options = noDeviceCheck ? ConfigLoader.Options.NO_DEVICE_CHECK
                : ConfigLoader.Options.DEFAULT;
        ConfigLoader.Result result;
        try {
            result = ConfigLoader.load(file, options);
        } catch (ConfigException e) {
            for (ConfigError error : e.errors()) {
                err.println(error);
            }
            err.println(file + ": invalid (" + e.errors().size() + (e.errors().size() == 1 ? " error)" : " errors)"));
            return ExitCodes.CONFIG;
        }
        for (ConfigError w : result.warnings()) {
            err.println("warning: " + w);
        }
        if (against != null) {
            try {
                ConfigLoader.Result old = ConfigLoader.load(against, ConfigLoader.Options.NO_DEVICE_CHECK);
                ConfigDiff diff = ConfigDiff.between(old.config(), result.config());
                out.println(diff.isEmpty() ? "# reload: no changes" : "# reload would apply:");
                diff.describe().forEach(line -> out.println("#   " + line));
            } catch (ConfigException e) {
                e.errors().forEach(err::println);
                return ExitCodes.CONFIG;
            }
        }
        if (!quiet) {
            out.print(ConfigWriter.toYaml(result.config()));
        }
        return ExitCodes.OK;
    }
}
