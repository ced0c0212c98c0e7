package dev.nvmf.target.service;

/**
 * A start or reload that failed because of the machine, not the code: no RDMA stack, a device or file that will not
 * open, an address no RDMA device has, a locked-memory limit. Its message says what failed and what to load or check;
 * it is logged as one line without a stack trace (a source location would tell the operator nothing), while any other
 * exception is logged with its stack, since it is a bug.
 */
public final class EnvironmentException extends Exception {
    public EnvironmentException(String message, Throwable cause) {
        super(message, cause);
    }
}
