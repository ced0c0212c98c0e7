package dev.nvmf.verbs;

/** enum ibv_send_flags. */
public final class SendFlags {
    public static final int FENCE = 1;
    /** Generate a completion for this WR (and retire every earlier unsignaled WR on the same SQ). */
    public static final int SIGNALED = 1 << 1;
    public static final int SOLICITED = 1 << 2;
    public static final int INLINE = 1 << 3;

    private SendFlags() {}
}
