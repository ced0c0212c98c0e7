package dev.nvmf.target.backend;

import dev.nvmf.target.backend.rbd.RbdBackend;
import dev.nvmf.target.backend.rbd.RbdOpenException;

import java.nio.file.Path;

/** The factory the config layer calls: one {@link BackendSpec} in, an open {@link BlockBackend} out. */
public final class BlockBackends {
    private BlockBackends() {
    }

    /**
     * Opens the backend a spec describes.
     *
     * @throws BackendOpenException naming the path and the errno when a file or device cannot be opened, sized or
     *                              created, or is not what the spec says (a directory, a non-device); for RBD,
     *                              naming the image ({@code rbd:pool/image} as the path), the failing step and errno
     */
    public static BlockBackend open(BackendSpec spec) throws BackendOpenException {
        return switch (spec.kind()) {
            case RAM -> new RamBackend(spec.sizeBytes(), spec.readOnly());
            case FILE -> FileBackend.open(spec);
            case DEVICE -> BlockDeviceBackend.open(spec);
            case RBD -> openRbd(spec);
        };
    }

    private static BlockBackend openRbd(BackendSpec spec) throws BackendOpenException {
        try {
            return RbdBackend.open(spec.rbd(), spec.readOnly(), spec.maxInFlight());
        } catch (RbdOpenException e) {
            String prefix = e.image() + ": ";
            String message = e.getMessage().startsWith(prefix) ? e.getMessage().substring(prefix.length())
                    : e.getMessage();
            throw new BackendOpenException(Path.of(e.image()), message, e.errno(), e);
        }
    }
}
