package dev.nvmf.target.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;

import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigError;
import dev.nvmf.target.config.ConfigException;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.ConfigWriter;
import dev.nvmf.target.service.ExitCodes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "check-config", mixinStandardHelpOptions = true,
        description = {"Validates a configuration file and prints the effective configuration, every default "
                + "filled in. Errors go to stderr as FILE:LINE:COLUMN: KEY.PATH: message; exit code 4."})
final class CheckConfigCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "the YAML configuration")
    Path file;

    @Option(names = "--no-device-check", description = "do not check that device and file paths exist "
            + "(for a file prepared on another machine)")
    boolean noDeviceCheck;

    @Option(names = {"-q", "--quiet"}, description = "print nothing on success")
    boolean quiet;

    @Option(names = "--diff-against", paramLabel = "RUNNING", description = "also print what a reload from "
            + "RUNNING to FILE would change")
    Path against;

    @Override
    public Integer call() {
        var out = spec.commandLine().getOut();
        var err = spec.commandLine().getErr();
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
