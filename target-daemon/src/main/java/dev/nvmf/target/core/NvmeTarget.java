package dev.nvmf.target.core;

import dev.nvmf.target.core.admin.AdminCommands;
import dev.nvmf.target.core.admin.AnaLogSource;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.controller.KeepAliveTimer;
import dev.nvmf.target.core.discovery.DiscoveryCommands;
import dev.nvmf.target.core.discovery.DiscoveryLogPage;
import dev.nvmf.target.core.discovery.DiscoveryLogSource;
import dev.nvmf.target.core.fabrics.ConnectModel;
import dev.nvmf.target.core.fabrics.FabricsCommands;
import dev.nvmf.target.core.io.IoCommands;
import dev.nvmf.target.core.subsystem.AnaPortStates;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Referral;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.AnaLog;
import dev.nvmf.target.nvme.AnaState;
import dev.nvmf.target.nvme.DiscoveryLog;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The NVMe-oF target as the transports and the config layer see it (kernel: the nvmet core module and its
 * configfs model): ports, subsystems, referrals, the discovery subsystem, and every live controller.
 *
 * <p>Transports call {@link #openQueue} for each accepted connection. The config layer builds and changes the
 * model at runtime through the methods here and on {@link Subsystem}; they are thread-safe (one model lock, control
 * path only) and every change that alters what a host may discover bumps the discovery generation counter and
 * notifies discovery controllers. The daemon calls {@link #checkTimers} periodically (keep-alive).
 *
 * <p>The target builds the command sets once and wires each with only what it needs: the options, the clock, and
 * for Connect, the discovery log and the ANA log the narrow views {@link ConnectModel}, {@link DiscoveryLogSource}
 * and {@link AnaLogSource} that the target implements. ANA: each port's group states ({@link #setAnaState}) and each
 * namespace's group ({@link #moveNamespaceAnaGroup}) change here, under the model lock, and tell the controllers. No handler and no queue knows this class.
 */
public final class NvmeTarget implements QueueAcceptor, ConnectModel, DiscoveryLogSource, AnaLogSource,
        AutoCloseable {
    private final TargetOptions options;
    private final NanoClock clock;
    private final long startNanos;
    private final Object lock = new Object();

    private final Map<Integer, Port> ports = new TreeMap<>();
    private final Map<String, Subsystem> subsystems = new LinkedHashMap<>();
    /** Referrals listed on every port's discovery log, besides each port's own ({@link Port#referrals}). */
    private final List<Referral> referrals = new ArrayList<>();
    private final Subsystem discoverySubsystem;
    private volatile long discoveryGeneration = 1;
    /** Each port's ANA group states, by port id (kept when a port's record is replaced; guarded by lock). */
    private final Map<Integer, AnaPortStates> anaStates = new HashMap<>();
    /** The ANA log page's change count (written under lock). */
    private volatile long anaChangeCount;
    private final QueueServices queues;
    private final IoCommands io;

    public NvmeTarget() {
        this(TargetOptions.defaults(), SystemNanoClock.INSTANCE);
    }

    /**
     * @param clock the time source for keep-alive (tests pass a clock they move); read once per command, so a
     *              poller may pass an Agrona {@code CachedNanoClock} it updates each duty cycle
     */
    public NvmeTarget(TargetOptions options, NanoClock clock) {
        this.options = Objects.requireNonNull(options, "options");
        this.clock = Objects.requireNonNull(clock, "clock");
        this.startNanos = clock.nanoTime();
        this.discoverySubsystem = new Subsystem(
                new SubsystemConfig(DiscoveryLog.DISCOVERY_NQN, "", "nvmf-target discovery", "0.1.0", true,
                        SubsystemConfig.MIN_CNTLID, SubsystemConfig.MAX_CNTLID, 1, options.version(),
                        SubsystemConfig.DEFAULT_IEEE_OUI),
                true, lock, this::discoveryChanged);
        this.io = new IoCommands(options.maxTransferBytes());
        this.queues = new QueueServices(
                new FabricsCommands(this, options, clock),
                new AdminCommands(options, clock, startNanos, this),
                new DiscoveryCommands(this, options, clock),
                io,
                clock);
    }

    /**
     * Frees the target's own native memory (Compare's scratch buffers). Call once every queue is closed (the
     * transport stopped); the model stays readable, but no command may run after.
     */
    @Override
    public void close() {
        io.close();
    }

    @Override
    public CommandQueue openQueue(int portId, int qid, int sqSize, QueueTransport transport) {
        Objects.requireNonNull(transport, "transport");
        return new NvmeQueue(queues, portId, qid, sqSize, transport);
    }

    public TargetOptions options() { return options; }
    public NanoClock clock() { return clock; }
    /** Clock time when the target was created (SMART power-on hours). */
    public long startNanos() { return startNanos; }
    /** The model lock (control path). */
    public Object lock() { return lock; }

    /** Who learns about completions, backend failures and closed queues (the daemon's metrics and logs). */
    public TargetObserver observer() { return queues.observer(); }

    public void observer(TargetObserver observer) {
        queues.observer(observer);
    }

    // ------------------------------------------------------------------------------------------- ports

    /**
     * Adds (or replaces, same id) a port. A new port has the default ANA states (group 1 optimized, the others
     * inaccessible); a replaced one keeps its states.
     */
    public void addPort(Port port) {
        Objects.requireNonNull(port, "port");
        synchronized (lock) {
            ports.put(port.id(), port);
            anaStates.computeIfAbsent(port.id(), id -> new AnaPortStates());
            discoveryChanged();
        }
    }

    /**
     * Removes a port: subsystems stop being exposed on it and the controllers connected through it are torn down.
     */
    public Port removePort(int portId) {
        List<Controller> doomed = new ArrayList<>();
        Port removed;
        synchronized (lock) {
            removed = ports.remove(portId);
            if (removed == null) {
                return null;
            }
            anaStates.remove(portId);
            for (Subsystem s : subsystems.values()) {
                s.removePort(portId);
            }
            for (Subsystem s : allSubsystemsLocked()) {
                for (Controller c : s.controllers()) {
                    if (c.port().id() == portId) {
                        doomed.add(c);
                    }
                }
            }
            discoveryChanged();
        }
        for (Controller c : doomed) {
            c.disconnectAll("port " + portId + " removed");
        }
        return removed;
    }

    @Override
    public Port port(int portId) {
        synchronized (lock) {
            return ports.get(portId);
        }
    }

    public List<Port> ports() {
        synchronized (lock) {
            return List.copyOf(ports.values());
        }
    }

    // ------------------------------------------------------------------------------------------- subsystems

    /**
     * Adds a subsystem (not yet exposed on any port: see {@link #exposeSubsystem}).
     *
     * @throws IllegalStateException if the NQN exists or is the discovery NQN
     */
    public Subsystem addSubsystem(SubsystemConfig config) {
        synchronized (lock) {
            if (config.nqn().equals(DiscoveryLog.DISCOVERY_NQN) || subsystems.containsKey(config.nqn())) {
                throw new IllegalStateException("subsystem " + config.nqn() + " already exists");
            }
            Subsystem s = new Subsystem(config, false, lock, this::discoveryChanged);
            subsystems.put(config.nqn(), s);
            discoveryChanged();
            return s;
        }
    }

    /** Removes a subsystem: new Connects fail, and its controllers are torn down. Returns it (or null). */
    public Subsystem removeSubsystem(String nqn) {
        Subsystem s;
        synchronized (lock) {
            s = subsystems.remove(nqn);
            if (s == null) {
                return null;
            }
            s.markRemoved();
            discoveryChanged();
        }
        for (Controller c : s.controllers()) {
            c.disconnectAll("subsystem " + nqn + " removed");
        }
        return s;
    }

    public Subsystem subsystem(String nqn) {
        synchronized (lock) {
            return DiscoveryLog.DISCOVERY_NQN.equals(nqn) ? discoverySubsystem : subsystems.get(nqn);
        }
    }

    /** NVM subsystems (not the discovery subsystem), in the order added. */
    public List<Subsystem> subsystems() {
        synchronized (lock) {
            return List.copyOf(subsystems.values());
        }
    }

    public Subsystem discoverySubsystem() { return discoverySubsystem; }

    /** Exposes a subsystem on a port (kernel: linking subsystems/NQN under ports/N/subsystems). */
    public void exposeSubsystem(int portId, String nqn) {
        synchronized (lock) {
            Subsystem s = subsystems.get(nqn);
            if (s == null) {
                throw new IllegalStateException("no subsystem " + nqn);
            }
            if (!ports.containsKey(portId)) {
                throw new IllegalStateException("no port " + portId);
            }
            if (s.addPort(portId)) {
                discoveryChanged();
            }
        }
    }

    /** Stops exposing a subsystem on a port (new Connects through it fail; live controllers stay). */
    public void unexposeSubsystem(int portId, String nqn) {
        synchronized (lock) {
            Subsystem s = subsystems.get(nqn);
            if (s != null && s.removePort(portId)) {
                discoveryChanged();
            }
        }
    }

    /**
     * The subsystem a Connect on {@code portId} may reach by this NQN: known, not removed, and exposed on that
     * (known) port; the discovery subsystem is reachable on every known port. Null otherwise.
     */
    @Override
    public Subsystem subsystemOnPort(String nqn, int portId) {
        synchronized (lock) {
            if (!ports.containsKey(portId)) {
                return null;
            }
            if (DiscoveryLog.DISCOVERY_NQN.equals(nqn)) {
                return discoverySubsystem;
            }
            Subsystem s = subsystems.get(nqn);
            return s != null && !s.isRemoved() && s.isExposedOn(portId) ? s : null;
        }
    }

    // ------------------------------------------------------------------------------------------- referrals

    /**
     * A referral listed in every port's discovery log. A referral that belongs to one port (kernel:
     * ports/N/referrals) is in that port's record instead ({@link Port#referrals}), replaced with the port.
     */
    public void addReferral(Referral referral) {
        Objects.requireNonNull(referral, "referral");
        synchronized (lock) {
            if (!referrals.contains(referral)) {
                referrals.add(referral);
                discoveryChanged();
            }
        }
    }

    /** Removes a referral {@link #addReferral} listed on every port. */
    public boolean removeReferral(Referral referral) {
        synchronized (lock) {
            boolean removed = referrals.remove(referral);
            if (removed) {
                discoveryChanged();
            }
            return removed;
        }
    }

    /** Every referral some discovery log lists: each port's own, then those of every port; each once. */
    public List<Referral> referrals() {
        synchronized (lock) {
            List<Referral> all = new ArrayList<>();
            for (Port p : ports.values()) {
                addAbsent(all, p.referrals());
            }
            addAbsent(all, referrals);
            return List.copyOf(all);
        }
    }

    private static void addAbsent(List<Referral> to, List<Referral> from) {
        for (Referral r : from) {
            if (!to.contains(r)) {
                to.add(r);
            }
        }
    }

    // ------------------------------------------------------------------------------------------- discovery

    /** GENCTR of the discovery log: changes whenever what any host may discover changes. */
    public long discoveryGeneration() { return discoveryGeneration; }

    /**
     * Builds the whole discovery log page for a host connected through {@code portId} (control path): the entries
     * of that port and its referrals (the default, as the kernel target's discovery.c lists {@code req->port}'s, and
     * always when the host asks with PLEO), or of every port when the port says {@link Port#discoveryAllPorts}; and
     * the referrals listed on every port.
     */
    @Override
    public byte[] discoveryLog(String hostNqn, int portId, InetAddress localAddress, boolean portLocalOnly) {
        synchronized (lock) {
            Port current = ports.get(portId);
            List<Port> listed;
            if (current == null) {
                listed = List.of();
            } else if (portLocalOnly || !current.discoveryAllPorts()) {
                listed = List.of(current);
            } else {
                listed = List.copyOf(ports.values());
            }
            List<Referral> listedReferrals = new ArrayList<>();
            for (Port p : listed) {
                addAbsent(listedReferrals, p.referrals());
            }
            addAbsent(listedReferrals, referrals);
            return DiscoveryLogPage.build(discoveryGeneration, hostNqn, current, localAddress, listed,
                    List.copyOf(subsystems.values()), listedReferrals, options.adminQueueDepth());
        }
    }

    private void discoveryChanged() {
        synchronized (lock) {
            discoveryGeneration++;
            for (Controller c : discoverySubsystem.controllers()) {
                c.discoveryLogChanged();
            }
        }
    }

    // ------------------------------------------------------------------------------------------- controllers

    /**
     * Creates a controller for an admin queue Connect; null if the subsystem's controller id range is used up or
     * the subsystem was removed meanwhile.
     */
    @Override
    public Controller createController(Subsystem subsystem, Port port, String hostNqn, byte[] hostId,
                                       long katoMillis) {
        synchronized (lock) {
            if (subsystem.isRemoved()) {
                return null;
            }
            int cntlid = subsystem.allocateCntlid();
            if (cntlid < 0) {
                return null;
            }
            AnaPortStates ana = anaStates.get(port.id());
            Controller c = new Controller(cntlid, subsystem, port, ana == null ? new AnaPortStates() : ana,
                    hostNqn, hostId, katoMillis, options, clock.nanoTime());
            subsystem.attach(c);
            return c;
        }
    }

    // ------------------------------------------------------------------------------------------- ANA

    /** The ANA group states of a port, or null when there is no such port. */
    public AnaPortStates anaStates(int portId) {
        synchronized (lock) {
            return anaStates.get(portId);
        }
    }

    /**
     * Sets an ANA group's state on a port (kernel configfs.c, {@code nvmet_ana_group_ana_state_store}): when the
     * state changes, the change count moves and every controller connected through the port that enabled ANA change
     * notices gets one (kernel core.c, {@code nvmet_port_send_ana_event}). Control path.
     *
     * @return the state before
     * @throws IllegalArgumentException for an unknown port or a group id outside 1..128
     */
    public AnaState setAnaState(int portId, int groupId, AnaState state) {
        Objects.requireNonNull(state, "state");
        synchronized (lock) {
            AnaState before = portStates(portId).set(groupId, state);
            if (before != state) {
                anaChanged(portId);
            }
            return before;
        }
    }

    /**
     * The port stops configuring the group (kernel: removing {@code ports/N/ana_groups/G}): the group has its default
     * state on the port again, group 1 optimized and the others inaccessible; hosts hear of a change as with
     * {@link #setAnaState}. Returns the state before.
     */
    public AnaState resetAnaState(int portId, int groupId) {
        synchronized (lock) {
            AnaPortStates states = portStates(portId);
            AnaState before = states.reset(groupId);
            if (before != states.state(groupId)) {
                anaChanged(portId);
            }
            return before;
        }
    }

    private AnaPortStates portStates(int portId) {
        AnaPortStates states = anaStates.get(portId);
        if (states == null) {
            throw new IllegalArgumentException("no port " + portId);
        }
        return states;
    }

    private void anaChanged(int portId) {
        anaChangeCount++;
        for (Subsystem s : subsystems.values()) {
            for (Controller c : s.controllers()) {
                if (c.port().id() == portId) {
                    c.anaChanged();
                }
            }
        }
    }

    /**
     * Moves a namespace to another ANA group (kernel configfs.c, {@code nvmet_ns_ana_grpid_store}): the change count
     * moves and every controller of the subsystem that enabled ANA change notices gets one (kernel
     * {@code nvmet_send_ana_event} for the whole subsystem). False if there is no such namespace or it is in that
     * group already. Control path.
     */
    public boolean moveNamespaceAnaGroup(String nqn, int nsid, int groupId) {
        synchronized (lock) {
            Subsystem s = subsystems.get(nqn);
            Namespace ns = s == null ? null : s.namespace(nsid);
            if (ns == null || ns.anaGroupId() == groupId) {
                return false;
            }
            ns.anaGroupId(groupId);
            anaChangeCount++;
            for (Controller c : s.controllers()) {
                c.anaChanged();
            }
            return true;
        }
    }

    @Override
    public int[] anaGroupIds() {
        boolean[] used = new boolean[AnaLog.MAX_GROUP_ID + 1];
        used[AnaLog.DEFAULT_GROUP_ID] = true;
        synchronized (lock) {
            for (AnaPortStates states : anaStates.values()) {
                for (int g : states.configuredGroups()) {
                    used[g] = true;
                }
            }
            for (Subsystem s : subsystems.values()) {
                for (Namespace ns : s.namespaces()) {
                    used[ns.anaGroupId()] = true;
                }
            }
        }
        int n = 0;
        for (boolean u : used) {
            n += u ? 1 : 0;
        }
        int[] ids = new int[n];
        int i = 0;
        for (int g = 1; g <= AnaLog.MAX_GROUP_ID; g++) {
            if (used[g]) {
                ids[i++] = g;
            }
        }
        return ids;
    }

    @Override
    public long anaChangeCount() {
        return anaChangeCount;
    }

    /** Every live controller, discovery controllers included (a snapshot). */
    public List<Controller> controllers() {
        List<Controller> all = new ArrayList<>();
        synchronized (lock) {
            for (Subsystem s : allSubsystemsLocked()) {
                all.addAll(s.controllers());
            }
        }
        return all;
    }

    private List<Subsystem> allSubsystemsLocked() {
        List<Subsystem> all = new ArrayList<>(subsystems.size() + 1);
        all.add(discoverySubsystem);
        all.addAll(subsystems.values());
        return all;
    }

    /**
     * Runs the timers: every controller whose keep-alive timeout passed without a command on any of its queues gets
     * CSTS.CFS and is torn down (each queue: {@link QueueTransport#requestDisconnect}). Call it periodically
     * (a fraction of the smallest KAS, e.g. every 100 ms) from any one thread.
     *
     * @return the number of controllers that expired now
     */
    public int checkTimers(long nowNanos) {
        int expired = 0;
        for (Controller c : controllers()) {
            if (c.keepAlive().expire(nowNanos, c.lastTrafficNanos())) {
                c.fatal("keep-alive timeout (" + c.keepAlive().timeoutMillis() + " ms) expired for " + c);
                expired++;
            }
        }
        return expired;
    }

    /**
     * The earliest time at which {@link #checkTimers} can find something to do: the end of the first keep-alive
     * window of any controller ({@link KeepAliveTimer#windowEndNanos}), or {@link Long#MAX_VALUE} when no controller
     * has a keep-alive running. A controller created later, or a Set Features that shortens KATO, moves it earlier:
     * whoever sleeps until it must also be woken then.
     */
    public long nextTimerDeadline() {
        long next = Long.MAX_VALUE;
        for (Controller c : controllers()) {
            next = Math.min(next, c.keepAlive().windowEndNanos());
        }
        return next;
    }
}
