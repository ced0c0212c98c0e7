package dev.nvmf.target.rdma;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The verbs downcalls one poller makes, counted on the poller's own thread: what an I/O costs in calls into the
 * provider library (and the kernel, for the completion channel and epoll), independent of how fast each call is on
 * a given machine. Single writer: plain long fields, published with opaque writes (a plain store on x86; no atomic,
 * no allocation, no contention on the I/O path); a scrape or a test reads them with opaque reads, which is enough for
 * monotonic counters. Exported per poller as {@code nvmf_rdma_verbs_calls_total{poller,call}}.
 */
public final class VerbsCalls {
    /** The calls counted, with their Prometheus label (the verb's name in rdma-core, or the system call). */
    public enum Call {
        /** ibv_poll_cq, every call (the empty ones included). */
        POLL_CQ("poll_cq"),
        /** ibv_poll_cq calls that returned no completion. */
        POLL_CQ_EMPTY("poll_cq_empty"),
        /**
         * ibv_post_send (one chain each: every RDMA READ, RDMA WRITE and response SEND a pass produced on a queue,
         * posted at the end of the pass).
         */
        POST_SEND("post_send"),
        /** ibv_post_recv (one chain each: every receive a pass freed on a queue). */
        POST_RECV("post_recv"),
        /** ibv_req_notify_cq (arming a CQ before the poller blocks). */
        REQ_NOTIFY_CQ("req_notify_cq"),
        /** ibv_get_cq_event (reading the channel after a wake-up: one call per channel the wait reported readable). */
        GET_CQ_EVENT("get_cq_event"),
        /** ibv_ack_cq_events (one per event read). */
        ACK_CQ_EVENTS("ack_cq_events"),
        /** epoll_wait on the poller's completion channels and wakeup (one per block). */
        EPOLL_WAIT("epoll_wait");

        private final String label;

        Call(String label) { this.label = label; }

        public String label() { return label; }

        static final Call[] ALL = values();
    }

    private static final VarHandle COUNTS = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] counts = new long[Call.ALL.length];

    private void add(int call, long n) {
        COUNTS.setOpaque(counts, call, (long) COUNTS.getOpaque(counts, call) + n);
    }

    /** One ibv_poll_cq that returned {@code n} (0: empty). Poller thread. */
    public void pollCq(int n) {
        add(Call.POLL_CQ.ordinal(), 1);
        if (n == 0) add(Call.POLL_CQ_EMPTY.ordinal(), 1);
    }

    /** Poller thread. */
    public void postSend() { add(Call.POST_SEND.ordinal(), 1); }

    /** Poller thread. */
    public void postRecv() { add(Call.POST_RECV.ordinal(), 1); }

    /** Poller thread. */
    public void reqNotifyCq() { add(Call.REQ_NOTIFY_CQ.ordinal(), 1); }

    /** One ibv_get_cq_event, which read an event (then acknowledged: ibv_ack_cq_events) or not. Poller thread. */
    public void getCqEvent(boolean gotEvent) {
        add(Call.GET_CQ_EVENT.ordinal(), 1);
        if (gotEvent) add(Call.ACK_CQ_EVENTS.ordinal(), 1);
    }

    /** Poller thread. */
    public void epollWait() { add(Call.EPOLL_WAIT.ordinal(), 1); }

    /** How many times {@code call} was made (any thread). */
    public long count(Call call) {
        return (long) COUNTS.getOpaque(counts, call.ordinal());
    }

    /** Every count, in {@link Call} order (any thread; tests and reports). */
    public long[] snapshot() {
        long[] out = new long[counts.length];
        for (int i = 0; i < out.length; i++) out[i] = (long) COUNTS.getOpaque(counts, i);
        return out;
    }
}
