package dev.nvmf.target.config;

import java.util.List;
import java.util.Optional;

/**
 * A whole, validated configuration with every default filled in. Immutable: a reload builds a new one and
 * {@link ConfigDiff#between} says what changed.
 */
public record TargetConfig(List<HostSection> hosts, List<PortSection> ports, List<SubsystemSection> subsystems,
                           TransportSection transport, DiscoverySection discovery, MetricsSection metrics,
                           LoggingSection logging) {
    public TargetConfig {
        hosts = List.copyOf(hosts);
        ports = List.copyOf(ports);
        subsystems = List.copyOf(subsystems);
    }

    public Optional<SubsystemSection> subsystem(String nqn) {
        return subsystems.stream().filter(s -> s.nqn().equals(nqn)).findFirst();
    }

    public Optional<PortSection> port(int id) {
        return ports.stream().filter(p -> p.id() == id).findFirst();
    }
}
