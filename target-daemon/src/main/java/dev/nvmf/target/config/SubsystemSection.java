package dev.nvmf.target.config;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * One entry of {@code subsystems}: an NVM subsystem (nvmetcli: {@code /subsystems/NQN}).
 *
 * @param nqn          the subsystem NQN
 * @param serial       serial number reported in Identify Controller (ASCII, at most 20 characters)
 * @param model        model number reported in Identify Controller (ASCII, at most 40 characters)
 * @param firmware     firmware revision reported in Identify Controller and the firmware slot log (ASCII, at most
 *                     8 characters; kernel attr_firmware)
 * @param allowAnyHost any host may connect; otherwise only {@code allowedHosts}
 * @param allowedHosts host NQNs allowed to connect (each defined under {@code hosts})
 * @param namespaces   the namespaces, in NSID order as configured
 * @param cntlidMin    lowest controller id handed out (kernel attr_cntlid_min)
 * @param cntlidMax    highest controller id handed out (kernel attr_cntlid_max)
 * @param maxQid       I/O queues a controller of this subsystem may have (kernel attr_qid_max); at most
 *                     transport.max_io_qpairs_per_ctrlr, which is the default
 * @param version      the NVMe version reported in VS and Identify Controller VER, in the register encoding
 *                     (major &lt;&lt; 16 | minor &lt;&lt; 8 | tertiary; kernel attr_version)
 * @param ieeeOui      Identify Controller IEEE, 24 bits (kernel attr_ieee_oui)
 */
public record SubsystemSection(String nqn, String serial, String model, String firmware, boolean allowAnyHost,
                               List<String> allowedHosts, List<NamespaceSection> namespaces, int cntlidMin,
                               int cntlidMax, int maxQid, int version, int ieeeOui) {
    /** Identify Controller MN unless configured. */
    public static final String DEFAULT_MODEL = "nvmf-target";
    /** Identify Controller FR unless configured: this product's release. */
    public static final String DEFAULT_FIRMWARE = "0.1.0";

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

    /** The version as the kernel's attr_version writes it: "2.0", or "1.2.1" when the tertiary number is set. */
    public String versionText() {
        return versionText(version);
    }

    /** The IEEE OUI as the kernel's attr_ieee_oui writes it: "0x001b21". */
    public String ieeeOuiText() {
        return String.format(Locale.ROOT, "0x%06x", ieeeOui);
    }

    static String versionText(int version) {
        int major = version >>> 16;
        int minor = (version >>> 8) & 0xFF;
        int tertiary = version & 0xFF;
        return tertiary == 0 ? major + "." + minor : major + "." + minor + "." + tertiary;
    }
}
