package dev.nvmf.target.config;

import dev.nvmf.target.core.subsystem.AnaPortStates;
import dev.nvmf.target.nvme.AnaState;

import java.util.List;
import java.util.Optional;

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
 * @param anaGroups         the ANA group states this port sets, by ascending group id; a group not listed has the
 *                          kernel target's default on the port (group 1 optimized, any other inaccessible)
 */
public record PortSection(int id, String trtype, String adrfam, String traddr, int trsvcid, int inCapsuleDataSize,
                          int maxQueueSize, List<String> subsystems, List<ReferralSection> referrals,
                          List<AnaGroupSection> anaGroups) {
    public PortSection {
        subsystems = List.copyOf(subsystems);
        referrals = List.copyOf(referrals);
        anaGroups = List.copyOf(anaGroups);
    }

    /** A port that sets no ANA group state (every group has its default). */
    public PortSection(int id, String trtype, String adrfam, String traddr, int trsvcid, int inCapsuleDataSize,
                       int maxQueueSize, List<String> subsystems, List<ReferralSection> referrals) {
        this(id, trtype, adrfam, traddr, trsvcid, inCapsuleDataSize, maxQueueSize, subsystems, referrals, List.of());
    }

    /** The state this port sets for the group, if it sets one. */
    public Optional<AnaState> configuredAnaState(int grpid) {
        return anaGroups.stream().filter(g -> g.grpid() == grpid).map(AnaGroupSection::state).findFirst();
    }

    /** The group's state on this port: the configured one, or the default. */
    public AnaState anaState(int grpid) {
        return configuredAnaState(grpid).orElse(AnaPortStates.defaultState(grpid));
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
