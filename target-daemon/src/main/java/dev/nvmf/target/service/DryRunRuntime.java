package dev.nvmf.target.service;

import java.time.Duration;
import java.util.logging.Logger;

import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.PortSection;
import dev.nvmf.target.config.TargetConfig;

/**
 * A runtime that serves nothing and logs what it would do: {@code serve --dry-run}. It lets an operator (and the
 * tests) exercise configuration loading, reload diffs, signals, sd_notify and metrics on a machine without RDMA.
 */
public final class DryRunRuntime implements TargetRuntime {
    private static final Logger LOG = Logger.getLogger(DryRunRuntime.class.getName());
    private TargetConfig config;

    @Override
    public void start(TargetConfig config) {
        this.config = config;
        for (PortSection p : config.ports()) {
            LOG.info("dry run: would listen on " + p.trtype() + " " + p.endpoint() + " (port " + p.id() + ") for "
                    + p.subsystems().size() + " subsystems");
        }
    }

    @Override
    public void apply(ConfigDiff diff, TargetConfig newConfig) {
        for (String line : diff.describe()) {
            LOG.info("dry run: apply " + line);
        }
        this.config = newConfig;
    }

    @Override
    public String status() {
        return "dry run: " + config.subsystems().size() + " subsystems, " + config.ports().size()
                + " ports, serving nothing";
    }

    @Override
    public boolean healthy() {
        return true;
    }

    @Override
    public void stop(Duration timeout) {
        LOG.info("dry run: stopped");
    }
}
