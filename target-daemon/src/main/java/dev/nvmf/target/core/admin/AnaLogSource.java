package dev.nvmf.target.core.admin;

/**
 * What the ANA log page needs from the whole target besides the controller that asks (implemented by
 * {@code NvmeTarget}): the ANA groups in use and the change count. Both are target-wide, as in the kernel target
 * (core.c, {@code nvmet_ana_group_enabled} and {@code nvmet_ana_chgcnt}).
 */
public interface AnaLogSource {
    /**
     * The ANA groups the page lists, ascending: group 1, every group a port configures and every group a namespace
     * of any subsystem is in.
     */
    int[] anaGroupIds();

    /** CHGCNT: counts every change of a group's state on a port and every move of a namespace to another group. */
    long anaChangeCount();
}
