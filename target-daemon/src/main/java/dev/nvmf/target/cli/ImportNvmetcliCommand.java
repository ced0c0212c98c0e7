package dev.nvmf.target.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import dev.nvmf.target.cli.CommandSpec.Type;
import dev.nvmf.target.config.ConfigError;
import dev.nvmf.target.config.ConfigException;
import dev.nvmf.target.config.NvmetcliImporter;
import dev.nvmf.target.service.ExitCodes;

/** {@code nvmf-target import-nvmetcli}: the kernel target's saved configuration as this target's YAML. */
final class ImportNvmetcliCommand implements CliCommand {
    static final CommandSpec SPEC = CommandSpec.command("nvmf-target import-nvmetcli",
                    "convert nvmetcli's config.json (the kernel target) into this target's YAML",
                    "Converts a Linux kernel target configuration saved by 'nvmetcli save' (config.json) into this "
                            + "target's YAML: hosts, ports, subsystems, namespaces, allowed hosts. What this target "
                            + "does not support is left out with a warning on stderr.")
            .parameter("FILE.json", Type.PATH, "nvmetcli's saved configuration, e.g. /etc/nvmet/config.json")
            .option("-o", "--output", Type.PATH, "FILE.yaml", null, "write here instead of stdout")
            .flag(null, "--force", "overwrite the output file if it exists");

    Path file;
    Path output;
    boolean force;

    @Override
    public void bind(Arguments arguments) {
        file = arguments.path("FILE.json");
        output = arguments.path("--output");
        force = arguments.flag("--force");
    }

    @Override
    public int call(PrintWriter out, PrintWriter err) {
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
            out.print(result.yaml());
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
