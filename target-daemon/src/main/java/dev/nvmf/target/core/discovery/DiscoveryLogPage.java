package dev.nvmf.target.core.discovery;

import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Referral;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.Le;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the Discovery Log Page (log 70h; NVMe-oF 1.1, 5.3; kernel: discovery.c,
 * {@code nvmet_execute_disc_get_log_page}) for one host:
 * <ol>
 *   <li>the current discovery subsystem entry (SUBTYPE 3) for the port the host is connected through;</li>
 *   <li>one NVM subsystem entry (SUBTYPE 2) per (port, subsystem) pair of the listed ports where the subsystem is
 *       exposed on the port and the host is allowed;</li>
 *   <li>one referral entry (SUBTYPE 1) per referral of the listed ports.</li>
 * </ol>
 * Which ports are listed is the caller's choice (the host's port only, or every port). A port that listens on a
 * wildcard address (0.0.0.0, ::) is listed with the local address the host reached, which a host can connect to,
 * never the wildcard (kernel discovery.c, {@code nvmet_set_disc_traddr}). ASQSZ is the admin queue depth the target
 * accepts.
 *
 * <p>The page is built whole from one snapshot under the model lock, with the generation counter of that snapshot;
 * a host reading it in pieces compares GENCTR and retries if the model changed in between.
 */
public final class DiscoveryLogPage {
    /** ASQSZ of a referral: another target's limit is unknown; 32 is the least any admin queue takes. */
    static final int REFERRAL_ASQSZ = 32;

    private DiscoveryLogPage() {
    }

    /**
     * @param currentPort     the port the host came in on (null if it was removed meanwhile)
     * @param localAddress    the local address the host reached, or null if the transport does not know it
     * @param ports           the ports whose subsystems are listed
     * @param referrals       the referrals listed
     * @param adminQueueDepth ASQSZ of this target's entries
     */
    public static byte[] build(long generation, String hostNqn, Port currentPort, InetAddress localAddress,
                               List<Port> ports, List<Subsystem> subsystems, List<Referral> referrals,
                               int adminQueueDepth) {
        List<Entry> entries = new ArrayList<>();
        if (currentPort != null) {
            entries.add(Entry.of(currentPort, localAddress, DiscoveryLog.SUBTYPE_CURRENT_DISCOVERY,
                    DiscoveryLog.DISCOVERY_NQN,
                    DiscoveryLog.EFLAGS_DUPLICATE_RETURNED_INFO | DiscoveryLog.EFLAGS_EXPLICIT_PERSISTENT_CONNECTION,
                    adminQueueDepth));
        }
        for (Port port : ports) {
            for (Subsystem s : subsystems) {
                if (!s.isRemoved() && s.isExposedOn(port.id()) && s.isHostAllowed(hostNqn)) {
                    entries.add(Entry.of(port, localAddress, DiscoveryLog.SUBTYPE_NVM, s.nqn(), 0, adminQueueDepth));
                }
            }
        }
        for (Referral r : referrals) {
            entries.add(new Entry(r.transportType(), r.addressFamily(), DiscoveryLog.SUBTYPE_REFERRAL, r.portId(),
                    r.address(), r.serviceId(), DiscoveryLog.DISCOVERY_NQN, 0, REFERRAL_ASQSZ));
        }
        byte[] page = new byte[DiscoveryLog.HEADER_SIZE + entries.size() * DiscoveryLog.ENTRY_SIZE];
        MemorySegment p = MemorySegment.ofArray(page);
        Le.u64(p, DiscoveryLog.GENCTR, generation);
        Le.u64(p, DiscoveryLog.NUMREC, entries.size());
        Le.u16(p, DiscoveryLog.RECFMT, 0);
        long off = DiscoveryLog.HEADER_SIZE;
        for (Entry e : entries) {
            e.write(p.asSlice(off, DiscoveryLog.ENTRY_SIZE));
            off += DiscoveryLog.ENTRY_SIZE;
        }
        return page;
    }

    private record Entry(int trtype, int adrfam, int subtype, int portId, String traddr, String trsvcid,
                         String subnqn, int eflags, int asqsz) {
        /** An entry of one of this target's ports: a wildcard address becomes the one the host reached. */
        static Entry of(Port port, InetAddress localAddress, int subtype, String subnqn, int eflags, int asqsz) {
            int adrfam = port.addressFamily();
            String traddr = port.address();
            if (localAddress != null && TransportAddresses.isWildcard(traddr)) {
                adrfam = TransportAddresses.addressFamily(localAddress);
                traddr = TransportAddresses.format(localAddress);
            }
            return new Entry(port.transportType(), adrfam, subtype, port.id(), traddr, port.serviceId(), subnqn,
                    eflags, asqsz);
        }

        void write(MemorySegment e) {
            Le.u8(e, DiscoveryLog.TRTYPE, trtype);
            Le.u8(e, DiscoveryLog.ADRFAM, adrfam);
            Le.u8(e, DiscoveryLog.SUBTYPE, subtype);
            // Secure channel not specified; SQ flow control disable supported (we report SQHD FFFFh on request).
            Le.u8(e, DiscoveryLog.TREQ, DiscoveryLog.TREQ_NOT_SPECIFIED | DiscoveryLog.TREQ_DISABLE_SQ_FLOW);
            Le.u16(e, DiscoveryLog.PORTID, portId);
            Le.u16(e, DiscoveryLog.CNTLID, 0xFFFF); // dynamic model
            Le.u16(e, DiscoveryLog.ASQSZ, asqsz);
            Le.u16(e, DiscoveryLog.EFLAGS, eflags);
            Le.asciiSpacePadded(e, DiscoveryLog.TRSVCID, DiscoveryLog.TRSVCID_LENGTH, trsvcid);
            Le.utf8NulPadded(e, DiscoveryLog.SUBNQN, DiscoveryLog.SUBNQN_LENGTH, subnqn);
            Le.asciiSpacePadded(e, DiscoveryLog.TRADDR, DiscoveryLog.TRADDR_LENGTH, traddr);
            if (trtype == DiscoveryLog.TRTYPE_RDMA) {
                Le.u8(e, DiscoveryLog.TSAS_RDMA_QPTYPE, DiscoveryLog.RDMA_QPTYPE_CONNECTED);
                Le.u8(e, DiscoveryLog.TSAS_RDMA_PRTYPE, DiscoveryLog.RDMA_PRTYPE_NOT_SPECIFIED);
                Le.u8(e, DiscoveryLog.TSAS_RDMA_CMS, DiscoveryLog.RDMA_CMS_RDMA_CM);
            }
        }
    }
}
