/**
 * The YAML configuration: its model, its validation with file:line:column, the reload diff and the nvmetcli import.
 *
 * <p>Names: {@link dev.nvmf.target.config.TargetConfig} is one whole file; each {@code ...Section} record is one
 * section or list item of it, named after its key ({@code subsystems[]} is a {@link
 * dev.nvmf.target.config.SubsystemSection}, {@code subsystems[].namespaces[]} a {@link
 * dev.nvmf.target.config.NamespaceSection}, {@code ports[]} a {@link dev.nvmf.target.config.PortSection}, ...). The
 * core's model of the same things is {@code core.subsystem} ({@code SubsystemConfig}, {@code NamespaceConfig},
 * {@code Port}); {@code daemon.ConfigMapping} builds it from these sections. {@link dev.nvmf.target.config.Limits}
 * holds every bound a value is checked against, so that what {@code check-config} accepts the daemon accepts.
 */
package dev.nvmf.target.config;
