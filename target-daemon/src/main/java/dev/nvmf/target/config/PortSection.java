package dev.nvmf.target.config;

import java.util.List;

/**
 * One entry of {@code ports}: a listener (nvmetcli: {@code /ports/ID}), the subsystems reachable through it and
 * the referrals its discovery log lists.
 *
 * @param id                port id, unique (nvmetcli portid)
 * @param trtype            transport type; only "rdma"
 * @param adrfam            "ipv4" or "ipv6"
 * @param traddr            address to listen on (an IP literal; 0.0.0.0 or :: for every address)
 * @param trsvcid           TCP/RDMA-CM port number, 4420 by default
 * @param inCapsuleDataSize bytes of data a host may send inside a command capsule on this port
 * @param maxQueueSize      largest queue a host may create on this port (entries)
 * @param subsystems        NQNs of the subsystems this port exposes
 * @param referrals         other discovery services listed to hosts that come in on this port
 */
public record PortSection(int id, String trtype, String adrfam, String traddr, int trsvcid, int inCapsuleDataSize,
                          int maxQueueSize, List<String> subsystems, List<ReferralSection> referrals) {
    public PortSection {
        subsystems = List.copyOf(subsystems);
        referrals = List.copyOf(referrals);
    }

    /** "traddr:trsvcid" with IPv6 in brackets, for logs. */
    public String endpoint() {
        return ("ipv6".equals(adrfam) ? "[" + traddr + "]" : traddr) + ":" + trsvcid;
    }

    /**
     * Whether a listener must be re-created for {@code other} (address or queue parameters differ); subsystems and
     * referrals change without it.
     */
    public boolean listenerDiffers(PortSection other) {
        return !trtype.equals(other.trtype) || !adrfam.equals(other.adrfam) || !traddr.equals(other.traddr)
                || trsvcid != other.trsvcid || inCapsuleDataSize != other.inCapsuleDataSize
                || maxQueueSize != other.maxQueueSize;
    }
}
