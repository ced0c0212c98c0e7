package dev.nvmf.verbs;

/** enum ibv_access_flags. */
public final class Access {
    public static final int LOCAL_WRITE = 1;
    public static final int REMOTE_WRITE = 1 << 1;
    public static final int REMOTE_READ = 1 << 2;
    public static final int REMOTE_ATOMIC = 1 << 3;
    /**
     * The region may back memory windows ({@link MemoryWindow}): a BIND_MW naming it fails (MW_BIND_ERR) without
     * this flag.
     */
    public static final int MW_BIND = 1 << 4;

    private Access() {}
}
