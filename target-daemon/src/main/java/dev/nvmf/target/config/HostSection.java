package dev.nvmf.target.config;

/** A host known to the target (nvmetcli: {@code /hosts/NQN}), referenced by subsystems' allowed_hosts. */
public record HostSection(String nqn) {}
