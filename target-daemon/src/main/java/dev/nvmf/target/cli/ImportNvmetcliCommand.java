package dev.nvmf.target.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;

import dev.nvmf.target.config.ConfigError;
import dev.nvmf.target.config.ConfigException;
import dev.nvmf.target.config.NvmetcliImporter;
import dev.nvmf.target.service.ExitCodes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "import-nvmetcli", mixinStandardHelpOptions = true,
        description = {"Converts a Linux kernel target configuration saved by 'nvmetcli save' (config.json) into "
                + "this target's YAML: hosts, ports, subsystems, namespaces, allowed hosts. What this target does "
                + "not support is left out with a warning on stderr."})
final class ImportNvmetcliCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE.json", description = "nvmetcli's saved configuration, e.g. "
            + "/etc/nvmet/config.json")
    Path file;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE.yaml", description = "write here instead of stdout")
    Path output;

    @Option(names = "--force", description = "overwrite the output file if it exists")
    boolean force;

    @Override
    public Integer call() {
        var err = spec.commandLine().getErr();
        NvmetcliImporter.Result result;
        try {
            result = NvmetcliImporter.importFile(file);
        } catch (ConfigException e) {
            for (ConfigError error : e.errors()) {
                err.println(error);
            }
            return ExitCodes.CONFIG;
        }
        for (ConfigError w : result.warnings()) {
            err.println("warning: " + w);
        }
        if (output == null) {
            spec.commandLine().getOut().print(result.yaml());
            return ExitCodes.OK;
        }
        try {
            if (force) {
                Files.writeString(output, result.yaml(), StandardCharsets.UTF_8);
            } else {
                Files.writeString(output, result.yaml(), StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
            }
        } catch (java.nio.file.FileAlreadyExistsException e) {
            err.println(output + ": exists; use --force to overwrite");
            return ExitCodes.USAGE;
        } catch (IOException e) {
            err.println(output + ": cannot write: " + e.getMessage());
            return ExitCodes.SOFTWARE;
        }
        err.println("wrote " + output + "; check it with: nvmf-target check-config " + output);
        return ExitCodes.OK;
    }
}
