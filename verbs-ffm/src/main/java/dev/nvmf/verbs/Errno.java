package dev.nvmf.verbs;

/**
 * The Linux errno values the product returns on its hot paths (as negative numbers from backends, as the value of a
 * {@link VerbsException} or a provider's return code), and their names.
 *
 * <p>One class for the whole product. It lives here, in the API package of {@code verbs-ffm}, because that is the
 * lowest module: the RDMA providers (FFM and the in-process test fabric) and the storage backends of
 * {@code target-daemon} both speak errno, {@code target-daemon} depends on this module, and this module must not
 * depend on {@code target-daemon}. It is plain Java (no native call), so the provider-neutral API and the soft
 * provider can use it: the texts of {@link #describe} are the C library's (glibc's {@code strerror}) for every value
 * here, which {@code LibcTest} checks; {@code dev.nvmf.verbs.ffm.Libc#strerror} gives the text of any other value.
 *
 * <p>Values are those of Linux's {@code asm-generic/errno-base.h} and {@code asm-generic/errno.h}, which x86_64 and
 * aarch64 share; {@code NativeLayoutTest} checks every constant here against the installed {@code <errno.h>}.
 *
 * <p>What the storage backends mean by the ones they produce themselves:
 * <ul>
 *   <li>{@link #ERANGE}: the range lies (partly) outside the namespace's capacity, or outside the caller's buffer;</li>
 *   <li>{@link #EINVAL}: a negative length or offset, a null buffer, or an O_DIRECT alignment the medium refuses;</li>
 *   <li>{@link #EFAULT}: a heap segment (it has no stable address for the kernel);</li>
 *   <li>{@link #EROFS}: a write, write zeroes or deallocate on a read-only backend;</li>
 *   <li>{@link #EAGAIN}: every operation descriptor is in use; retry later;</li>
 *   <li>{@link #ENODEV}: the backend is closed (or closing);</li>
 *   <li>{@link #EIO}: a read that met the end of the file early (the file was truncated under the backend), or an
 *       I/O error from the kernel; any other errno from the kernel is passed on as is;</li>
 *   <li>{@link #ETIMEDOUT}, {@link #ESHUTDOWN}, {@link #ENOTCONN}, {@link #ECONNREFUSED}, {@link #ECANCELED}: the RBD
 *       backend's cluster did not answer in time, blocklisted this client, or is unreachable (see
 *       {@code dev.nvmf.target.backend.rbd.RbdBackend} in target-daemon).</li>
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
    public static final int ENOTTY = 25;
    public static final int EFBIG = 27;
    public static final int ENOSPC = 28;
    public static final int EROFS = 30;
    public static final int ERANGE = 34;
    public static final int ENAMETOOLONG = 36;
    public static final int ENOSYS = 38;
    public static final int EOPNOTSUPP = 95;
    public static final int EADDRINUSE = 98;
    public static final int EADDRNOTAVAIL = 99;
    public static final int ECONNRESET = 104;
    public static final int ENOTCONN = 107;
    /** Ceph's EBLOCKLISTED: the cluster fenced this client after another broke its lock (Ceph user management). */
    public static final int ESHUTDOWN = 108;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNREFUSED = 111;
    public static final int EDQUOT = 122;
    public static final int ECANCELED = 125;

    private Errno() {}

    /** "ENOENT (No such file or directory)" for 2 or -2, for exceptions and logs; "errno 999" for an unknown value. */
    public static String describe(int errno) {
        int e = Math.abs(errno);
        String text = message(e);
        return text == null ? name(e) : name(e) + " (" + text + ")";
    }

    /** The C library's text for a value in this class ("No such file or directory"), or null for another value. */
    public static String message(int errno) {
        return switch (Math.abs(errno)) {
            case EPERM -> "Operation not permitted";
            case ENOENT -> "No such file or directory";
            case EINTR -> "Interrupted system call";
            case EIO -> "Input/output error";
            case ENXIO -> "No such device or address";
            case EBADF -> "Bad file descriptor";
            case EAGAIN -> "Resource temporarily unavailable";
            case ENOMEM -> "Cannot allocate memory";
            case EACCES -> "Permission denied";
            case EFAULT -> "Bad address";
            case EBUSY -> "Device or resource busy";
            case EEXIST -> "File exists";
            case ENODEV -> "No such device";
            case ENOTDIR -> "Not a directory";
            case EISDIR -> "Is a directory";
            case EINVAL -> "Invalid argument";
            case ENOTTY -> "Inappropriate ioctl for device";
            case EFBIG -> "File too large";
            case ENOSPC -> "No space left on device";
            case EROFS -> "Read-only file system";
            case ERANGE -> "Numerical result out of range";
            case ENAMETOOLONG -> "File name too long";
            case ENOSYS -> "Function not implemented";
            case EOPNOTSUPP -> "Operation not supported";
            case EADDRINUSE -> "Address already in use";
            case EADDRNOTAVAIL -> "Cannot assign requested address";
            case ECONNRESET -> "Connection reset by peer";
            case ENOTCONN -> "Transport endpoint is not connected";
            case ESHUTDOWN -> "Cannot send after transport endpoint shutdown";
            case ETIMEDOUT -> "Connection timed out";
            case ECONNREFUSED -> "Connection refused";
            case EDQUOT -> "Disk quota exceeded";
            case ECANCELED -> "Operation canceled";
            default -> null;
        };
    }

    /** "ENOENT" for 2 or -2; "errno 999" for a value not in this table. */
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
            case EADDRINUSE -> "EADDRINUSE";
            case EADDRNOTAVAIL -> "EADDRNOTAVAIL";
            case ECONNRESET -> "ECONNRESET";
            case ENOTCONN -> "ENOTCONN";
            case ESHUTDOWN -> "ESHUTDOWN";
            case ETIMEDOUT -> "ETIMEDOUT";
            case ECONNREFUSED -> "ECONNREFUSED";
            case EDQUOT -> "EDQUOT";
            case ECANCELED -> "ECANCELED";
            default -> "errno " + e;
        };
    }
}
