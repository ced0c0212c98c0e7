package dev.nvmf.target.backend;

/** The outcome of a {@link BlockBackend} operation. Implementations must not block. */
@FunctionalInterface
public interface BackendCallback {
    /**
     * @param attachment what the caller passed with the operation (the core passes its request)
     * @param result     0 on success, or a negative errno value (-EIO, -ENOSPC, ...)
     */
    void backendDone(Object attachment, int result);
}
