package dev.nvmf.target.backend;

/**
 * The Linux errno values the backends report (as negative numbers) through {@link BackendCallback}, and their names.
 *
 * <p>Values are those of asm-generic/errno-base.h and errno.h, which x86_64 and aarch64 share. The core maps them to
 * NVMe status codes; the backends use:
 * <ul>
 *   <li>{@link #ERANGE}: the range lies (partly) outside the namespace's capacity, or outside the caller's buffer;</li>
 *   <li>{@link #EINVAL}: a negative length or offset, a heap segment, or an O_DIRECT alignment the device refuses;</li>
 *   <li>{@link #EROFS}: a write, write zeroes or deallocate on a read-only backend;</li>
 *   <li>{@link #EAGAIN}: every operation descriptor is in use (see {@link AsyncFdBackend}); retry later;</li>
 *   <li>{@link #ENODEV}: the backend is closed (or closing);</li>
 *   <li>{@link #EIO}: a read that met the end of the file early (the file was truncated under the backend),
 *       or an I/O error from the kernel; any other errno from the kernel is passed on as is.</li>
 *   <li>{@link #ETIMEDOUT}, {@link #ESHUTDOWN}, {@link #ENOTCONN}, {@link #ECONNREFUSED}, {@link #ECANCELED}: the RBD
 *       backend's cluster did not answer in time, blocklisted this client, or is unreachable (see
 *       {@code dev.nvmf.target.backend.rbd.RbdBackend}).</li>
 * </ul>
 */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int EINVAL = 22;
    public static final int EFBIG = 27;
    public static final int ENOTTY = 25;
    public static final int ENOSPC = 28;
    public static final int EROFS = 30;
    public static final int ERANGE = 34;
    public static final int ENAMETOOLONG = 36;
    public static final int ENOSYS = 38;
    public static final int EOPNOTSUPP = 95;
    public static final int ENOTCONN = 107;
    /** Ceph's EBLOCKLISTED: the cluster fenced this client after another broke its lock (Ceph user management). */
    public static final int ESHUTDOWN = 108;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int EDQUOT = 122;
    public static final int ECANCELED = 125;

    private Errno() {
    }

    /** "ENOENT" for 2 or -2; "errno 999" for a value not in the table. */
    public static String name(int errno) {
        int e = Math.abs(errno);
        return switch (e) {
            case 0 -> "OK";
            case EPERM -> "EPERM";
            case ENOENT -> "ENOENT";
            case EINTR -> "EINTR";
            case EIO -> "EIO";
            case ENXIO -> "ENXIO";
            case EBADF -> "EBADF";
            case EAGAIN -> "EAGAIN";
            case ENOMEM -> "ENOMEM";
            case EACCES -> "EACCES";
            case EFAULT -> "EFAULT";
            case EBUSY -> "EBUSY";
            case EEXIST -> "EEXIST";
            case ENODEV -> "ENODEV";
            case ENOTDIR -> "ENOTDIR";
            case EISDIR -> "EISDIR";
            case EINVAL -> "EINVAL";
            case ENOTTY -> "ENOTTY";
            case EFBIG -> "EFBIG";
            case ENOSPC -> "ENOSPC";
            case EROFS -> "EROFS";
            case ERANGE -> "ERANGE";
            case ENAMETOOLONG -> "ENAMETOOLONG";
            case ENOSYS -> "ENOSYS";
            case EOPNOTSUPP -> "EOPNOTSUPP";
            case ENOTCONN -> "ENOTCONN";
            case ESHUTDOWN -> "ESHUTDOWN";
            case ETIMEDOUT -> "ETIMEDOUT";
            case ECONNREFUSED -> "ECONNREFUSED";
            case EDQUOT -> "EDQUOT";
            case ECANCELED -> "ECANCELED";
            default -> "errno " + e;
        };
    }

    /** "ENOENT (No such file or directory)": the name and the C library's message, for exceptions and logs. */
    public static String describe(int errno) {
        int e = Math.abs(errno);
        String text = LibC.strerror(e);
        return text == null ? name(e) : name(e) + " (" + text + ")";
    }
}
