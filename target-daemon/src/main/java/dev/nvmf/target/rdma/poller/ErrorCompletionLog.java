package dev.nvmf.target.rdma.poller;

import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.WrId;
import dev.nvmf.verbs.WcStatus;

import java.util.function.LongSupplier;

/**
 * The log line of every error completion other than a flush, with its {@code vendor_err} (verbs.h,
 * {@code struct ibv_wc}: the provider's own error syndrome, the only detail a driver gives about why the hardware
 * failed a work request; ibv_poll_cq(3) says it is valid for errors only), rate-limited per poller: a dying link or
 * device fails every queue at once, and one line per queue is all an operator needs. A token bucket: {@link #BURST}
 * lines at once, then one per {@link #REFILL_NANOS}; lines held back are counted and the next line says how many.
 * One poller thread; allocates only when it logs (an error path).
 */
final class ErrorCompletionLog {
    private static final System.Logger LOG = System.getLogger(Poller.class.getName());
    /** Lines that may be written at once. */
    static final int BURST = 10;
    /** One more line may be written per second. */
    static final long REFILL_NANOS = 1_000_000_000L;

    private final int poller;
    private final LongSupplier clock;
    private int tokens = BURST;
    private long refilledAt;
    private long suppressed;

    ErrorCompletionLog(int poller, LongSupplier clock) {
        this.poller = poller;
        this.clock = clock;
        this.refilledAt = clock.getAsLong();
    }

    /** An error completion (not a flush) of {@code kind} ({@link WrId}) on {@code q}. */
    void log(RdmaQueue q, int kind, int status, int vendorErr) {
        long now = clock.getAsLong();
        long periods = (now - refilledAt) / REFILL_NANOS;
        if (periods > 0) {
            tokens = (int) Math.min(BURST, tokens + periods);
            refilledAt += periods * REFILL_NANOS;
        }
        if (tokens == 0) {
            suppressed++;
            return;
        }
        tokens--;
        String held = suppressed == 0 ? "" : " (" + suppressed + " more error completion(s) on poller " + poller
                + " not logged)";
        suppressed = 0;
        LOG.log(System.Logger.Level.WARNING, "queue qid {0} from {1} on {2}: {3} completed with {4} (vendor_err 0x{5});"
                + " closing the queue{6}", q.qid(), q.peer(), q.resources().device().name(), kindName(kind),
                WcStatus.name(status), Integer.toHexString(vendorErr), held);
    }

    /** Error completions held back since the last line. */
    long suppressed() { return suppressed; }

    static String kindName(int kind) {
        return switch (kind) {
            case WrId.RECV -> "RECV";
            case WrId.SHARED_RECV -> "RECV (shared receive queue)";
            case WrId.SEND -> "SEND";
            case WrId.READ -> "RDMA_READ";
            case WrId.WRITE -> "RDMA_WRITE";
            default -> "work request kind " + kind;
        };
    }
}
