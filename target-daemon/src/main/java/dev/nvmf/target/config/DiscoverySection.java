package dev.nvmf.target.config;

/**
 * The {@code discovery} section: what the discovery service lists.
 *
 * @param allPorts false (the default): a host is shown the entries of the port it came in on, as the kernel target
 *                 does (kernel discovery.c, nvmet_execute_disc_get_log_page) and as LSP bit PLEO asks for; true:
 *                 the entries of every port that exposes a subsystem the host may reach
 */
public record DiscoverySection(boolean allPorts) {
    public static DiscoverySection defaults() {
        return new DiscoverySection(false);
    }
}
