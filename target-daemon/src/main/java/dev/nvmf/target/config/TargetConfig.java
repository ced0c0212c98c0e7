package dev.nvmf.target.config;

import java.util.List;
import java.util.Optional;

/**
 * A whole, validated configuration with every default filled in. Immutable: a reload builds a new one and
 * {@link ConfigDiff#between} says what changed.
 */
public record TargetConfig(List<HostConfig> hosts, List<PortConfig> ports, List<SubsystemConfig> subsystems,
                           TransportConfig transport, MetricsConfig metrics, LoggingConfig logging) {
    public TargetConfig {
        hosts = List.copyOf(hosts);
        ports = List.copyOf(ports);
        subsystems = List.copyOf(subsystems);
    }

    public Optional<SubsystemConfig> subsystem(String nqn) {
        return subsystems.stream().filter(s -> s.nqn().equals(nqn)).findFirst();
    }

    public Optional<PortConfig> port(int id) {
        return ports.stream().filter(p -> p.id() == id).findFirst();
    }
}
