package dev.nvmf.target.core.discovery;

import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Referral;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.nvme.DiscoveryLog;
import dev.nvmf.target.nvme.Le;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the Discovery Log Page (log 70h; NVMe-oF 1.1, 5.3; kernel: discovery.c) for one host:
 * <ol>
 *   <li>the current discovery subsystem entry (SUBTYPE 3) for the port the host is connected through;</li>
 *   <li>one NVM subsystem entry (SUBTYPE 2) per (port, subsystem) pair where the subsystem is exposed on the port
 *       and the host is allowed;</li>
 *   <li>one referral entry (SUBTYPE 1) per configured referral.</li>
 * </ol>
 * The page is built whole from one snapshot under the model lock, with the generation counter of that snapshot;
 * a host reading it in pieces compares GENCTR and retries if the model changed in between.
 */
public final class DiscoveryLogPage {
    private DiscoveryLogPage() {
    }

    public static byte[] build(long generation, String hostNqn, Port currentPort, List<Port> ports,
                               List<Subsystem> subsystems, List<Referral> referrals) {
        List<Entry> entries = new ArrayList<>();
        if (currentPort != null) {
            entries.add(new Entry(currentPort.transportType(), currentPort.addressFamily(),
                    DiscoveryLog.SUBTYPE_CURRENT_DISCOVERY, currentPort.id(), currentPort.address(),
                    currentPort.serviceId(), DiscoveryLog.DISCOVERY_NQN,
                    DiscoveryLog.EFLAGS_DUPLICATE_RETURNED_INFO | DiscoveryLog.EFLAGS_EXPLICIT_PERSISTENT_CONNECTION));
        }
        for (Port port : ports) {
            for (Subsystem s : subsystems) {
                if (!s.isRemoved() && s.isExposedOn(port.id()) && s.isHostAllowed(hostNqn)) {
                    entries.add(new Entry(port.transportType(), port.addressFamily(), DiscoveryLog.SUBTYPE_NVM,
                            port.id(), port.address(), port.serviceId(), s.nqn(), 0));
                }
            }
        }
        for (Referral r : referrals) {
            entries.add(new Entry(r.transportType(), r.addressFamily(), DiscoveryLog.SUBTYPE_REFERRAL, r.portId(),
                    r.address(), r.serviceId(), DiscoveryLog.DISCOVERY_NQN, 0));
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
                         String subnqn, int eflags) {
        void write(MemorySegment e) {
            Le.u8(e, DiscoveryLog.TRTYPE, trtype);
            Le.u8(e, DiscoveryLog.ADRFAM, adrfam);
            Le.u8(e, DiscoveryLog.SUBTYPE, subtype);
            // Secure channel not specified; SQ flow control disable supported (we report SQHD FFFFh on request).
            Le.u8(e, DiscoveryLog.TREQ, DiscoveryLog.TREQ_NOT_SPECIFIED | DiscoveryLog.TREQ_DISABLE_SQ_FLOW);
            Le.u16(e, DiscoveryLog.PORTID, portId);
            Le.u16(e, DiscoveryLog.CNTLID, 0xFFFF); // dynamic model
            Le.u16(e, DiscoveryLog.ASQSZ, 32);
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
