package dev.nvmf.target.core;

import dev.nvmf.target.core.controller.Controller;

/**
 * What the daemon (metrics, event logs) learns from the core without the core knowing about it. Set once with
 * {@link NvmeTarget#observer(TargetObserver)}; the default does nothing.
 *
 * <p>{@link #commandCompleted} and {@link #backendFailed} run on the I/O path (a poller or a backend thread):
 * implementations must not block and must not allocate for I/O commands (pre-resolve what they need, e.g. as a
 * namespace's {@link dev.nvmf.target.core.subsystem.NamespaceObserver}).
 */
public interface TargetObserver {
    TargetObserver NONE = new TargetObserver() { };

    /**
     * A command's completion entry is written ({@code status}: the CQE status field without the phase bit, with
     * {@code Status.MORE} set when the failure is in the controller's error log) and
     * the request is about to go back to the transport; {@code ctx} is valid only during the call. Any thread.
     */
    default void commandCompleted(CommandContext ctx, int status) { }

    /** A backend operation of an I/O command failed with {@code result} (a negative errno). Any thread. */
    default void backendFailed(CommandContext ctx, int result) { }

    /**
     * The transport closed a queue that was bound to {@code controller}; when {@code queue.qid()} is 0 the
     * controller has just ended. Control path.
     */
    default void queueClosed(NvmeQueue queue, Controller controller) { }
}
