package dev.nvmf.target.service;

import sun.misc.Signal;

/**
 * POSIX signals to actions, with {@code sun.misc.Signal} (module jdk.unsupported, exported: works on JDK 22-25
 * without flags; {@code jdk.internal.misc.Signal} would need --add-exports). The handler runs on a JVM thread
 * made for the signal, not in signal context, so it may do ordinary Java; ours only enqueue a request for the
 * service's control thread.
 */
public final class SignalRelay {
    private SignalRelay() {}

    /**
     * Replaces the JVM's handling of {@code name} ("HUP", "TERM", "INT"). Replacing TERM and INT means the JVM no
     * longer exits by itself on them: the service stops in order and exits 0.
     */
    public static void handle(String name, Runnable action) {
        Signal.handle(new Signal(name), signal -> action.run());
    }
}
