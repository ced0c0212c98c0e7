package dev.nvmf.target.service;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.PortSection;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.nvme.AnaLog;
import dev.nvmf.target.nvme.AnaState;

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
    public String setAnaState(int portId, int groupId, AnaState state) {
        PortSection p = config.port(portId).orElseThrow(() -> new IllegalArgumentException("no port " + portId));
        if (groupId < 1 || groupId > AnaLog.MAX_GROUP_ID) {
            throw new IllegalArgumentException("ANA group id must be 1.." + AnaLog.MAX_GROUP_ID + ": " + groupId);
        }
        String line = "port " + portId + " ANA group " + groupId + ": " + p.anaState(groupId) + " -> " + state
                + " (dry run: nothing changed)";
        LOG.info("dry run: ana set " + line);
        return line;
    }

    @Override
    public List<String> anaStates() {
        List<String> out = new ArrayList<>();
        for (PortSection p : config.ports()) {
            out.add("port " + p.id() + " group 1 " + p.anaState(1));
            p.anaGroups().stream().filter(g -> g.grpid() != 1)
                    .forEach(g -> out.add("port " + p.id() + " group " + g.grpid() + " " + g.state()));
        }
        return out;
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
