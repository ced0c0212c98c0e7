package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.VerbsException;

import java.util.ArrayDeque;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;

/**
 * Scriptable faults, each one-shot unless said otherwise. Every method returns this, so a test can chain them.
 */
public final class SoftFaults {
    private final SoftFabric fabric;
    private final Map<String, Integer> controlFailures = new HashMap<>();
    private final EnumMap<CmMessage, ArrayDeque<Long>> cmPlans = new EnumMap<>(CmMessage.class);
    private final EnumSet<CmMessage> dropAlways = EnumSet.noneOf(CmMessage.class);
    private int connectErrors;
    private int connectErrno;
    private int addressErrors;
    private int routeErrors;

    SoftFaults(SoftFabric fabric) {
        this.fabric = fabric;
    }

    private interface Locked { void run(); }

    private SoftFaults locked(Locked r) {
        fabric.lock.lock();
        try {
            r.run();
            fabric.signalAll();
            fabric.pumpIfAutomatic();
            return this;
        } finally {
            fabric.lock.unlock();
        }
    }

    private static SoftQueuePair soft(QueuePair qp) {
        if (!(qp instanceof SoftQueuePair s)) throw new IllegalArgumentException("not a soft QP: " + qp);
        return s;
    }

    // ------------------------------------------------------------------------------------------ control path

    /** The next control call named {@code call} (e.g. "ibv_reg_mr", "rdma_create_qp", "rdma_accept") throws. */
    public SoftFaults failNextControl(String call, int errno) {
        return locked(() -> controlFailures.put(call, errno));
    }

    void checkControl(String call) {
        Integer e = controlFailures.remove(call);
        if (e != null) throw new VerbsException(call, e, "injected failure");
    }

    // ------------------------------------------------------------------------------------------ data path

    /** The next postSend on {@code qp} returns {@code errno} and posts nothing. */
    public SoftFaults failNextPostSend(QueuePair qp, int errno) {
        return failPostSendAt(qp, 0, errno);
    }

    /** The next postRecv on {@code qp} returns {@code errno} and posts nothing. */
    public SoftFaults failNextPostRecv(QueuePair qp, int errno) {
        return failPostRecvAt(qp, 0, errno);
    }

    /**
     * The next postSend on {@code qp} whose chain has a request at index {@code k} (0 = the first) posts the
     * {@code k} requests before it, refuses that one with {@code errno} (ENOMEM, EINVAL...) and posts nothing after
     * it, as a provider does when a request of a chain cannot be queued: bad_wr names request {@code k} and
     * {@link QueuePair#postedBeforeFailure()} returns {@code k}. The {@code k} posted requests execute and complete.
     * Shorter chains post normally and leave the fault armed.
     */
    public SoftFaults failPostSendAt(QueuePair qp, int k, int errno) {
        if (k < 0 || errno <= 0) throw new IllegalArgumentException("k " + k + ", errno " + errno);
        return locked(() -> {
            soft(qp).failSendAt = k;
            soft(qp).failSendErrno = errno;
        });
    }

    /** {@link #failPostSendAt} for the receive queue: the first {@code k} receives of the chain are posted. */
    public SoftFaults failPostRecvAt(QueuePair qp, int k, int errno) {
        if (k < 0 || errno <= 0) throw new IllegalArgumentException("k " + k + ", errno " + errno);
        return locked(() -> {
            soft(qp).failRecvAt = k;
            soft(qp).failRecvErrno = errno;
        });
    }

    /**
     * The next send WR that {@code qp} executes completes with {@code wcStatus} (always reported, even if
     * unsignaled, when it is an error); an error status puts the QP in the error state as hardware does.
     */
    public SoftFaults completeNextSendWith(QueuePair qp, int wcStatus) {
        return locked(() -> soft(qp).nextSendStatus = wcStatus);
    }

    /**
     * The next incoming SEND consumes a receive of {@code qp} that completes with {@code wcStatus}; {@code qp}
     * goes to the error state and the sender gets REM_OP_ERR.
     */
    public SoftFaults completeNextRecvWith(QueuePair qp, int wcStatus) {
        return locked(() -> soft(qp).nextRecvStatus = wcStatus);
    }

    /**
     * The completion channel fails as when its device dies (the kernel fails the read of its fd): every later
     * {@code nextEvent} returns {@code -errno} (and {@code awaitEvent} throws), including for a thread blocked in it
     * now, which wakes up.
     */
    public SoftFaults failCompletionChannel(CompletionChannel channel, int errno) {
        if (!(channel instanceof SoftCompletionChannel c)) throw new IllegalArgumentException("not a soft channel: " + channel);
        if (errno <= 0) throw new IllegalArgumentException("errno " + errno);
        return locked(() -> c.fail(errno));
    }

    /**
     * A CQ error: {@code poll} returns {@code -errno} from now on, IBV_EVENT_CQ_ERR (naming the CQ) is reported on
     * its device context, and every QP on the CQ goes to the error state with IBV_EVENT_QP_FATAL; their flushes
     * are lost, as the CQ takes nothing any more.
     */
    public SoftFaults failCompletionQueue(CompletionQueue cq, int errno) {
        if (!(cq instanceof SoftCompletionQueue c)) throw new IllegalArgumentException("not a soft CQ: " + cq);
        if (errno <= 0) throw new IllegalArgumentException("errno " + errno);
        return locked(() -> c.fail(errno));
    }

    /** Completions of {@code qp} (both queues) reach their CQs {@code nanos} later; order is kept. 0 ends it. */
    public SoftFaults delayCompletions(QueuePair qp, long nanos) {
        return locked(() -> {
            soft(qp).sendPipe.delayNanos = nanos;
            soft(qp).recvPipe.delayNanos = nanos;
        });
    }

    public SoftFaults delaySendCompletions(QueuePair qp, long nanos) {
        return locked(() -> soft(qp).sendPipe.delayNanos = nanos);
    }

    public SoftFaults delayRecvCompletions(QueuePair qp, long nanos) {
        return locked(() -> soft(qp).recvPipe.delayNanos = nanos);
    }

    /**
     * The QP vanishes as if its host died: it goes to the error state (its own WRs flush), answers nothing on
     * the network (its peer's sends end with RETRY_EXC_ERR after the retries) and its CM id falls silent (no
     * DREQ, no DREP: the peer's disconnect completes by timeout).
     */
    public SoftFaults killQueuePair(QueuePair qp) {
        return locked(() -> soft(qp).vanish());
    }

    /** A local catastrophic error on {@code qp}: IBV_EVENT_QP_FATAL and the error state (flushing). */
    public SoftFaults fatalError(QueuePair qp) {
        return locked(() -> soft(qp).enterError(true));
    }

    /** The send queue of {@code qp} enters SQE: sends flush, receives keep working; modify(RTS) recovers. */
    public SoftFaults sendQueueError(QueuePair qp) {
        return locked(() -> {
            SoftQueuePair s = soft(qp);
            if (s.state == QpState.RTS || s.state == QpState.SQD) s.enterSendQueueError();
        });
    }

    boolean sendsPostedInErrorVanish;

    /**
     * Models rxe on Linux 6.1: a send posted to a QP already in the error state is accepted but never completes
     * (no flush). The slot it took is never given back. For consumers that must not depend on marker WRs.
     */
    public SoftFaults sendsPostedInErrorVanish(boolean on) {
        return locked(() -> sendsPostedInErrorVanish = on);
    }

    boolean receivesPostedInErrorVanish;

    /**
     * Models what the lab saw on rxe (Linux 6.1): a receive posted to a QP already in the error state is accepted
     * but never completes (its flush never comes), whether the QP got there by an error completion or by
     * ibv_modify_qp. Its slot is never given back. Receives queued before the transition still flush.
     */
    public SoftFaults receivesPostedInErrorVanish(boolean on) {
        return locked(() -> receivesPostedInErrorVanish = on);
    }

    /** The device disappears (see {@link SoftFabric#removeDevice}). */
    public SoftFaults removeDevice(String name) {
        fabric.removeDevice(name);
        return this;
    }

    /** How a device dies: what it reports before it falls silent. */
    public enum DeviceDeath {
        /** Nothing at all. */
        SILENT,
        /** One IBV_EVENT_DEVICE_FATAL on every open context of the device (as mlx5 reports an internal error). */
        FATAL_EVENT,
        /** One RDMA_CM_EVENT_DEVICE_REMOVAL on every CM id on the device. */
        REMOVAL_EVENT
    }

    /**
     * The device dies (firmware crash, PCI error): after what {@code how} reports, it executes nothing and completes
     * nothing, not even flushes: completions already in a CQ can still be polled, none is added; queues moved to
     * error stay silent; no asynchronous event and no CM event for its ids arrives. Posts are accepted (0) and never
     * complete, as on hardware whose doorbell nobody answers; creating resources fails with EIO; destroying them
     * works (a consumer must tear down by destroying QPs after a bound, not by waiting for a drain). Its peers see
     * a vanished node (their sends end with RETRY_EXC_ERR). The device stays listed until {@link #removeDevice},
     * which still reports DEVICE_REMOVAL to its CM ids.
     */
    public SoftFaults killDevice(String name, DeviceDeath how) {
        return locked(() -> node(name).kill(how));
    }

    /** {@link #killDevice(String, DeviceDeath)} with {@link DeviceDeath#SILENT}. */
    public SoftFaults killDevice(String name) {
        return killDevice(name, DeviceDeath.SILENT);
    }

    /**
     * The device's link goes down (cable pulled, {@code netem loss 100%}): IBV_EVENT_PORT_ERR on port 1 of every
     * context; every packet to or from the device is lost (RC requests are retried, retry_count times one local ACK
     * timeout each, then end with RETRY_EXC_ERR; CM messages vanish). QPs stay in their state until then.
     */
    public SoftFaults linkDown(String name) {
        return locked(() -> node(name).link(false));
    }

    /** The link comes back: IBV_EVENT_PORT_ACTIVE; retries still running get through. */
    public SoftFaults linkUp(String name) {
        return locked(() -> node(name).link(true));
    }

    private DeviceNode node(String name) {
        DeviceNode n = fabric.devices.get(name);
        if (n == null) throw new IllegalArgumentException("no device " + name);
        return n;
    }

    // ------------------------------------------------------------------------------------------ CM

    /** The next CM message of this kind is lost (e.g. RTU: the passive side sees data before ESTABLISHED). */
    public SoftFaults dropNext(CmMessage kind) {
        return locked(() -> cmPlans.computeIfAbsent(kind, k -> new ArrayDeque<>()).add(-1L));
    }

    /**
     * The next CM message of this kind arrives {@code nanos} late, so events reorder as they may on a real
     * network (a delayed RTU lets receive completions come before ESTABLISHED; a delayed DREP delays the
     * initiator's DISCONNECTED).
     */
    public SoftFaults delayNext(CmMessage kind, long nanos) {
        return locked(() -> cmPlans.computeIfAbsent(kind, k -> new ArrayDeque<>()).add(Math.max(0, nanos)));
    }

    /** Every CM message of this kind is lost until {@link #clearCm()}. */
    public SoftFaults dropAll(CmMessage kind) {
        return locked(() -> dropAlways.add(kind));
    }

    public SoftFaults clearCm() {
        return locked(() -> {
            dropAlways.clear();
            cmPlans.clear();
        });
    }

    /** -1 = drop, else the delay in nanoseconds. */
    long cmDelay(CmMessage kind) {
        if (dropAlways.contains(kind)) return -1;
        ArrayDeque<Long> plan = cmPlans.get(kind);
        Long d = plan == null ? null : plan.poll();
        return d == null ? 0 : d;
    }

    /** The next connection attempt fails on the active side when the REP arrives: CONNECT_ERROR there, REJ sent. */
    public SoftFaults failNextConnect(int errno) {
        return locked(() -> {
            connectErrors++;
            connectErrno = errno;
        });
    }

    int takeConnectError() {
        if (connectErrors == 0) return 0;
        connectErrors--;
        return connectErrno;
    }

    /** The next rdma_resolve_addr ends with ADDR_ERROR. */
    public SoftFaults failNextAddressResolution() {
        return locked(() -> addressErrors++);
    }

    boolean takeAddressError() {
        if (addressErrors == 0) return false;
        addressErrors--;
        return true;
    }

    /** The next rdma_resolve_route ends with ROUTE_ERROR. */
    public SoftFaults failNextRouteResolution() {
        return locked(() -> routeErrors++);
    }

    boolean takeRouteError() {
        if (routeErrors == 0) return false;
        routeErrors--;
        return true;
    }
}
