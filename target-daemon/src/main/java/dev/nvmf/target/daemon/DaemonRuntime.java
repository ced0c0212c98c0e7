package dev.nvmf.target.daemon;

import dev.nvmf.target.backend.AsyncFdBackend;
import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.backend.BlockBackends;
import dev.nvmf.target.backend.FileBackend;
import dev.nvmf.target.backend.rbd.RbdBackend;
import dev.nvmf.target.config.AnaGroupSection;
import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigDiff.NamespaceChange;
import dev.nvmf.target.config.ConfigDiff.PortChange;
import dev.nvmf.target.config.ConfigDiff.SubsystemChange;
import dev.nvmf.target.config.NamespaceSection;
import dev.nvmf.target.config.PortSection;
import dev.nvmf.target.config.ReferralSection;
import dev.nvmf.target.config.SubsystemSection;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.config.TransportSection;
import dev.nvmf.target.core.NvmeTarget;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.subsystem.AnaPortStates;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Referral;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.nvme.AnaState;
import dev.nvmf.target.rdma.NotifyingIdleStrategy;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.service.EnvironmentException;
import dev.nvmf.target.service.LogContext;
import dev.nvmf.target.service.TargetRuntime;
import dev.nvmf.verbs.RdmaProvider;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.SystemNanoClock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The real target behind {@code nvmf-target serve}: the YAML configuration mapped onto the NVMe core
 * ({@link NvmeTarget}: ports, subsystems, namespaces on {@link BlockBackends}, allowed hosts, which port exposes
 * which subsystem), the RDMA transport on a verbs provider (rdma-core through FFM in production, the soft fabric
 * in tests), a timer thread (keep-alive, metrics that are pulled from the transport), the {@link BackendAgent}
 * (resizes an RBD image reports become the core's revalidation; RBD backends are closed there), and the metrics and
 * event logs of {@link DaemonObserver}.
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
     * @param backendFlushWait   how long closing a backend waits for its final flush
     */
    public record Options(RdmaProvider provider, boolean remoteInvalidation, Duration backendFlushWait) {
        public Options {
            Objects.requireNonNull(provider, "provider");
            Objects.requireNonNull(backendFlushWait, "backendFlushWait");
        }

        public static Options of(RdmaProvider provider) {
            return new Options(provider, true, Duration.ofSeconds(5));
        }
    }

    /** A namespace being served: its backend and the core's view of it. */
    private record Live(String nqn, NamespaceSection config, BlockBackend backend, Namespace namespace) {}

    private record NsKey(String nqn, long nsid) {}

    private final Options options;
    private final TargetMetrics metrics;
    private final Map<NsKey, Live> live = new LinkedHashMap<>();
    private NvmeTarget target;
    private RdmaTransport transport;
    private TransportMetricsBridge bridge;
    private TargetConfig config;
    private AgentRunner timer;
    private TimerAgent timerAgent;
    private volatile Thread timerThread;
    private final Set<Controller> expiriesCounted = Collections.newSetFromMap(new IdentityHashMap<>());
    private BackendAgent backendAgent;
    /** Backend closes handed to the backend agent by reloads and not finished yet: stop waits for them. */
    private final List<CompletableFuture<Void>> closing = new ArrayList<>();

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
        startBackendAgent();
        try {
            target = new NvmeTarget(ConfigMapping.options(cfg.transport()), SystemNanoClock.INSTANCE);
            NvmeTarget core = target;
            timerAgent = new TimerAgent(System::nanoTime, core::nextTimerDeadline, this::tick);
            target.observer(new DaemonObserver(metrics, timerAgent::wake));
            for (SubsystemSection s : cfg.subsystems()) {
                for (NamespaceSection n : s.namespaces()) {
                    if (n.enabled()) {
                        opened.put(new NsKey(s.nqn(), n.nsid()), open(s.nqn(), n));
                    }
                }
            }
            Journal j = new Journal();
            for (PortSection p : cfg.ports()) {
                target.addPort(ConfigMapping.port(p, cfg.discovery()));
                applyAnaStates(p);
            }
            syncReferrals(cfg);
            for (SubsystemSection s : cfg.subsystems()) {
                addSubsystem(s, opened, j);
            }
            for (PortSection p : cfg.ports()) {
                for (String nqn : p.subsystems()) {
                    target.exposeSubsystem(p.id(), nqn);
                }
            }
            transport = new RdmaTransport(options.provider(),
                    ConfigMapping.transport(cfg, options.remoteInvalidation()), target);
            // start() binds and listens on every port before it returns: READY=1 after this is true.
            transport.start();
            List<dev.nvmf.target.rdma.VerbsCalls> calls = new ArrayList<>();
            for (int i = 0; i < transport.pollerCount(); i++) calls.add(transport.poller(i).verbsCalls());
            bridge = new TransportMetricsBridge(metrics, transport.metrics(), calls);
            config = cfg;
            startTimer();
            for (PortSection p : cfg.ports()) {
                LOG.info("port " + p.id() + ": listening on rdma " + p.endpoint() + " for " + p.subsystems());
            }
        } catch (Exception | Error e) {
            LOG.info("start failed; releasing what was taken");
            if (transport != null) {
                transport.stop(1000);
                transport = null;
            }
            for (Map.Entry<NsKey, Opened> o : opened.entrySet()) {
                release(o.getValue().backend(), o.getKey().nqn(), o.getKey().nsid(), false);
            }
            retireBackendAgent();
            for (SubsystemSection s : cfg.subsystems()) {
                metrics.removeSubsystem(s.nqn());
            }
            live.clear();
            target = null;
            EnvironmentException explained = StartupDiagnosis.explain(e, cfg.ports());
            if (explained != null) {
                throw explained;
            }
            throw e;
        }
    }

    /** Starts the backend agent's thread (it ends by itself after {@link #retireBackendAgent}). */
    private void startBackendAgent() {
        backendAgent = new BackendAgent();
        // Control-plane work only, a few tasks a day: the thread parks between them (BackendAgent.submit unparks it).
        AgentRunner runner = new AgentRunner(new NotifyingIdleStrategy(backendAgent), e -> {
            if (!(e instanceof AgentTerminationException)) {
                LOG.log(Level.WARNING, "backend agent", e);
            }
        }, null, backendAgent);
        AgentRunner.startOnThread(runner, r -> {
            Thread t = new Thread(r);
            t.setDaemon(true); // a close blocked by a lost cluster must not keep the process alive
            return t;
        });
    }

    /**
     * Ends the backend agent once what was queued before has run: its thread exits by itself, and the caller never
     * waits on a close that a lost cluster may hold for minutes.
     */
    private void retireBackendAgent() {
        backendAgent.retire();
        backendAgent = null;
    }

    private void startTimer() {
        timer = new AgentRunner(new NotifyingIdleStrategy(timerAgent), e -> LOG.log(Level.WARNING, "timer", e),
                null, timerAgent);
        timerThread = AgentRunner.startOnThread(timer, r -> {
            Thread t = new Thread(r, "nvmf-timers");
            t.setDaemon(true);
            return t;
        });
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
        // The CM agent and every poller (an Error ends an agent's thread: RdmaTransport.healthy says why that is fatal).
        return transport.healthy();
    }

    // ------------------------------------------------------------------------------------------- stop

    @Override
    public void stop(Duration timeout) {
        if (target == null) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        if (timer != null) {
            // Wakes the sleeping agent at once; it blocks no more.
            timerAgent.stopping();
            timer.close(10, LockSupport::unpark);
        }
        // Stop listening, drain every queue (each host sees its connection end), release transport resources.
        long drainMillis = Math.max(100, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()) * 3 / 4);
        transport.stop(drainMillis);
        if (bridge != null) {
            bridge.close();
        }
        // Every queue is closed: the backends are idle. Flush what they cache, then close them (RBD images on the
        // backend agent, which also runs what reloads left to close; they get what is left of the timeout).
        for (Live l : live.values()) {
            release(l.backend(), l.nqn(), l.config().nsid(), true);
        }
        live.clear();
        int left = awaitCloses(deadline);
        retireBackendAgent();
        LOG.info("stopped: every queue drained, " + transport.metrics().queuesClosed.sum()
                + " queues released in all, backends closed"
                + (left == 0 ? "" : " but " + left + " RBD image(s) still closing (their cluster does not answer)"));
        target.close(); // no command is in flight: the core's own buffers go
        target = null;
    }

    /** Waits until the closes on the backend agent are done or the deadline passed; returns how many are not. */
    private int awaitCloses(long deadlineNanos) {
        for (CompletableFuture<Void> f : closing) {
            try {
                f.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                break;
            } catch (ExecutionException e) {
                // BackendAgent completes every task normally; nothing to report here
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        closing.removeIf(CompletableFuture::isDone);
        int left = closing.size();
        closing.clear();
        return left;
    }

    /**
     * Closes a backend no namespace serves any more, after a final flush if {@code flush}. An RBD image closes on
     * the backend agent: with its cluster gone, {@code RbdBackend.close} waits for the cluster's timeouts, which
     * would stall the service's control thread past the systemd watchdog. Anything else closes here, at once (a
     * file or device may have to be opened again right after, in the same reload).
     */
    private void release(BlockBackend backend, String nqn, long nsid, boolean flush) {
        if (backend instanceof RbdBackend rbd) {
            rbd.capacityListener(null);
            closing.removeIf(CompletableFuture::isDone);
            closing.add(backendAgent.submit("closing " + backend.describe(), () -> {
                if (flush) {
                    flushAndClose(backend, nqn, nsid);
                } else {
                    closeQuietly(backend);
                }
            }));
        } else if (flush) {
            flushAndClose(backend, nqn, nsid);
        } else {
            closeQuietly(backend);
        }
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
    private record Opened(NamespaceSection config, BlockBackend backend,
                          NamespaceConfig coreConfig) {}

    private Opened open(String nqn, NamespaceSection n) throws Exception {
        BlockBackend b = BlockBackends.open(ConfigMapping.backend(n));
        if (b instanceof FileBackend f && f.directIoRefused()) {
            LOG.warning(LogContext.format(nqn, null, "namespace " + n.nsid() + ": the file system of " + n.path()
                    + " refuses O_DIRECT (tmpfs does): serving it through the page cache; set 'buffered_io: true' "
                    + "on this namespace to say so and silence this warning"));
        }
        try {
            return new Opened(n, b, ConfigMapping.namespace(n, b));
        } catch (RuntimeException e) {
            release(b, nqn, n.nsid(), false);
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
            for (SubsystemSection s : diff.subsystemsAdded()) {
                ConfigMapping.subsystem(s);
                for (NamespaceSection n : s.namespaces()) {
                    if (n.enabled()) {
                        opened.put(new NsKey(s.nqn(), n.nsid()), open(s.nqn(), n));
                    }
                }
            }
            for (SubsystemChange c : diff.subsystemsChanged()) {
                for (NamespaceSection n : c.namespacesAdded()) {
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
            for (PortSection p : diff.portsAdded()) {
                ConfigMapping.port(p, next.discovery());
                ConfigMapping.rdmaPort(p, before.transport());
            }
            for (PortChange pc : diff.portsChanged()) {
                ConfigMapping.port(pc.after(), next.discovery());
                ConfigMapping.rdmaPort(pc.after(), before.transport());
            }
            // New listeners bind now: a host that connects before the port exists in the core gets its Connect
            // refused (unknown subsystem on that port), nothing else.
            for (PortSection p : diff.portsAdded()) {
                transport.addListener(ConfigMapping.rdmaPort(p, before.transport()));
                bound.add(p.id());
            }
        } catch (Exception e) {
            releasePrepared(opened, bound);
            LOG.warning("reload refused before any change: " + e.getMessage());
            EnvironmentException explained = StartupDiagnosis.explain(e, diff.portsAdded());
            if (explained != null) {
                throw explained;
            }
            throw e;
        }

        // ---- commit, step by step, with undo
        Journal j = new Journal();
        try {
            for (int id : diff.portsRemoved()) {
                removePort(id, before, j);
            }
            syncReferrals(next);
            j.did(() -> syncReferrals(before));
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
            for (SubsystemSection s : diff.subsystemsAdded()) {
                addSubsystem(s, opened, j);
                LOG.info(LogContext.format(s.nqn(), null, "subsystem added (" + s.namespaces().size()
                        + " namespaces)"));
            }
            for (PortSection p : diff.portsAdded()) {
                addPort(p, before, next, false, j);
            }
            for (PortChange pc : diff.portsChanged()) {
                if (pc.listenerChanged()) {
                    addPort(pc.after(), before, next, true, j);
                } else {
                    for (String nqn : pc.subsystemsAdded()) {
                        expose(pc.id(), nqn, j);
                    }
                    for (int g : pc.anaGroupsChanged()) {
                        changeAnaState(pc.id(), g, pc.after().configuredAnaState(g).orElse(null), j);
                    }
                }
            }
            // The core's port records carry the referrals and the discovery scope: replace those that changed.
            for (PortSection p : next.ports()) {
                Port old = target.port(p.id());
                Port now = ConfigMapping.port(p, next.discovery());
                if (old != null && !old.equals(now)) {
                    target.addPort(now);
                    j.did(() -> target.addPort(old));
                }
            }
            if (diff.discoveryChanged()) {
                LOG.info("discovery.all_ports: " + before.discovery().allPorts() + " -> "
                        + next.discovery().allPorts());
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

    /**
     * Whether the changed namespace names the same file or device as before, which can be opened only after the old
     * backend is closed. Never an RBD image: librbd lets two clients open one image (its exclusive lock passes from
     * one to the other), so the new settings open in the prepare phase, and a wrong key, a missing image or an
     * unreachable cluster refuses the reload with nothing changed.
     */
    private static boolean sameMedium(NamespaceSection a, NamespaceSection b) {
        return a.kind() == b.kind() && a.kind() != NamespaceSection.Kind.RAM && a.kind() != NamespaceSection.Kind.RBD
                && Objects.equals(a.path(), b.path());
    }

    private void releasePrepared(Map<NsKey, Opened> opened, List<Integer> bound) {
        for (Map.Entry<NsKey, Opened> o : opened.entrySet()) {
            boolean serving = false;
            for (Live l : live.values()) {
                serving |= l.backend() == o.getValue().backend();
            }
            if (!serving) {
                release(o.getValue().backend(), o.getKey().nqn(), o.getKey().nsid(), false);
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

    private void addPort(PortSection p, TargetConfig before, TargetConfig next, boolean bind, Journal j) {
        if (bind) {
            transport.addListener(ConfigMapping.rdmaPort(p, before.transport()));
            j.did(() -> transport.removeListener(p.id()));
        }
        target.addPort(ConfigMapping.port(p, next.discovery()));
        j.did(() -> target.removePort(p.id()));
        applyAnaStates(p);
        for (String nqn : p.subsystems()) {
            target.exposeSubsystem(p.id(), nqn);
        }
        LOG.info("port " + p.id() + ": listening on rdma " + p.endpoint() + " for " + p.subsystems());
    }

    private void removePort(int id, TargetConfig before, Journal j) {
        PortSection old = before.port(id).orElseThrow();
        transport.removeListener(id);
        j.did(() -> transport.addListener(ConfigMapping.rdmaPort(old, before.transport())));
        target.removePort(id); // its controllers are torn down
        j.did(() -> {
            target.addPort(ConfigMapping.port(old, before.discovery()));
            applyAnaStates(old);
            for (String nqn : old.subsystems()) {
                if (target.subsystem(nqn) != null) {
                    target.exposeSubsystem(id, nqn);
                }
            }
        });
        LOG.info("port " + id + ": removed (" + old.endpoint() + "); its controllers disconnect");
    }

    /** A new port's ANA group states, as its {@code ana_groups} sets them (the others keep their defaults). */
    private void applyAnaStates(PortSection p) {
        for (AnaGroupSection g : p.anaGroups()) {
            target.setAnaState(p.id(), g.grpid(), g.state());
        }
    }

    /**
     * A reload changed one group's entry in a port's {@code ana_groups}: the state the file now sets, or the default
     * when the file no longer lists the group (null). Hosts connected through the port get the ANA change notice
     * (NvmeTarget.setAnaState). A state set with {@code nvmf-target ana set} on any other group stays as it is.
     */
    private void changeAnaState(int portId, int groupId, AnaState state, Journal j) {
        AnaPortStates states = target.anaStates(portId);
        boolean wasConfigured = states.isConfigured(groupId);
        AnaState before = state == null ? target.resetAnaState(portId, groupId)
                : target.setAnaState(portId, groupId, state);
        j.did(() -> {
            if (wasConfigured) {
                target.setAnaState(portId, groupId, before);
            } else {
                target.resetAnaState(portId, groupId);
            }
        });
        LOG.info("port " + portId + ": ANA group " + groupId + ": " + before + " -> " + states.state(groupId)
                + (state == null ? " (no longer in ana_groups: the default)" : ""));
    }

    /**
     * Sets an ANA group's state on a port now (planned failover: {@code nvmf-target ana set}, through the control
     * socket). It lasts until the daemon restarts, until a reload changes that group's entry on that port in the
     * file, or until the port is re-created; hosts connected through the port are told at once. Control thread.
     *
     * @return one line saying what changed
     * @throws IllegalArgumentException for a port or group that does not exist
     */
    @Override
    public String setAnaState(int portId, int groupId, AnaState state) {
        if (target == null) {
            throw new IllegalStateException("not running");
        }
        if (target.port(portId) == null) {
            throw new IllegalArgumentException("no port " + portId + " (configured: " + portIds() + ")");
        }
        AnaState before = target.setAnaState(portId, groupId, state);
        long told = target.controllers().stream().filter(c -> !c.isDiscovery() && c.port().id() == portId).count();
        String line = "port " + portId + " ANA group " + groupId + ": " + before + " -> " + state
                + (before == state ? " (unchanged)" : " (" + told + " controllers on the port told)");
        LOG.info("ana set: " + line);
        return line;
    }

    /** Every port's ANA group states, one line each: "port 1 group 1 optimized" (groups in use only). */
    @Override
    public List<String> anaStates() {
        if (target == null) {
            throw new IllegalStateException("not running");
        }
        List<String> out = new ArrayList<>();
        int[] groups = target.anaGroupIds();
        for (Port p : target.ports()) {
            AnaPortStates states = target.anaStates(p.id());
            for (int g : groups) {
                out.add("port " + p.id() + " group " + g + " " + states.state(g));
            }
        }
        return out;
    }

    private List<Integer> portIds() {
        return target.ports().stream().map(Port::id).toList();
    }

    /**
     * Makes the core's referral list the referrals of every configured port, each once. The core keeps one list for
     * the discovery log; the port records ({@link Port#referrals}) say which port each belongs to.
     */
    private void syncReferrals(TargetConfig cfg) {
        Set<Referral> wanted = new LinkedHashSet<>();
        for (PortSection p : cfg.ports()) {
            for (ReferralSection r : p.referrals()) {
                wanted.add(ConfigMapping.referral(r));
            }
        }
        for (Referral r : target.referrals()) {
            if (!wanted.contains(r)) {
                target.removeReferral(r);
                LOG.info("discovery referral removed: " + describe(r));
            }
        }
        List<Referral> present = target.referrals();
        for (Referral r : wanted) {
            if (!present.contains(r)) {
                target.addReferral(r);
                LOG.info("discovery referral added: " + describe(r));
            }
        }
    }

    private static String describe(Referral r) {
        return (r.transportType() == dev.nvmf.target.nvme.DiscoveryLog.TRTYPE_TCP ? "tcp " : "rdma ")
                + r.address() + ":" + r.serviceId() + " (portid " + r.portId() + ")";
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

    private void addSubsystem(SubsystemSection s, Map<NsKey, Opened> opened, Journal j) {
        Subsystem sub = target.addSubsystem(ConfigMapping.subsystem(s));
        metrics.subsystem(s.nqn());
        j.did(() -> {
            target.removeSubsystem(s.nqn());
            live.keySet().removeIf(k -> k.nqn().equals(s.nqn()));
            metrics.removeSubsystem(s.nqn());
        });
        for (String h : s.allowedHosts()) {
            sub.allowHost(h);
        }
        for (NamespaceSection n : s.namespaces()) {
            if (n.enabled()) {
                addNamespace(sub, opened.get(new NsKey(s.nqn(), n.nsid())), j);
            }
        }
    }

    private void removeSubsystem(String nqn, TargetConfig before, Journal j) {
        SubsystemSection old = before.subsystem(nqn).orElseThrow();
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
            Subsystem back = target.addSubsystem(ConfigMapping.subsystem(old));
            old.allowedHosts().forEach(back::allowHost);
            for (Map.Entry<NsKey, Live> e : itsNamespaces.entrySet()) {
                Live l = e.getValue();
                Namespace ns = back.addNamespace(l.namespace().currentConfig(), l.backend());
                ns.observer(l.namespace().observer());
                watchCapacity(back, ns);
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
                release(l.backend(), nqn, l.config().nsid(), true);
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
            NamespaceSection a = nc.after();
            Live serving = live.get(new NsKey(nqn, a.nsid()));
            if (nc.anaGroupOnly() && serving != null) {
                moveAnaGroup(serving, nc, j);
                continue;
            }
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
                        NamespaceSection oldCfg = old.config();
                        j.did(() -> reopenAfterRollback(sub, oldCfg));
                    }
                }
                addNamespace(sub, o, j);
            }
        }
        for (NamespaceSection n : c.namespacesAdded()) {
            if (n.enabled()) {
                addNamespace(sub, opened.get(new NsKey(nqn, n.nsid())), j);
            }
        }
    }

    /**
     * A namespace moves to another ANA group and stays as it is otherwise (kernel configfs ana_grpid): commands keep
     * flowing, every controller of the subsystem gets the ANA change notice.
     */
    private void moveAnaGroup(Live serving, NamespaceChange nc, Journal j) {
        String nqn = serving.nqn();
        int nsid = (int) nc.after().nsid();
        NsKey key = new NsKey(nqn, nsid);
        target.moveNamespaceAnaGroup(nqn, nsid, nc.after().anaGroup());
        live.put(key, new Live(nqn, nc.after(), serving.backend(), serving.namespace()));
        j.did(() -> {
            target.moveNamespaceAnaGroup(nqn, nsid, nc.before().anaGroup());
            live.put(key, serving);
        });
        LOG.info(LogContext.format(nqn, null, "namespace " + nsid + ": ANA group " + nc.before().anaGroup() + " -> "
                + nc.after().anaGroup()));
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

    private void reopenAfterRollback(Subsystem sub, NamespaceSection oldCfg) {
        try {
            Opened o = open(sub.nqn(), oldCfg);
            Namespace ns = sub.addNamespace(o.coreConfig(), o.backend());
            ns.observer(new NamespaceMeters(sub.nqn(), metrics.namespaceIo(sub.nqn(), oldCfg.nsid())));
            watchCapacity(sub, ns);
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
        ns.observer(new NamespaceMeters(nqn, meters));
        watchCapacity(sub, ns);
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
                Namespace ns = sub.addNamespace(l.namespace().currentConfig(), l.backend());
                ns.observer(l.namespace().observer());
                watchCapacity(sub, ns);
                live.put(key, new Live(nqn, l.config(), l.backend(), ns));
            }
        });
        j.later(() -> {
            Live gone = removedThisReload.remove(key);
            if (gone != null) {
                release(gone.backend(), nqn, nsid, true);
            }
            if (!live.containsKey(key)) {
                metrics.removeNamespace(nqn, nsid);
            }
        });
        LOG.info(LogContext.format(nqn, null, "namespace " + nsid + " removed (" + l.backend().describe() + ")"));
    }

    /**
     * Lets an RBD namespace's resizes reach the core: the backend reports them on its size-monitor thread, which
     * only queues them to the backend agent; there the core revalidates the namespace and tells every controller
     * (changed namespace list, Namespace Attribute Changed). A resize that came between the open and now is caught
     * by one revalidation queued here.
     */
    private void watchCapacity(Subsystem sub, Namespace ns) {
        if (ns.backend() instanceof RbdBackend rbd) {
            BackendAgent agent = backendAgent;
            String what = "namespace " + ns.nsid() + " of " + sub.nqn() + ": resize of " + rbd.describe();
            rbd.capacityListener((b, oldBytes, newBytes) -> agent.submit(what, () -> adoptCapacity(sub, ns)));
            agent.submit(what, () -> adoptCapacity(sub, ns));
        }
    }

    /**
     * On reload: every file and block-device namespace reads its medium's size again (a whole-file namespace
     * lseek(SEEK_END), a device BLKGETSIZE64) and, where it changed, the core tells every controller (changed
     * namespace list, Namespace Attribute Changed), as the kernel target's {@code revalidate_size} does. RBD images
     * are left out: their size thread already reports every resize, and asking librbd here could block the service
     * thread on an unreachable cluster. A RAM namespace's size changes only with its configuration (a new namespace).
     */
    @Override
    public void revalidateNamespaces() {
        if (target == null) {
            return;
        }
        for (Live l : live.values()) {
            if (l.backend() instanceof AsyncFdBackend) {
                Subsystem sub = target.subsystem(l.nqn());
                if (sub != null) {
                    adoptCapacity(sub, l.namespace());
                }
            }
        }
    }

    /**
     * On the backend agent (RBD) or the service thread (reload): the core adopts the medium's size, unless the
     * namespace was removed or replaced; the namespace's {@link NamespaceMeters} logs a change.
     */
    private static void adoptCapacity(Subsystem sub, Namespace ns) {
        if (sub.namespace(ns.nsid()) == ns) {
            sub.revalidateNamespace(ns.nsid());
        }
    }

    /** Whether a backend is a file or device backend with operations still in flight (diagnostics). */
    static boolean busy(BlockBackend b) {
        return b instanceof AsyncFdBackend fd && fd.inFlight() > 0;
    }
}
