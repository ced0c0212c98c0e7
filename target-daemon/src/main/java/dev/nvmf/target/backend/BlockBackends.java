package dev.nvmf.target.backend;

/** The factory the config layer calls: one {@link BackendSpec} in, an open {@link BlockBackend} out. */
public final class BlockBackends {
    private BlockBackends() {
    }

    /**
     * Opens the backend a spec describes.
     *
     * @throws BackendOpenException naming the path and the errno when a file or device cannot be opened, sized or
     *                              created, or is not what the spec says (a directory, a non-device)
     */
    public static BlockBackend open(BackendSpec spec) throws BackendOpenException {
        return switch (spec.kind()) {
            case RAM -> new RamBackend(spec.sizeBytes(), spec.readOnly());
            case FILE -> FileBackend.open(spec);
            case DEVICE -> BlockDeviceBackend.open(spec);
        };
    }
}
