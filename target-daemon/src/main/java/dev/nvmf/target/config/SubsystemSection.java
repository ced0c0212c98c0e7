package dev.nvmf.target.config;

import java.util.List;
import java.util.Optional;

/**
 * An NVM subsystem (nvmetcli: {@code /subsystems/NQN}).
 *
 * @param nqn          the subsystem NQN
 * @param serial       serial number reported in Identify Controller (ASCII, at most 20 characters)
 * @param model        model number reported in Identify Controller (ASCII, at most 40 characters)
 * @param allowAnyHost any host may connect; otherwise only {@code allowedHosts}
 * @param allowedHosts host NQNs allowed to connect (each defined under {@code hosts})
 * @param namespaces   the namespaces, in NSID order as configured
 */
public record SubsystemSection(String nqn, String serial, String model, boolean allowAnyHost,
                              List<String> allowedHosts, List<NamespaceSection> namespaces) {
    public SubsystemSection {
        allowedHosts = List.copyOf(allowedHosts);
        namespaces = List.copyOf(namespaces);
    }

    public Optional<NamespaceSection> namespace(long nsid) {
        return namespaces.stream().filter(n -> n.nsid() == nsid).findFirst();
    }

    /** Whether a host may connect (NVMe Base 2.0 section 3.3.1 host access; kernel nvmet_host_allowed). */
    public boolean hostAllowed(String hostNqn) {
        return allowAnyHost || allowedHosts.contains(hostNqn);
    }
}
