/**
 * The daemon: what {@code nvmf-target serve} runs. {@link dev.nvmf.target.daemon.DaemonRuntime} maps the YAML
 * configuration onto the NVMe core and the RDMA transport, applies reloads live (with rollback), runs the timers,
 * and wires metrics and event logs ({@link dev.nvmf.target.daemon.DaemonObserver},
 * {@link dev.nvmf.target.daemon.TransportMetricsBridge}). {@link dev.nvmf.target.daemon.DaemonRuntimeFactory} is
 * registered in META-INF/services for the CLI's ServiceLoader.
 */
package dev.nvmf.target.daemon;
