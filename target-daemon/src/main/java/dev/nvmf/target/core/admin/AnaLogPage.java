package dev.nvmf.target.core.admin;

import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.nvme.AnaLog;
import dev.nvmf.target.nvme.Le;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * Builds the Asymmetric Namespace Access log page (LID 0Ch; NVMe Base 2.0, 5.16.1.13) for one controller, as the
 * kernel target does (admin-cmd.c, {@code nvmet_execute_get_log_page_ana} and {@code nvmet_format_ana_group}): one
 * descriptor per ANA group in use anywhere in the target, in ascending group order, each with the group's state on
 * the controller's port, the target's change count and, unless the host asked for groups only (RGO), the NSIDs of
 * the controller's subsystem in that group, ascending (the Linux host walks them in order against its own sorted
 * namespace list: kernel host multipath.c, {@code nvme_update_ana_state}).
 */
final class AnaLogPage {
    private AnaLogPage() {
    }

    /** Writes the page into {@code p}, which is at least {@link AnaLog#maxSize} of the subsystem's NN bytes. */
    static void write(MemorySegment p, Controller c, AnaLogSource source, boolean groupsOnly) {
        long changeCount = source.anaChangeCount();
        int[] groups = source.anaGroupIds();
        List<Namespace> namespaces = c.subsystem().namespaces();
        long off = AnaLog.HEADER_SIZE;
        for (int g : groups) {
            int count = 0;
            if (!groupsOnly) {
                for (Namespace ns : namespaces) {
                    if (ns.anaGroupId() == g) {
                        Le.u32(p, off + AnaLog.DESC_SIZE + count * (long) AnaLog.NSID_SIZE, ns.nsid());
                        count++;
                    }
                }
            }
            Le.u32(p, off + AnaLog.DESC_GROUP_ID, g);
            Le.u32(p, off + AnaLog.DESC_NSID_COUNT, count);
            Le.u64(p, off + AnaLog.DESC_CHANGE_COUNT, changeCount);
            Le.u8(p, off + AnaLog.DESC_STATE, c.anaStates().state(g).code());
            off += AnaLog.DESC_SIZE + count * (long) AnaLog.NSID_SIZE;
        }
        Le.u64(p, AnaLog.HEADER_CHANGE_COUNT, changeCount);
        Le.u16(p, AnaLog.HEADER_GROUP_DESCRIPTORS, groups.length);
    }
}
