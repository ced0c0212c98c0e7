package dev.nvmf.target.core.fabrics;

import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Subsystem;

/**
 * What Connect reads and changes in the target model, and nothing more (kernel fabrics-cmd.c and core.c:
 * {@code nvmet_find_get_subsys}, {@code nvmet_alloc_ctrl}). Implemented by the target; thread-safe.
 */
public interface ConnectModel {
    /**
     * The subsystem a Connect through port {@code portId} may reach by this NQN: known, not removed and exposed on
     * that (known) port; the discovery subsystem on every known port. Null otherwise.
     */
    Subsystem subsystemOnPort(String nqn, int portId);

    /** The configured port, or null. */
    Port port(int portId);

    /**
     * A new controller of the dynamic model for an admin queue Connect; null if the subsystem's controller ids are
     * used up or the subsystem was removed meanwhile.
     */
    Controller createController(Subsystem subsystem, Port port, String hostNqn, byte[] hostId, long katoMillis);
}
