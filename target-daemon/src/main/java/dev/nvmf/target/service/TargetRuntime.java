package dev.nvmf.target.service;

import java.time.Duration;
import java.util.List;

import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.nvme.AnaState;

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

    /**
     * Sets an ANA group's state on a port now, and tells the hosts connected through it ({@code nvmf-target ana set},
     * received on the control socket): until a restart, or a reload that changes that group's entry on that port.
     *
     * @return one line saying what changed
     * @throws IllegalArgumentException for a port or group the runtime does not have (the operator's mistake)
     */
    default String setAnaState(int portId, int groupId, AnaState state) {
        throw new UnsupportedOperationException("this runtime serves no ANA groups");
    }

    /** Each port's state of each ANA group in use, one line each: "port 1 group 1 optimized". */
    default List<String> anaStates() {
        throw new UnsupportedOperationException("this runtime serves no ANA groups");
    }

    /**
     * Reads the size of every namespace's medium again and tells connected hosts of each that changed (the kernel
     * target's configfs {@code revalidate_size}, core.c {@code nvmet_ns_revalidate}): the service calls it on every
     * reload, including one whose file did not change, so that {@code systemctl reload} after growing a file or a
     * block device is how an operator resizes a namespace. Runtimes without storage do nothing.
     */
    default void revalidateNamespaces() {}

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
