package dev.nvmf.target.core.subsystem;

import dev.nvmf.target.nvme.AnaLog;
import dev.nvmf.target.nvme.AnaState;

import java.util.ArrayList;
import java.util.List;

/**
 * The ANA state of every ANA group on one port (kernel: {@code struct nvmet_port}'s {@code ana_state[]} array and
 * its {@code ana_groups/} in configfs). A host connected through the port sees these states in the ANA log page, and
 * an I/O command to a namespace gets its group's {@link AnaState#ioStatus} on this port.
 *
 * <p>A group the port does not configure has the kernel target's default (configfs.c, {@code nvmet_ports_make}):
 * group 1 optimized, every other group inaccessible. Changes come from the control path ({@code NvmeTarget}, under
 * the model lock); the I/O path reads {@link #ioStatus} lock-free from an array that each change replaces whole, so
 * the check on every command is two reads and allocates nothing.
 */
public final class AnaPortStates {
    /** Indexed by group id (0 unused); replaced, never mutated. */
    private volatile AnaState[] states = defaults();
    /** Groups this port configures (kernel: created under ports/N/ana_groups); guarded by this. */
    private final boolean[] configured = new boolean[AnaLog.MAX_GROUP_ID + 1];

    /** The default state of a group no port configures: group 1 optimized, the others inaccessible. */
    public static AnaState defaultState(int groupId) {
        return groupId == AnaLog.DEFAULT_GROUP_ID ? AnaState.OPTIMIZED : AnaState.INACCESSIBLE;
    }

    private static AnaState[] defaults() {
        AnaState[] s = new AnaState[AnaLog.MAX_GROUP_ID + 1];
        for (int g = 1; g <= AnaLog.MAX_GROUP_ID; g++) {
            s[g] = defaultState(g);
        }
        return s;
    }

    static void checkGroup(int groupId) {
        if (groupId < 1 || groupId > AnaLog.MAX_GROUP_ID) {
            throw new IllegalArgumentException("ANA group id must be 1.." + AnaLog.MAX_GROUP_ID + ": " + groupId);
        }
    }

    /** The group's state on this port. */
    public AnaState state(int groupId) {
        checkGroup(groupId);
        return states[groupId];
    }

    /**
     * What an I/O command to a namespace of this group gets on this port: 0, or an ANA status (kernel core.c,
     * {@code nvmet_check_ana_state}). I/O path: no lock, no allocation; {@code groupId} is a namespace's, always
     * 1..128.
     */
    public int ioStatus(int groupId) {
        return states[groupId].ioStatus();
    }

    /**
     * For the target only (it counts the change and tells the hosts): sets a group's state on this port (the group
     * becomes configured); returns the state before.
     */
    public synchronized AnaState set(int groupId, AnaState state) {
        checkGroup(groupId);
        configured[groupId] = true;
        return set0(groupId, java.util.Objects.requireNonNull(state, "state"));
    }

    /**
     * For the target only: the port stops configuring the group, which has its default state again; returns the
     * state before.
     */
    public synchronized AnaState reset(int groupId) {
        checkGroup(groupId);
        configured[groupId] = false;
        return set0(groupId, defaultState(groupId));
    }

    private AnaState set0(int groupId, AnaState state) {
        AnaState before = states[groupId];
        if (before != state) {
            AnaState[] copy = states.clone();
            copy[groupId] = state;
            states = copy;
        }
        return before;
    }

    /** Whether this port configures the group (otherwise it has {@link #defaultState}). */
    public synchronized boolean isConfigured(int groupId) {
        checkGroup(groupId);
        return configured[groupId];
    }

    /** The groups this port configures, ascending. */
    public synchronized List<Integer> configuredGroups() {
        List<Integer> out = new ArrayList<>();
        for (int g = 1; g <= AnaLog.MAX_GROUP_ID; g++) {
            if (configured[g]) {
                out.add(g);
            }
        }
        return out;
    }
}
