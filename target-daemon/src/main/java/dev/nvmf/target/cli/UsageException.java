package dev.nvmf.target.cli;

/** A command line that cannot run: the message names what is wrong; the command's usage follows it. */
final class UsageException extends Exception {
    private final transient CommandSpec command;

    UsageException(CommandSpec command, String message) {
        super(message, null, false, false);
        this.command = command;
    }

    /** The command whose arguments were wrong. */
    CommandSpec command() {
        return command;
    }
}
