package dev.nvmf.target.service;

import java.time.Duration;

import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.TargetConfig;

/**
 * What the service needs from the running target (core + transport + backends). Implemented by the integration
 * step; {@link DryRunRuntime} stands in for it in {@code serve --dry-run} and tests. Called from the service's
 * control thread only, one call at a time.
 */
public interface TargetRuntime {
    /**
     * Opens backends, starts pollers and listeners. Returns only once every configured listener accepts
     * connections (the service then reports READY=1); throws if any cannot start, after releasing what it took.
     */
    void start(TargetConfig config) throws Exception;

    /**
     * Applies a validated reload. Order of the diff's parts: see {@link ConfigDiff}. If it throws, the runtime
     * must be left running {@code diff}'s old configuration (roll back what it applied); the service then keeps
     * the old configuration as current.
     */
    void apply(ConfigDiff diff, TargetConfig newConfig) throws Exception;

    /** One line for systemd's STATUS= and the log: e.g. "3 subsystems, 2 ports, 5 controllers". */
    String status();

    /** Whether the data plane is alive (pollers turning); gates systemd watchdog pings. */
    boolean healthy();

    /**
     * Orderly shutdown: stop accepting, disconnect hosts, drain every queue (a teardown is a drain: every posted work
     * request comes back before anything is freed, as the kernel's nvmet_rdma_free_queue runs only after ib_drain_qp,
     * kernel rdma.c), close backends. Must return within about {@code timeout}.
     */
    void stop(Duration timeout);
}
