package dev.nvmf.target.backend.rbd;

import dev.nvmf.verbs.Errno;

import java.io.IOException;

/**
 * An RBD image could not be opened. The message names the image, the step that failed, its errno and what to check,
 * e.g. {@code "rbd:rbd/disk1: rados_connect as client.nvmf to v2:10.0.0.1:3300: ETIMEDOUT (Connection timed out)
 * after 20 s (connect_timeout): is a monitor reachable?"}. It never contains a key.
 */
public final class RbdOpenException extends IOException {
    private final String image;
    private final String step;
    private final int errno;

    RbdOpenException(String image, String step, int errno, String hint) {
        super(image + ": " + step + (errno != 0 ? ": " + Errno.describe(errno) : "")
                + (hint == null || hint.isEmpty() ? "" : (errno != 0 ? " " : ": ") + hint));
        this.image = image;
        this.step = step;
        this.errno = Math.abs(errno);
    }

    /** The image as {@link RbdSpec#describe()} names it. */
    public String image() {
        return image;
    }

    /** The librados/librbd call (or our own check) that failed, e.g. "rados_connect", "rbd_open". */
    public String step() {
        return step;
    }

    /** The errno that call returned (positive), or 0 when the refusal was ours. */
    public int errno() {
        return errno;
    }
}
