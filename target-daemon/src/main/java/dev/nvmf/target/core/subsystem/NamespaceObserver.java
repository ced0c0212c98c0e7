package dev.nvmf.target.core.subsystem;

/**
 * What the daemon learns about the I/O of one namespace: the meters it resolved once, when the namespace was added,
 * so that recording a command looks nothing up. Set with {@link Namespace#observer(NamespaceObserver)}; the default
 * does nothing.
 *
 * <p>{@link #ioCompleted} and {@link #backendFailed} are called on the I/O path (a poller or a backend thread) for
 * I/O commands only: implementations must not block and must not allocate there.
 */
public interface NamespaceObserver {
    NamespaceObserver NONE = new NamespaceObserver() { };

    /**
     * An I/O command on this namespace completed.
     *
     * @param opcode       the NVM command set opcode
     * @param status       the CQE status field without the phase bit (0 = success)
     * @param latencyNanos from the capsule's arrival to the completion
     * @param bytes        the bytes the command moved (0 for commands that move no blocks)
     */
    default void ioCompleted(int opcode, int status, long latencyNanos, long bytes) { }

    /** A backend operation of an I/O command with this opcode failed with {@code result} (a negative errno). */
    default void backendFailed(int opcode, int result) { }

    /**
     * The namespace's size changed from {@code blocksBefore} to its {@link Namespace#sizeBlocks()} now, and every
     * controller was told. Called once per change by whoever revalidated first: a reload or a backend's size
     * watcher (control path), or an Identify Namespace (a poller: rare, and where the daemon may log).
     */
    default void resized(Namespace ns, long blocksBefore) { }
}
