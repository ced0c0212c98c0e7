package dev.nvmf.target.daemon;

import dev.nvmf.target.backend.AsyncFdBackend;
import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.backend.BlockBackends;
import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigDiff.NamespaceChange;
import dev.nvmf.target.config.ConfigDiff.PortChange;
import dev.nvmf.target.config.ConfigDiff.SubsystemChange;
import dev.nvmf.target.config.NamespaceConfig;
import dev.nvmf.target.config.PortConfig;
import dev.nvmf.target.config.SubsystemConfig;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.core.NvmeTarget;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.poller.Poller;
import dev.nvmf.target.service.LogContext;
import dev.nvmf.target.service.TargetRuntime;
import dev.nvmf.verbs.RdmaProvider;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.agrona.concurrent.SystemNanoClock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The real target behind {@code nvmf-target serve}: the YAML configuration mapped onto the NVMe core
 * ({@link NvmeTarget}: ports, subsystems, namespaces on {@link BlockBackends}, allowed hosts, which port exposes
 * which subsystem), the RDMA transport on a verbs provider (rdma-core through FFM in production, the soft fabric
 * in tests), a timer thread (keep-alive, metrics that are pulled from the transport), and the metrics and event
 * logs of {@link DaemonObserver}.
 *
 * <p>Reload ({@link #apply}) works in two phases. Prepare: open every backend the new configuration needs and bind
 * every new listener; nothing a host can see has changed yet, so a failure here (a file that will not open, an
 * address that will not bind) refuses the reload cleanly. Commit: removals, then changes, then additions, in the
 * order {@link ConfigDiff} documents; each step records its undo, and a failure rolls the steps back in reverse.
 * Connections of unaffected subsystems, namespaces and ports are never touched. What only the commit can make
 * irreversible (closing removed backends, disconnecting hosts that lost access) runs after the last step.
 *
 * <p>Called by the service's control thread only, one call at a time.
 */
public final class DaemonRuntime implements TargetRuntime {
    private static final Logger LOG = Logger.getLogger(DaemonRuntime.class.getName());

    /**
     * @param provider           the verbs provider (FfmProvider in production, a SoftFabric in tests)
     * @param remoteInvalidation answer host-invalidate SGLs with SEND_WITH_INVALIDATE (when the device can)
     * @param timerPeriod        how often keep-alive timers are checked (a fraction of the 1 s KAS granularity)
     * @param backendFlushWait   how long closing a backend waits for its final flush
     */
    public record Options(RdmaProvider provider, boolean remoteInvalidation, Duration timerPeriod,
                          Duration backendFlushWait) {
        public Options {
            Objects.requireNonNull(provider, "provider");
            Objects.requireNonNull(timerPeriod, "timerPeriod");
            Objects.requireNonNull(backendFlushWait, "backendFlushWait");
        }

        public static Options of(RdmaProvider provider) {
            return new Options(provider, true, Duration.ofMillis(100), Duration.ofSeconds(5));
        }
    }

    /** A namespace being served: its backend and the core's view of it. */
    private record Live(String nqn, NamespaceConfig config, BlockBackend backend, Namespace namespace) {}

    private record NsKey(String nqn, long nsid) {}

    private final Options options;
    private final TargetMetrics metrics;
    private final Map<NsKey, Live> live = new LinkedHashMap<>();
    private NvmeTarget target;
    private RdmaTransport transport;
    private TransportMetricsBridge bridge;
    private TargetConfig config;
    private AgentRunner timer;
    private volatile Thread timerThread;
    private final Set<Controller> expiriesCounted = Collections.newSetFromMap(new IdentityHashMap<>());

    public DaemonRuntime(Options options, TargetMetrics metrics) {
        this.options = Objects.requireNonNull(options, "options");
        this.metrics = Objects.requireNonNull(metrics, "metrics");
    }

    /** The core (for tests and diagnostics); null before start. */
    public NvmeTarget target() { return target; }

    /** The transport (for tests and diagnostics); null before start. */
    public RdmaTransport transport() { return transport; }

    // ------------------------------------------------------------------------------------------- start

    @Override
    public void start(TargetConfig cfg) throws Exception {
        if (target != null) {
            throw new IllegalStateException("already started");
        }
        Map<NsKey, Opened> opened = new LinkedHashMap<>();
        try {
            target = new NvmeTarget(ConfigMapping.options(cfg.transport()), SystemNanoClock.INSTANCE);
            target.observer(new DaemonObserver(metrics));
            for (SubsystemConfig s : cfg.subsystems()) {
                for (NamespaceConfig n : s.namespaces()) {
                    if (n.enabled()) {
                        opened.put(new NsKey(s.nqn(), n.nsid()), open(s.nqn(), n));
                    }
                }
            }
            Journal j = new Journal();
            for (PortConfig p : cfg.ports()) {
                target.addPort(ConfigMapping.port(p));
            }
            for (SubsystemConfig s : cfg.subsystems()) {
                addSubsystem(s, cfg.transport(), opened, j);
            }
            for (PortConfig p : cfg.ports()) {
                for (String nqn : p.subsystems()) {
                    target.exposeSubsystem(p.id(), nqn);
                }
            }
            transport = new RdmaTransport(options.provider(),
                    ConfigMapping.transport(cfg, options.remoteInvalidation()), target);
            // start() binds and listens on every port before it returns: READY=1 after this is true.
            transport.start();
            bridge = new TransportMetricsBridge(metrics, transport.metrics());
            config = cfg;
            startTimer();
            for (PortConfig p : cfg.ports()) {
                LOG.info("port " + p.id() + ": listening on rdma " + p.endpoint() + " for " + p.subsystems());
            }
        } catch (Exception | Error e) {
            LOG.log(Level.SEVERE, "start failed; releasing what was taken: " + e.getMessage());
            if (transport != null) {
                transport.stop(1000);
                transport = null;
            }
            for (Opened o : opened.values()) {
                closeQuietly(o.backend());
            }
            for (SubsystemConfig s : cfg.subsystems()) {
                metrics.removeSubsystem(s.nqn());
            }
            live.clear();
            target = null;
            throw e;
        }
    }

    private void startTimer() {
        long period = options.timerPeriod().toNanos();
        timer = new AgentRunner(new SleepingIdleStrategy(period), e -> LOG.log(Level.WARNING, "timer", e), null,
                new TimerAgent(period));
        timerThread = AgentRunner.startOnThread(timer, r -> {
            Thread t = new Thread(r, "nvmf-timers");
            t.setDaemon(true);
            return t;
        });
    }

    /** The timers as an agent: a {@link #tick} once a period; between turns its idle strategy sleeps. */
    private final class TimerAgent implements Agent {
        private final long periodNanos;
        private long dueNanos = System.nanoTime();

        TimerAgent(long periodNanos) {
            this.periodNanos = periodNanos;
        }

        @Override
        public int doWork() {
            long now = System.nanoTime();
            if (now - dueNanos < 0) {
                return 0;
            }
            dueNanos = now + periodNanos;
            tick(now);
            return 1;
        }

        @Override
        public String roleName() {
            return "nvmf-timers";
        }
    }

    /** One timer turn: keep-alive expiries (counted and logged once per controller), transport rejects. */
    void tick(long nowNanos) {
        // Taken before the check: a controller the expiry tears down can be gone from the target by the time the
        // check returns (its queues drain on other threads), and it must still be counted.
        List<Controller> controllers = target.controllers();
        if (target.checkTimers(nowNanos) > 0) {
            for (Controller c : controllers) {
                if (c.keepAlive().expired() && expiriesCounted.add(c)) {
                    if (!c.isDiscovery()) {
                        metrics.subsystem(c.subsystem().nqn()).keepAliveExpired();
                    }
                    LOG.warning(LogContext.format(c.subsystem().nqn(), c.hostNqn(), "keep-alive timeout ("
                            + c.keepAlive().timeoutMillis() + " ms) expired for controller " + c.cntlid()
                            + ": tearing it down"));
                }
            }
        }
        expiriesCounted.removeIf(Controller::isEnded);
        bridge.pushRejects();
    }

    // ------------------------------------------------------------------------------------------- status

    @Override
    public String status() {
        if (target == null) {
            return "not running";
        }
        int controllers = 0;
        for (Controller c : target.controllers()) {
            if (!c.isDiscovery()) {
                controllers++;
            }
        }
        return target.subsystems().size() + " subsystems, " + live.size() + " namespaces, "
                + target.ports().size() + " ports, " + controllers + " controllers, "
                + transport.openQueues() + " queues";
    }

    @Override
    public boolean healthy() {
        Thread timerThread = this.timerThread;
        if (transport == null || timerThread == null || !timerThread.isAlive() || timer.isClosed()) {
            return false;
        }
        for (int i = 0; i < transport.pollerCount(); i++) {
            Poller p = transport.poller(i);
            Thread t = p.thread();
            if (t != null && !t.isAlive()) {
                return false;
            }
        }
        return true;
    }

    // ------------------------------------------------------------------------------------------- stop

    @Override
    public void stop(Duration timeout) {
        if (target == null) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        if (timer != null) {
            // Wakes the sleeping agent at once rather than after its period.
            timer.close(10, LockSupport::unpark);
        }
        // Stop listening, drain every queue (each host sees its connection end), release transport resources.
        long drainMillis = Math.max(100, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) * 3 / 4);
        transport.stop(drainMillis);
        if (bridge != null) {
            bridge.close();
        }
        // Every queue is closed: the backends are idle. Flush what they cache, then close them.
        for (Live l : live.values()) {
            flushAndClose(l.backend(), l.nqn(), l.config().nsid());
        }
        live.clear();
        LOG.info("stopped: every queue drained, " + transport.metrics().queuesClosed.sum()
                + " queues released in all, backends closed");
        target = null;
    }

    private void flushAndClose(BlockBackend backend, String nqn, long nsid) {
        if (!backend.readOnly()) {
            CountDownLatch done = new CountDownLatch(1);
            int[] result = {0};
            try {
                backend.flush(null, (attachment, r) -> {
                    result[0] = r;
                    done.countDown();
                });
                if (!done.await(options.backendFlushWait().toMillis(), TimeUnit.MILLISECONDS)) {
                    LOG.warning(LogContext.format(nqn, null, "namespace " + nsid + ": final flush of "
                            + backend.describe() + " did not finish in " + options.backendFlushWait()));
                } else if (result[0] != 0) {
                    LOG.warning(LogContext.format(nqn, null, "namespace " + nsid + ": final flush of "
                            + backend.describe() + " failed: errno " + -result[0]));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                LOG.warning("flush of " + backend.describe() + ": " + e.getMessage());
            }
        }
        closeQuietly(backend);
    }

    private static void closeQuietly(BlockBackend b) {
        try {
            b.close();
        } catch (RuntimeException e) {
            LOG.warning("closing " + b.describe() + ": " + e.getMessage());
        }
    }

    // ------------------------------------------------------------------------------------------- reload

    /** A backend opened for a namespace, not yet (or no longer) serving. */
    private record Opened(NamespaceConfig config, BlockBackend backend,
                          dev.nvmf.target.core.subsystem.NamespaceConfig coreConfig) {}

    private Opened open(String nqn, NamespaceConfig n) throws Exception {
        BlockBackend b = BlockBackends.open(ConfigMapping.backend(n));
        try {
            return new Opened(n, b, ConfigMapping.namespace(n, b));
        } catch (RuntimeException e) {
            b.close();
            throw new IllegalArgumentException(nqn + " namespace " + n.nsid() + ": " + e.getMessage(), e);
        }
    }

    /** Steps done so far (their undos, newest first) and the irreversible work kept for after the last step. */
    private static final class Journal {
        private final Deque<Runnable> undo = new ArrayDeque<>();
        private final List<Runnable> afterCommit = new ArrayList<>();

        void did(Runnable undoAction) { undo.push(undoAction); }

        void later(Runnable r) { afterCommit.add(r); }

        void rollback() {
            while (!undo.isEmpty()) {
                try {
                    undo.pop().run();
                } catch (RuntimeException e) {
                    LOG.log(Level.SEVERE, "rollback step failed", e);
                }
            }
        }

        void commit() {
            for (Runnable r : afterCommit) {
                try {
                    r.run();
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, "after reload", e);
                }
            }
        }
    }

    @Override
    public void apply(ConfigDiff diff, TargetConfig next) throws Exception {
        if (target == null) {
            throw new IllegalStateException("not running");
        }
        TargetConfig before = config;
        // ---- prepare: nothing visible changes; failure refuses the reload
        Map<NsKey, Opened> opened = new LinkedHashMap<>();
        List<Integer> bound = new ArrayList<>();
        try {
            for (SubsystemConfig s : diff.subsystemsAdded()) {
                ConfigMapping.subsystem(s, next.transport());
                for (NamespaceConfig n : s.namespaces()) {
                    if (n.enabled()) {
                        opened.put(new NsKey(s.nqn(), n.nsid()), open(s.nqn(), n));
                    }
                }
            }
            for (SubsystemChange c : diff.subsystemsChanged()) {
                for (NamespaceConfig n : c.namespacesAdded()) {
                    if (n.enabled()) {
                        opened.put(new NsKey(c.nqn(), n.nsid()), open(c.nqn(), n));
                    }
                }
                for (NamespaceChange nc : c.namespacesChanged()) {
                    // The same file or device cannot be opened twice (devices are opened O_EXCL): those reopen in
                    // the commit, after the old backend is closed.
                    if (nc.after().enabled() && !sameMedium(nc.before(), nc.after())) {
                        opened.put(new NsKey(c.nqn(), nc.after().nsid()), open(c.nqn(), nc.after()));
                    }
                }
            }
            for (PortConfig p : diff.portsAdded()) {
                ConfigMapping.port(p);
                ConfigMapping.rdmaPort(p, before.transport());
            }
            for (PortChange pc : diff.portsChanged()) {
                ConfigMapping.port(pc.after());
                ConfigMapping.rdmaPort(pc.after(), before.transport());
            }
            // New listeners bind now: a host that connects before the port exists in the core gets its Connect
            // refused (unknown subsystem on that port), nothing else.
            for (PortConfig p : diff.portsAdded()) {
                transport.addListener(ConfigMapping.rdmaPort(p, before.transport()));
                bound.add(p.id());
            }
        } catch (Exception e) {
            releasePrepared(opened, bound);
            LOG.warning("reload refused before any change: " + e.getMessage());
            throw e;
        }

        // ---- commit, step by step, with undo
        Journal j = new Journal();
        try {
            for (int id : diff.portsRemoved()) {
                removePort(id, before, j);
            }
            for (PortChange pc : diff.portsChanged()) {
                if (pc.listenerChanged()) {
                    removePort(pc.id(), before, j);
                } else {
                    for (String nqn : pc.subsystemsRemoved()) {
                        unexpose(pc.id(), nqn, j);
                    }
                }
            }
            for (String nqn : diff.subsystemsRemoved()) {
                removeSubsystem(nqn, before, j);
            }
            diff.hostsRemoved().forEach(h -> LOG.info(LogContext.format(null, h, "host removed from the configuration")));
            diff.hostsAdded().forEach(h -> LOG.info(LogContext.format(null, h, "host added to the configuration")));
            for (SubsystemChange c : diff.subsystemsChanged()) {
                changeSubsystem(c, next, opened, j);
            }
            for (SubsystemConfig s : diff.subsystemsAdded()) {
                addSubsystem(s, next.transport(), opened, j);
                LOG.info(LogContext.format(s.nqn(), null, "subsystem added (" + s.namespaces().size()
                        + " namespaces)"));
            }
            for (PortConfig p : diff.portsAdded()) {
                addPort(p, before, false, j);
            }
            for (PortChange pc : diff.portsChanged()) {
                if (pc.listenerChanged()) {
                    addPort(pc.after(), before, true, j);
                } else {
                    for (String nqn : pc.subsystemsAdded()) {
                        expose(pc.id(), nqn, j);
                    }
                }
            }
        } catch (Exception | Error e) {
            LOG.log(Level.SEVERE, "reload failed while applying (" + e.getMessage() + "); rolling back", e);
            j.rollback();
            releasePrepared(opened, bound);
            throw e;
        }
        j.commit();
        for (String r : diff.restartRequired()) {
            LOG.warning("reload: " + r + " takes effect on restart; the running value stays");
        }
        config = next;
    }

    private static boolean sameMedium(NamespaceConfig a, NamespaceConfig b) {
        return a.kind() == b.kind() && a.kind() != NamespaceConfig.Kind.RAM && Objects.equals(a.path(), b.path());
    }

    private void releasePrepared(Map<NsKey, Opened> opened, List<Integer> bound) {
        for (Opened o : opened.values()) {
            boolean serving = false;
            for (Live l : live.values()) {
                serving |= l.backend() == o.backend();
            }
            if (!serving) {
                closeQuietly(o.backend());
            }
        }
        for (int id : bound) {
            if (target.port(id) == null) {
                try {
                    transport.removeListener(id);
                } catch (RuntimeException e) {
                    LOG.warning("removing listener " + id + ": " + e.getMessage());
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------- steps

    private void addPort(PortConfig p, TargetConfig before, boolean bind, Journal j) {
        if (bind) {
            transport.addListener(ConfigMapping.rdmaPort(p, before.transport()));
            j.did(() -> transport.removeListener(p.id()));
        }
        target.addPort(ConfigMapping.port(p));
        j.did(() -> target.removePort(p.id()));
        for (String nqn : p.subsystems()) {
            target.exposeSubsystem(p.id(), nqn);
        }
        LOG.info("port " + p.id() + ": listening on rdma " + p.endpoint() + " for " + p.subsystems());
    }

    private void removePort(int id, TargetConfig before, Journal j) {
        PortConfig old = before.port(id).orElseThrow();
        transport.removeListener(id);
        j.did(() -> transport.addListener(ConfigMapping.rdmaPort(old, before.transport())));
        target.removePort(id); // its controllers are torn down
        j.did(() -> {
            target.addPort(ConfigMapping.port(old));
            for (String nqn : old.subsystems()) {
                if (target.subsystem(nqn) != null) {
                    target.exposeSubsystem(id, nqn);
                }
            }
        });
        LOG.info("port " + id + ": removed (" + old.endpoint() + "); its controllers disconnect");
    }

    private void expose(int portId, String nqn, Journal j) {
        target.exposeSubsystem(portId, nqn);
        j.did(() -> target.unexposeSubsystem(portId, nqn));
        LOG.info(LogContext.format(nqn, null, "exposed on port " + portId));
    }

    private void unexpose(int portId, String nqn, Journal j) {
        target.unexposeSubsystem(portId, nqn);
        j.did(() -> target.exposeSubsystem(portId, nqn));
        Subsystem s = target.subsystem(nqn);
        j.later(() -> {
            if (s != null) {
                for (Controller c : s.controllers()) {
                    if (c.port().id() == portId) {
                        c.disconnectAll("subsystem no longer exposed on port " + portId);
                    }
                }
            }
        });
        LOG.info(LogContext.format(nqn, null, "no longer exposed on port " + portId));
    }

    private void addSubsystem(SubsystemConfig s, dev.nvmf.target.config.TransportConfig t,
                              Map<NsKey, Opened> opened, Journal j) {
        Subsystem sub = target.addSubsystem(ConfigMapping.subsystem(s, t));
        metrics.subsystem(s.nqn());
        j.did(() -> {
            target.removeSubsystem(s.nqn());
            live.keySet().removeIf(k -> k.nqn().equals(s.nqn()));
            metrics.removeSubsystem(s.nqn());
        });
        for (String h : s.allowedHosts()) {
            sub.allowHost(h);
        }
        for (NamespaceConfig n : s.namespaces()) {
            if (n.enabled()) {
                addNamespace(sub, opened.get(new NsKey(s.nqn(), n.nsid())), j);
            }
        }
    }

    private void removeSubsystem(String nqn, TargetConfig before, Journal j) {
        SubsystemConfig old = before.subsystem(nqn).orElseThrow();
        Subsystem s = target.subsystem(nqn);
        Set<Integer> ports = s.ports();
        Map<NsKey, Live> itsNamespaces = new LinkedHashMap<>();
        live.forEach((k, v) -> {
            if (k.nqn().equals(nqn)) {
                itsNamespaces.put(k, v);
            }
        });
        target.removeSubsystem(nqn); // its controllers are torn down
        itsNamespaces.keySet().forEach(live::remove);
        j.did(() -> {
            Subsystem back = target.addSubsystem(ConfigMapping.subsystem(old, before.transport()));
            old.allowedHosts().forEach(back::allowHost);
            for (Map.Entry<NsKey, Live> e : itsNamespaces.entrySet()) {
                Live l = e.getValue();
                Namespace ns = back.addNamespace(l.namespace().config(), l.backend());
                ns.attachment(l.namespace().attachment());
                live.put(e.getKey(), new Live(nqn, l.config(), l.backend(), ns));
            }
            for (int p : ports) {
                if (target.port(p) != null) {
                    target.exposeSubsystem(p, nqn);
                }
            }
        });
        j.later(() -> {
            for (Live l : itsNamespaces.values()) {
                flushAndClose(l.backend(), nqn, l.config().nsid());
            }
            metrics.removeSubsystem(nqn);
        });
        LOG.info(LogContext.format(nqn, null, "subsystem removed; its controllers disconnect"));
    }

    private void changeSubsystem(SubsystemChange c, TargetConfig next, Map<NsKey, Opened> opened, Journal j)
            throws Exception {
        Subsystem sub = target.subsystem(c.nqn());
        String nqn = c.nqn();
        if (c.attributesChanged().contains("allow_any_host")) {
            boolean was = sub.allowAnyHost();
            sub.allowAnyHost(c.after().allowAnyHost());
            j.did(() -> sub.allowAnyHost(was));
            LOG.info(LogContext.format(nqn, null, "allow_any_host: " + was + " -> " + c.after().allowAnyHost()));
        }
        for (String a : c.attributesChanged()) {
            if (!a.equals("allow_any_host")) {
                LOG.warning(LogContext.format(nqn, null, a + " of a live subsystem takes effect on restart "
                        + "(hosts already hold the old identity)"));
            }
        }
        for (String h : c.allowedHostsAdded()) {
            sub.allowHost(h);
            j.did(() -> sub.disallowHost(h));
            LOG.info(LogContext.format(nqn, h, "host allowed"));
        }
        for (String h : c.allowedHostsRemoved()) {
            sub.disallowHost(h);
            j.did(() -> sub.allowHost(h));
            LOG.info(LogContext.format(nqn, h, "host no longer allowed"));
        }
        // Hosts that lost access lose their controllers (as the kernel target does), once nothing can roll back.
        j.later(() -> {
            for (Controller ctrl : sub.controllers()) {
                if (!sub.isHostAllowed(ctrl.hostNqn())) {
                    LOG.info(LogContext.format(nqn, ctrl.hostNqn(), "disconnecting controller " + ctrl.cntlid()
                            + ": host no longer allowed"));
                    ctrl.disconnectAll("host no longer allowed");
                }
            }
        });
        for (long nsid : c.namespacesRemoved()) {
            removeNamespace(sub, nsid, j);
        }
        for (NamespaceChange nc : c.namespacesChanged()) {
            NamespaceConfig a = nc.after();
            if (live.containsKey(new NsKey(nqn, a.nsid()))) {
                removeNamespace(sub, a.nsid(), j);
            }
            if (a.enabled()) {
                Opened o = opened.get(new NsKey(nqn, a.nsid()));
                if (o == null) {
                    // Same file or device as before: the old backend is closed now (not after the commit), so
                    // it can be opened again; the undo reopens the old settings.
                    Live old = findClosedForReopen(nqn, a.nsid(), j);
                    o = open(nqn, a);
                    opened.put(new NsKey(nqn, a.nsid()), o);
                    if (old != null) {
                        NamespaceConfig oldCfg = old.config();
                        j.did(() -> reopenAfterRollback(sub, oldCfg));
                    }
                }
                addNamespace(sub, o, j);
            }
        }
        for (NamespaceConfig n : c.namespacesAdded()) {
            if (n.enabled()) {
                addNamespace(sub, opened.get(new NsKey(nqn, n.nsid())), j);
            }
        }
    }

    /** Backends of namespaces removed in this reload, by key, so that a same-medium change can close one early. */
    private final Map<NsKey, Live> removedThisReload = new LinkedHashMap<>();

    private Live findClosedForReopen(String nqn, long nsid, Journal j) {
        Live old = removedThisReload.remove(new NsKey(nqn, nsid));
        if (old != null) {
            flushAndClose(old.backend(), nqn, nsid);
        }
        return old;
    }

    private void reopenAfterRollback(Subsystem sub, NamespaceConfig oldCfg) {
        try {
            Opened o = open(sub.nqn(), oldCfg);
            Namespace ns = sub.addNamespace(o.coreConfig(), o.backend());
            ns.attachment(metrics.namespaceIo(sub.nqn(), oldCfg.nsid()));
            live.put(new NsKey(sub.nqn(), oldCfg.nsid()), new Live(sub.nqn(), oldCfg, o.backend(), ns));
        } catch (Exception e) {
            LOG.log(Level.SEVERE, LogContext.format(sub.nqn(), null, "rollback could not reopen namespace "
                    + oldCfg.nsid() + ": " + e.getMessage()));
        }
    }

    private void addNamespace(Subsystem sub, Opened o, Journal j) {
        String nqn = sub.nqn();
        long nsid = o.config().nsid();
        var meters = metrics.namespaceIo(nqn, nsid);
        // Adding it raises the Namespace Attribute Changed notice on every controller of the subsystem.
        Namespace ns = sub.addNamespace(o.coreConfig(), o.backend());
        ns.attachment(meters);
        NsKey key = new NsKey(nqn, nsid);
        live.put(key, new Live(nqn, o.config(), o.backend(), ns));
        j.did(() -> {
            sub.removeNamespace(ns.nsid());
            live.remove(key);
            metrics.removeNamespace(nqn, nsid);
        });
        LOG.info(LogContext.format(nqn, null, "namespace " + nsid + " added (" + ns + ")"));
    }

    private void removeNamespace(Subsystem sub, long nsid, Journal j) {
        String nqn = sub.nqn();
        NsKey key = new NsKey(nqn, nsid);
        Live l = live.remove(key);
        if (l == null) {
            return;
        }
        // New commands to it fail with Invalid Namespace from now; those in its backend still complete.
        sub.removeNamespace((int) nsid);
        removedThisReload.put(key, l);
        j.did(() -> {
            Live again = removedThisReload.remove(key);
            if (again != null) {
                Namespace ns = sub.addNamespace(l.namespace().config(), l.backend());
                ns.attachment(l.namespace().attachment());
                live.put(key, new Live(nqn, l.config(), l.backend(), ns));
            }
        });
        j.later(() -> {
            Live gone = removedThisReload.remove(key);
            if (gone != null) {
                flushAndClose(gone.backend(), nqn, nsid);
            }
            if (!live.containsKey(key)) {
                metrics.removeNamespace(nqn, nsid);
            }
        });
        LOG.info(LogContext.format(nqn, null, "namespace " + nsid + " removed (" + l.backend().describe() + ")"));
    }

    /** Whether a backend is a file or device backend with operations still in flight (diagnostics). */
    static boolean busy(BlockBackend b) {
        return b instanceof AsyncFdBackend fd && fd.inFlight() > 0;
    }
}
