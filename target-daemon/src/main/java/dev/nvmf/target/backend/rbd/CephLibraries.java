package dev.nvmf.target.backend.rbd;

import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;

/**
 * Finds Ceph's client libraries by their sonames, once: {@code librados.so.2} (Debian: librados2) and
 * {@code librbd.so.1} (librbd1). Only the runtime packages are needed; the {@code -dev} packages are for the layout
 * test. A machine without them gets {@link #failure()} naming the package instead of a linkage error.
 */
final class CephLibraries {
    static final String LIBRADOS = "librados.so.2";
    static final String LIBRBD = "librbd.so.1";

    private static final SymbolLookup RADOS;
    private static final SymbolLookup RBD;
    private static final String FAILURE;

    static {
        SymbolLookup rados = null;
        SymbolLookup rbd = null;
        String failure = null;
        try {
            rados = SymbolLookup.libraryLookup(LIBRADOS, Arena.global());
            rbd = SymbolLookup.libraryLookup(LIBRBD, Arena.global());
        } catch (IllegalArgumentException e) {
            failure = "cannot load " + (rados == null ? LIBRADOS : LIBRBD) + " (Ceph's client libraries are not "
                    + "installed: apt-get install --no-install-recommends librbd1 librados2, or scripts/setup.sh)";
        }
        RADOS = rados;
        RBD = rbd;
        FAILURE = failure;
    }

    private CephLibraries() {
    }

    /** Why the libraries cannot be used, or null if both loaded. */
    static String failure() {
        return FAILURE;
    }

    static SymbolLookup rados() {
        require();
        return RADOS;
    }

    static SymbolLookup rbd() {
        require();
        return RBD;
    }

    private static void require() {
        if (FAILURE != null) {
            throw new IllegalStateException(FAILURE);
        }
    }
}
