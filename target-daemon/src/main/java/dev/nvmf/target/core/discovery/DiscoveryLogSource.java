package dev.nvmf.target.core.discovery;

import java.net.InetAddress;

/**
 * Where a discovery controller gets the discovery log page it returns (kernel discovery.c,
 * {@code nvmet_execute_disc_get_log_page}): built from one snapshot of the target model. Implemented by the target.
 */
@FunctionalInterface
public interface DiscoveryLogSource {
    /**
     * The whole discovery log page (log 70h) for a host connected through {@code portId}. Control path.
     *
     * @param localAddress  the local address the host reached (what a wildcard port is listed with), or null
     * @param portLocalOnly the host asked for its port's entries only (Get Log Page LSP bit PLEO)
     */
    byte[] discoveryLog(String hostNqn, int portId, InetAddress localAddress, boolean portLocalOnly);
}
