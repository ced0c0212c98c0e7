package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.PortAttributes;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.ffm.EpollWaiter;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * An in-process RDMA fabric: devices with IP addresses, an RDMA CM, and reliable-connected queue pairs with the
 * semantics the target relies on (strict RC ordering, send/receive queue depths, signaled and unsignaled work,
 * memory keys and access flags, remote invalidation, receiver-not-ready, flush on error), plus scriptable faults.
 *
 * <p>Work requests, scatter/gather lists and completions are the same native structures the ffm provider hands to
 * rdma-core: a post reads the chain from native memory, data moves between registered native memory, and
 * completions are written as {@code struct ibv_wc} into the caller's array.
 *
 * <p>Two modes on one object:
 * <ul>
 *   <li>{@link Mode#MANUAL}: nothing moves until the test calls {@link #step()}, {@link #deliverAll()} or
 *       {@link #advanceTime(long)}; the clock is virtual and starts at 0. Fully deterministic.</li>
 *   <li>{@link Mode#AUTOMATIC}: every call into the fabric first runs all work that is due, so posted work is
 *       executed synchronously and ordinary code with pollEvent/poll loops runs unchanged. Timers (RNR and
 *       transport retries, CM timeouts, TIMEWAIT) run on the monotonic clock; blocked callers wake for them.</li>
 * </ul>
 *
 * <p>All state is guarded by one lock; blocking calls wait on one condition and never spin.
 */
public final class SoftFabric implements RdmaProvider {
    /** How work moves through the fabric. */
    public enum Mode { MANUAL, AUTOMATIC }

    /** The whole address space, to read native WR chains by address (the next pointers are raw addresses). */
    static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    /** IB/RoCE CM private data sizes seen by the receiver (rdma_cm REQ: 92 - 36 bytes of CM header). */
    public static final int REQ_PRIVATE_DATA_SIZE = 56;
    public static final int REP_PRIVATE_DATA_SIZE = 196;
    public static final int REJ_PRIVATE_DATA_SIZE = 148;
    /** IB_CM_REJ_CONSUMER_DEFINED: the status of REJECTED when the peer called rdma_reject. */
    public static final int REJ_CONSUMER_DEFINED = 28;
    /** IB_CM_REJ_INVALID_SERVICE_ID: the status of REJECTED when nobody listens on the port. */
    public static final int REJ_INVALID_SERVICE_ID = 8;
    /** IB_CM_REJ_STALE_CONN: the status of REJECTED when the active side failed to complete the connection. */
    public static final int REJ_STALE_CONN = 10;

    final ReentrantLock lock = new ReentrantLock();
    final Condition changed = lock.newCondition();

    private volatile Mode mode;
    private final long origin = System.nanoTime();
    private long manualNow;
    private long autoOffset;
    private long sequence;
    private final PriorityQueue<Action> actions = new PriorityQueue<>(Action::compare);
    private boolean pumping;

    final Map<String, DeviceNode> devices = new LinkedHashMap<>();
    final SoftFaults faults = new SoftFaults(this);
    final SoftResources.Tracker resources = new SoftResources.Tracker();
    private final List<DeviceNode> removedDevices = new ArrayList<>();
    /** The first QP number of each device name (stable across a remove and return, like a reloaded driver). */
    private final Map<String, Integer> qpNumberBases = new java.util.HashMap<>();
    private int nextPort = 40000;
    private long nextGuid = 0x0002c9fffe000001L;
    private boolean closed;

    // Timing, in nanoseconds of the fabric clock.
    long ackTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(67);   // IB local ACK timeout 14: 4.096 us * 2^14
    long rnrTimerNanos = TimeUnit.MICROSECONDS.toNanos(640);    // min_rnr_timer 12: 0.64 ms
    long cmTimeoutNanos = TimeUnit.SECONDS.toNanos(3);          // what the Linux host uses for the CM
    long timewaitNanos = TimeUnit.MILLISECONDS.toNanos(1);
    boolean acceptLeavesRtr;
    boolean enforceReadDepth;
    int readDepthViolations;
    /** Automatic mode: how long a posted WR takes to start when its send queue was idle (the wire). */
    long wireLatencyNanos = TimeUnit.MILLISECONDS.toNanos(1);
    private final List<Action> wireDeferred = new ArrayList<>();
    private Thread ticker;

    public SoftFabric(Mode mode) {
        this.mode = mode;
    }

    /**
     * An automatic fabric for code that creates its provider reflectively (e.g. {@code VerbsScenario.provider("soft")}):
     * devices come from the system property {@code dev.nvmf.soft.devices} ("soft0=10.77.0.1,soft1=10.77.0.2"),
     * by default exactly those two (the lab's addresses).
     */
    public SoftFabric() {
        this(Mode.AUTOMATIC);
        String spec = System.getProperty("dev.nvmf.soft.devices", "soft0=10.77.0.1,soft1=10.77.0.2");
        for (String d : spec.split(",")) {
            String[] kv = d.trim().split("=");
            if (kv.length == 2) addDevice(kv[0].trim(), kv[1].trim());
        }
    }

    /** A fabric where nothing moves until the test steps it. */
    public static SoftFabric manual() { return new SoftFabric(Mode.MANUAL); }

    /** A fabric that executes posted work promptly, for code written against the API with poll loops. */
    public static SoftFabric automatic() { return new SoftFabric(Mode.AUTOMATIC); }

    public Mode mode() { return mode; }

    /** Switches mode (e.g. set up a connection automatically, then step the data path by hand). */
    public void mode(Mode mode) {
        lock.lock();
        try {
            if (this.mode == Mode.AUTOMATIC && mode == Mode.MANUAL) manualNow = nowLocked();
            if (this.mode == Mode.MANUAL && mode == Mode.AUTOMATIC) autoOffset = manualNow - (System.nanoTime() - origin);
            this.mode = mode;
            pumpIfAutomatic();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- configuration

    /**
     * Realistic attributes of a ConnectX-class device (max_qp_wr 16384, max_sge 32, rd atoms 128, MEM_MGT_EXTENSIONS,
     * type-2B memory windows, SRQs of up to 32767 receives of 31 entries). A device added with attributes that lack
     * both type-2 window flags refuses {@code ibv_alloc_mw} with EOPNOTSUPP, as rdma-core's providers without windows
     * do.
     */
    public static DeviceAttributes defaultAttributes() {
        return new DeviceAttributes(131072, 16384, 32, 16777216, 4194303, 16777216, 0xffffffffffffffffL,
                128, 128, DeviceAttributes.IBV_DEVICE_MEM_MGT_EXTENSIONS | DeviceAttributes.IBV_DEVICE_MEM_WINDOW
                        | DeviceAttributes.IBV_DEVICE_MEM_WINDOW_TYPE_2B, 1, 8388608, 32767, 31);
    }

    /** The default attributes without memory-management extensions (no SEND_WITH_INV): tests the fallback. */
    public static DeviceAttributes attributesWithoutMemoryManagementExtensions() {
        DeviceAttributes a = defaultAttributes();
        return new DeviceAttributes(a.maxQp(), a.maxQpWr(), a.maxSge(), a.maxCq(), a.maxCqe(), a.maxMr(),
                a.maxMrSize(), a.maxQpRdAtom(), a.maxQpInitRdAtom(),
                a.deviceCapFlags() & ~DeviceAttributes.IBV_DEVICE_MEM_MGT_EXTENSIONS, a.physPortCnt(), a.maxSrq(),
                a.maxSrqWr(), a.maxSrqSge());
    }

    /** Adds a device with default attributes and one IPv4/IPv6 address. */
    public SoftDevice addDevice(String name, String ipAddress) {
        return addDevice(name, ipAddress, defaultAttributes());
    }

    /** Adds a device; returns the context the CM hands out for it ({@code CmId.device()} returns this object). */
    public SoftDevice addDevice(String name, String ipAddress, DeviceAttributes attributes) {
        InetAddress ip;
        try {
            ip = InetAddress.getByName(ipAddress);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address: " + ipAddress, e);
        }
        return addDevice(name, ip, attributes, -1);
    }

    private SoftDevice addDevice(String name, InetAddress ip, DeviceAttributes attributes, long guid) {
        lock.lock();
        try {
            if (devices.containsKey(name)) throw new IllegalArgumentException("device exists: " + name);
            for (DeviceNode d : devices.values()) {
                if (d.ip.equals(ip)) throw new IllegalArgumentException("address in use by " + d.name + ": " + ip.getHostAddress());
            }
            int qpBase = qpNumberBases.computeIfAbsent(name, n -> 0x11 + (qpNumberBases.size() << 16));
            DeviceNode node = new DeviceNode(this, name, ip, attributes, guid >= 0 ? guid : nextGuid++, qpBase);
            devices.put(name, node);
            signalAll();
            pumpIfAutomatic();
            return node.cmContext;
        } finally {
            lock.unlock();
        }
    }

    /** The device's CM-owned context (the object {@code CmId.device()} returns), or null. */
    public SoftDevice device(String name) {
        lock.lock();
        try {
            DeviceNode n = devices.get(name);
            return n == null ? null : n.cmContext;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The device disappears (hot unplug, driver unbind): every CM id on it gets DEVICE_REMOVAL, every QP on it
     * goes to the error state (its outstanding work is flushed), every context gets IBV_EVENT_DEVICE_FATAL, and
     * peers' traffic to it is lost.
     */
    public void removeDevice(String name) {
        lock.lock();
        try {
            DeviceNode node = devices.remove(name);
            if (node == null) throw new IllegalArgumentException("no device " + name);
            removedDevices.add(node);
            node.remove();
            signalAll();
            pumpIfAutomatic();
        } finally {
            lock.unlock();
        }
    }

    /** The latest removal of device {@code name} (under the lock). */
    private DeviceNode lastRemoved(String name) {
        DeviceNode old = null;
        for (DeviceNode d : removedDevices) {
            if (d.name.equals(name)) old = d;
        }
        if (old == null) throw new IllegalArgumentException("no removed device " + name);
        return old;
    }

    /** Whether librdmacm closed the CM context of removed device {@code name} (its latest removal). */
    public boolean cmContextClosed(String name) {
        lock.lock();
        try {
            return lastRemoved(name).cmContext.closedByLibrary;
        } finally {
            lock.unlock();
        }
    }

    /**
     * QP numbers are per device, as on hardware: each device counts from its own base (distinct bases by default, so
     * numbers happen to be unique across the fabric). This makes {@code device}'s next QP number {@code qpNum}
     * (then counting up, skipping numbers in use on the device): give two devices the same number and a consumer
     * that keys asynchronous events or completions by QP number alone, without the device, mixes them up.
     */
    public SoftFabric nextQpNumber(String device, int qpNum) {
        if (qpNum <= 0 || qpNum > 0xffffff) throw new IllegalArgumentException("QP numbers are 24 bits, not 0: " + qpNum);
        lock.lock();
        try {
            DeviceNode node = devices.get(device);
            if (node == null) throw new IllegalArgumentException("no device " + device);
            node.nextQpNum = qpNum;
            return this;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The device removed by {@link #removeDevice} comes back (driver reload, PCI rescan, {@code rdma link add}): a
     * new device with the same name, address, attributes and GUID, and new objects: its CM context is not the old
     * one, it has no resources, and its QP numbers start again from where the old device's started. Listeners bound
     * to its address can be created once the old ones are destroyed; a wildcard listener reaches it at once.
     *
     * @return the new device's CM context
     */
    public SoftDevice returnDevice(String name) {
        lock.lock();
        try {
            DeviceNode old = lastRemoved(name);
            return addDevice(name, old.ip, old.attributes, old.guid);
        } finally {
            lock.unlock();
        }
    }

    /** Transport retry interval (local ACK timeout); a send to an unreachable peer fails after retry_count + 1 of these. */
    public SoftFabric ackTimeout(Duration d) { ackTimeoutNanos = d.toNanos(); return this; }

    /** Receiver-not-ready NAK timer: the wait between RNR retries. */
    public SoftFabric rnrTimer(Duration d) { rnrTimerNanos = d.toNanos(); return this; }

    /** How long the CM waits for a REP/REJ (after REQ), an RTU (after REP) or a DREP (after DREQ). */
    public SoftFabric cmTimeout(Duration d) { cmTimeoutNanos = d.toNanos(); return this; }

    /** The TIMEWAIT period after a disconnect, before TIMEWAIT_EXIT. */
    public SoftFabric timewait(Duration d) { timewaitNanos = d.toNanos(); return this; }

    /**
     * Model a provider whose accept leaves the passive QP in RTR until the RTU arrives or the consumer calls
     * rdma_notify (thread "posting send requests in RTR"): sends posted before that fail with EINVAL. Default false: accept moves the
     * QP to RTS, as librdmacm and the kernel CM do.
     */
    public SoftFabric acceptLeavesRtr(boolean v) { acceptLeavesRtr = v; return this; }

    /**
     * Enforce the negotiated RDMA READ depth (default false: violations are only counted). A QP may have as many
     * READs outstanding (posted and not yet completed) as the smaller of the initiator depth it connected or
     * accepted with and the responder resources its peer offered; with enforcement on, the READ that goes beyond
     * is answered by the responder with a NAK "invalid request", as IB requires: it completes with
     * REM_INV_REQ_ERR and both QPs go to the error state. Stricter than a real requester, which holds READs beyond
     * its own max_rd_atomic back (stalling the send queue behind them): here the consumer's own READ limit is what
     * is tested, so a target that exceeds it fails instead of slowing down.
     */
    public SoftFabric enforceReadDepth(boolean v) { enforceReadDepth = v; return this; }

    /** READs posted beyond their QP's READ depth on this fabric, enforced or not. */
    public int readDepthViolations() {
        lock.lock();
        try {
            return readDepthViolations;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Automatic mode only: the time from posting to an idle send queue until its first WR executes (default 1 ms).
     * A caller that blocks in the fabric (awaitEvent, pollEvent, pollAsyncEvent with a timeout) lets that time pass
     * at once, so a consumer that polls, arms its CQ, polls again and waits gets its completion through the
     * channel, as on a real wire. 0 = execute inside the post call.
     */
    public SoftFabric wireLatency(Duration d) { wireLatencyNanos = d.toNanos(); return this; }

    /** Fault injection. */
    public SoftFaults faults() { return faults; }

    /** Live objects (like {@code rdma resource show}), to assert nothing leaked after teardown. */
    public SoftResources resources() {
        lock.lock();
        try {
            return resources.snapshot();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- RdmaProvider

    @Override
    public String name() { return "soft"; }

    /**
     * The devices on the fabric. Like {@code rdma_get_devices} in librdmacm, the listing also rescans: the CM context
     * of a removed device is closed once no CM id uses it ({@link SoftDevice#closedByLibrary}).
     */
    @Override
    public List<DeviceInfo> listDevices() {
        lock.lock();
        try {
            for (DeviceNode d : removedDevices) d.rescannedAfterRemoval();
            List<DeviceInfo> out = new ArrayList<>();
            for (DeviceNode d : devices.values()) {
                out.add(new DeviceInfo(d.name, d.guid, d.attributes, List.of(
                        new PortAttributes(1, 4, 5, 3, 2, List.of("fe80::" + Long.toHexString(d.guid & 0xffff),
                                "::ffff:" + d.ip.getHostAddress())))));
            }
            return out;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public SoftDevice openDevice(String name) {
        lock.lock();
        try {
            faults.checkControl("ibv_open_device");
            DeviceNode d = devices.get(name);
            if (d == null) throw new VerbsException("ibv_open_device", Errno.ENODEV, "No such device: " + name);
            SoftDevice ctx = new SoftDevice(d, false);
            resources.add(SoftResources.Kind.CONTEXT, ctx, name);
            return ctx;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public CmEventChannel createEventChannel() {
        lock.lock();
        try {
            faults.checkControl("rdma_create_event_channel");
            SoftCmEventChannel ch = new SoftCmEventChannel(this);
            resources.add(SoftResources.Kind.EVENT_CHANNEL, ch, "event channel");
            return ch;
        } finally {
            lock.unlock();
        }
    }

    /**
     * An epoll waiter ({@code dev.nvmf.verbs.ffm.EpollWaiter}): every soft channel and device keeps a real eventfd
     * readable while it has events, so the same waiter serves both providers. In automatic mode the fabric's own
     * thread runs timers and wire latency, so a thread blocked in the waiter sees them without calling in.
     */
    @Override
    public EventWaiter createEventWaiter() {
        return new EpollWaiter();
    }

    /** The eventfds soft channels created for epoll waiters, closed with the fabric. */
    final List<Readiness> readinessFds = new ArrayList<>();

    @Override
    public void close() {
        lock.lock();
        try {
            closed = true;
            actions.clear();
            for (Readiness r : new ArrayList<>(readinessFds)) r.close();
            signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Automatic mode: runs due work when no caller is inside the fabric (timers, wire latency). */
    private void ensureTicker() {
        if (ticker != null || closed || mode != Mode.AUTOMATIC) return;
        ticker = Thread.ofPlatform().daemon().name("soft-fabric").unstarted(this::tick);
        ticker.start();
    }

    private void tick() {
        lock.lock();
        try {
            while (!closed) {
                long wait = TimeUnit.SECONDS.toNanos(1);
                if (mode == Mode.AUTOMATIC) {
                    if (pump() > 0) signalAll();
                    Action next = actions.peek();
                    if (next != null) wait = Math.min(wait, Math.max(1000, next.due - nowLocked()));
                }
                try {
                    changed.awaitNanos(wait);
                } catch (InterruptedException e) {
                    return;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- stepping

    /** Runs the next piece of work that is due now (one WR, one CM message, one timer). */
    public boolean step() {
        lock.lock();
        try {
            boolean ran = runNext(nowLocked());
            if (ran) signalAll();
            return ran;
        } finally {
            lock.unlock();
        }
    }

    /** Runs everything due now, including what that work schedules for now; returns how many steps ran. */
    public int deliverAll() {
        lock.lock();
        try {
            int n = 0;
            long now = nowLocked();
            while (runNext(now)) n++;
            if (n > 0) signalAll();
            return n;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Moves the clock forward by {@code nanos}, running every piece of work that falls due on the way in time
     * order (so timers fire at their deadline). In automatic mode this skews the fabric's clock forward.
     */
    public int advanceTime(long nanos) {
        if (nanos < 0) throw new IllegalArgumentException("negative time");
        lock.lock();
        try {
            int n = 0;
            if (mode == Mode.MANUAL) {
                long target = manualNow + nanos;
                while (runNext(target)) n++;
                manualNow = target;
            } else {
                autoOffset += nanos;
                n = pump();
            }
            signalAll();
            return n;
        } finally {
            lock.unlock();
        }
    }

    public int advanceTime(Duration d) { return advanceTime(d.toNanos()); }

    /** The fabric clock in nanoseconds (virtual in manual mode). */
    public long nanoTime() {
        lock.lock();
        try {
            return nowLocked();
        } finally {
            lock.unlock();
        }
    }

    /** Work scheduled but not yet run (including future timers). */
    public int pendingWork() {
        lock.lock();
        try {
            return actions.size();
        } finally {
            lock.unlock();
        }
    }

    // ---------------------------------------------------------------- internals

    long nowLocked() {
        return mode == Mode.MANUAL ? manualNow : System.nanoTime() - origin + autoOffset;
    }

    boolean isAutomatic() { return mode == Mode.AUTOMATIC; }

    int allocatePort() {
        if (nextPort > 60999) nextPort = 40000;
        return nextPort++;
    }

    boolean isClosed() { return closed; }

    private final java.util.ArrayDeque<Cqe> cqePool = new java.util.ArrayDeque<>();

    Cqe obtainCqe() {
        Cqe c = cqePool.poll();
        return c != null ? c : new Cqe();
    }

    void recycle(Cqe c) {
        c.qp = null;
        cqePool.add(c);
    }

    final List<SoftCmId> boundIds = new ArrayList<>();

    /** The listener for a REQ to {@code node}'s address and {@code port}: an exact bind wins over a wildcard. */
    SoftCmId findListener(DeviceNode node, int port) {
        SoftCmId wild = null;
        for (SoftCmId id : boundIds) {
            if (!id.listening() || id.local().getPort() != port) continue;
            if (id.node == node) return id;
            if (id.wildcard()) wild = id;
        }
        return wild;
    }

    DeviceNode nodeByAddress(InetAddress ip) {
        for (DeviceNode d : devices.values()) {
            if (d.ip.equals(ip)) return d;
        }
        return null;
    }

    /** Schedules data-path work that crosses the wire (see {@link #wireLatency}). */
    void scheduleWire(Action a) {
        long now = nowLocked();
        if (mode != Mode.AUTOMATIC || wireLatencyNanos <= 0) {
            schedule(a, now);
            return;
        }
        if (a.scheduled) return;
        schedule(a, now + wireLatencyNanos);
        a.wire = true;
        wireDeferred.add(a);
    }

    /** A caller is about to block: wire latency elapses now. */
    private void expediteWire() {
        if (wireDeferred.isEmpty()) return;
        long now = nowLocked();
        for (Action a : wireDeferred) {
            if (a.scheduled && a.wire) schedule(a, now);
        }
        wireDeferred.clear();
    }

    void schedule(Action a, long due) {
        a.wire = false;
        if (mode == Mode.AUTOMATIC && ticker == null) ensureTicker();
        if (a.scheduled) {
            if (a.due <= due) return;
            actions.remove(a);
        }
        a.due = due;
        a.seq = sequence++;
        a.scheduled = true;
        actions.add(a);
        // A waiter that computed its wake-up from an older head must recompute it.
        if (actions.peek() == a) changed.signalAll();
    }

    void scheduleIn(Action a, long delayNanos) { schedule(a, nowLocked() + Math.max(0, delayNanos)); }

    Action scheduleIn(long delayNanos, Runnable r) {
        Action a = Action.of(r);
        scheduleIn(a, delayNanos);
        return a;
    }

    void cancel(Action a) {
        if (a != null && a.scheduled) {
            actions.remove(a);
            a.scheduled = false;
        }
    }

    private boolean runNext(long limit) {
        Action a = actions.peek();
        if (a == null || a.due > limit) return false;
        actions.poll();
        a.scheduled = false;
        if (mode == Mode.MANUAL && a.due > manualNow) manualNow = a.due;
        a.run();
        return true;
    }

    /** Automatic mode: runs everything due. Re-entrant calls (from inside an action) do nothing. */
    int pump() {
        if (pumping) return 0;
        pumping = true;
        try {
            int n = 0;
            while (runNext(nowLocked())) n++;
            return n;
        } finally {
            pumping = false;
        }
    }

    void pumpIfAutomatic() {
        if (mode == Mode.AUTOMATIC && pump() > 0) signalAll();
    }

    void signalAll() { changed.signalAll(); }

    /**
     * Waits (lock held) until {@code ready} holds or the timeout passes; in automatic mode runs due work first and
     * wakes for the next timer. timeoutMillis 0 = check once; negative = no limit.
     */
    boolean await(BooleanSupplier ready, long timeoutMillis) {
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            pumpIfAutomatic();
            if (ready.getAsBoolean()) return true;
            if (timeoutMillis == 0 || closed) return false;
            if (mode == Mode.AUTOMATIC && !wireDeferred.isEmpty()) {
                expediteWire();
                continue;
            }
            long wait = deadline - System.nanoTime();
            if (wait <= 0) return false;
            if (mode == Mode.AUTOMATIC) {
                Action next = actions.peek();
                if (next != null) wait = Math.min(wait, Math.max(1000, next.due - nowLocked()));
            }
            try {
                changed.awaitNanos(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
    }
}
