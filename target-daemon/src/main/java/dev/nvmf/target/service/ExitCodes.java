package dev.nvmf.target.service;

/**
 * The process exit codes, documented in docs/operations.md. systemd's unit lists {@link #USAGE} and
 * {@link #CONFIG} in RestartPreventExitStatus= so a bad file does not restart in a loop.
 */
public final class ExitCodes {
    /** Success; also after an orderly stop on SIGTERM/SIGINT. */
    public static final int OK = 0;
    /** An unexpected internal error (a bug: the log has the exception). */
    public static final int SOFTWARE = 1;
    /** Bad command line (unknown option, missing value, a value that does not convert; the cli package). */
    public static final int USAGE = 2;
    /** The launcher found no JDK 22+ or no built jar (bin/nvmf-target, scripts/env.sh). */
    public static final int LAUNCHER = 3;
    /** The configuration (or the nvmetcli file to import) is invalid; nothing was started. */
    public static final int CONFIG = 4;
    /**
     * Startup failed with a valid configuration: a listener could not bind, a device could not open, the metrics
     * port is taken, the RDMA stack is unavailable, or this build has no target runtime.
     */
    public static final int UNAVAILABLE = 5;
    /** {@code selftest}: a capability the target needs failed on the device (each failure has its line). */
    public static final int SELFTEST_FAILED = 6;

    private ExitCodes() {}
}
