package dev.nvmf.verbs;

/** A failed control-path verbs or CM call: names the call, the errno and its text. */
public class VerbsException extends RuntimeException {
    private final String call;
    private final int errno;

    public VerbsException(String call, int errno, String errnoText) {
        super(call + " failed: errno " + errno + " (" + errnoText + ")");
        this.call = call;
        this.errno = errno;
    }

    public VerbsException(String call, String message) {
        super(call + " failed: " + message);
        this.call = call;
        this.errno = 0;
    }

    /** The name of the C call (or API operation) that failed, e.g. {@code ibv_reg_mr}. */
    public String call() { return call; }

    /** The errno value, or 0 when the failure carried none. */
    public int errno() { return errno; }
}
