package dev.nvmf.target.core;

import dev.nvmf.target.core.controller.Controller;
import org.agrona.concurrent.NanoClock;

import java.util.Objects;

/**
 * What every queue of one target shares, built once by {@link NvmeTarget}: the command sets commands are parsed
 * with, the clock keep-alive reads, and the observer completions are reported to. A queue reaches nothing else of
 * the target.
 */
final class QueueServices {
    /** Fabrics commands (opcode 7Fh) on any queue, and the only command set before Connect. */
    final CommandParser fabrics;
    /** Admin commands of an I/O controller. */
    final CommandParser admin;
    /** Admin commands of a discovery controller. */
    final CommandParser discovery;
    /** NVM command set I/O commands. */
    final CommandParser io;
    final NanoClock clock;
    private volatile TargetObserver observer = TargetObserver.NONE;

    QueueServices(CommandParser fabrics, CommandParser admin, CommandParser discovery, CommandParser io,
                  NanoClock clock) {
        this.fabrics = Objects.requireNonNull(fabrics, "fabrics");
        this.admin = Objects.requireNonNull(admin, "admin");
        this.discovery = Objects.requireNonNull(discovery, "discovery");
        this.io = Objects.requireNonNull(io, "io");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    /** The command set of a queue bound to {@code c} (kernel core.c, nvmet_req_init): chosen once, at Connect. */
    CommandParser commandSetOf(int qid, Controller c) {
        if (qid != 0) {
            return io;
        }
        return c.isDiscovery() ? discovery : admin;
    }

    TargetObserver observer() { return observer; }

    void observer(TargetObserver observer) {
        this.observer = Objects.requireNonNull(observer, "observer");
    }
}
