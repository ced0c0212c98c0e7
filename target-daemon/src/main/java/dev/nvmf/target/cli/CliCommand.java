package dev.nvmf.target.cli;

import java.io.PrintWriter;

/** A command of the command line that runs: it takes its parsed values, then does its work. */
interface CliCommand {
    /** Takes this command's options and parameters, as its {@link CommandSpec} declares them. */
    void bind(Arguments arguments);

    /** Runs the command; the process exit code (dev.nvmf.target.service.ExitCodes, docs/operations.md). */
    int call(PrintWriter out, PrintWriter err);
}
