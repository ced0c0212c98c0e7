package dev.nvmf.verbs;

/** The errno values the hot path returns (Linux x86_64). */
public final class Errno {
    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int ECONNREFUSED = 111;
    public static final int ETIMEDOUT = 110;
    public static final int ECONNRESET = 104;
    public static final int ENOTCONN = 107;

    private Errno() {}
}
