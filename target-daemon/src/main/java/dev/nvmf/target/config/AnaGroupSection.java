package dev.nvmf.target.config;

import dev.nvmf.target.nvme.AnaState;

/**
 * One entry of {@code ports[].ana_groups}: an ANA group's state on that port (kernel configfs
 * {@code ports/N/ana_groups/G/ana_state}; nvmetcli {@code ana_groups[] {grpid, ana {state}}}).
 *
 * @param grpid the ANA group, {@link Limits#ANA_GROUP}
 * @param state what hosts connected through the port see for the group's namespaces
 */
public record AnaGroupSection(int grpid, AnaState state) {
}
