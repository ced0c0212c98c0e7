package dev.nvmf.target.rdma;

import dev.nvmf.target.core.QueueAcceptor;
import dev.nvmf.target.rdma.cm.CmAgent;
import dev.nvmf.target.rdma.cm.PortListener;
import dev.nvmf.target.rdma.poller.Poller;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.ffm.Libc;
import org.agrona.ErrorHandler;
import org.agrona.LangUtil;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The NVMe-oF RDMA transport: listeners, the CM agent and the pollers, over any {@link RdmaProvider}.
 *
 * <p>The agents run one of two ways, chosen when the transport opens: {@link #start()} gives each an
 * {@link AgentRunner} on its own thread; {@link #open()} gives each an {@link AgentInvoker} that a test calls
 * ({@link #cmInvoker()}, {@link #pollerInvoker(int)}: deterministic, no threads). Everything else is the same in
 * both, stopping included: {@link #stop(long)} asks every queue to drain (the same drain as a host disconnect), lets
 * the agents work until the drains are done, then closes the agents and releases everything.
 */
public final class RdmaTransport implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RdmaTransport.class.getName());
    /** How long stop() waits for queues whose QPs it destroyed to give back what the core held. */
    private static final long STOP_GRACE_NANOS = 2_000_000_000L;

    private final RdmaProvider provider;
    private final RdmaTransportConfig config;
    private final QueueAcceptor acceptor;
    private final LongSupplier clock;
    private final RdmaMetrics metrics = new RdmaMetrics();
    private final Poller[] pollers;
    private CmEventChannel channel;
    private EventWaiter cmWaiter;
    private CmAgent cm;
    private final List<AgentRunner> runners = new ArrayList<>();
    private AgentInvoker cmInvoker;
    private AgentInvoker[] pollerInvokers = new AgentInvoker[0];
    /** What waiting for the agents does: invoke them (invokers), or give their threads time (runners). */
    private Runnable progress = () -> { };
    private boolean opened;
    private boolean closed;

    public RdmaTransport(RdmaProvider provider, RdmaTransportConfig config, QueueAcceptor acceptor) {
        this(provider, config, acceptor, System::nanoTime);
    }

    /**
     * A transport whose deadlines and rate limits read {@code clock} (nanoseconds; {@link System#nanoTime} unless a
     * test drives the agents through invokers with a virtual clock, such as a manual soft fabric's).
     */
    public RdmaTransport(RdmaProvider provider, RdmaTransportConfig config, QueueAcceptor acceptor,
                         LongSupplier clock) {
        this.provider = provider;
        this.config = config;
        this.acceptor = acceptor;
        this.clock = clock;
        this.pollers = new Poller[config.pollers()];
        for (int i = 0; i < pollers.length; i++) {
            pollers[i] = new Poller(i, config, metrics, clock, provider.createEventWaiter());
        }
    }

    public RdmaTransportConfig config() { return config; }

    public RdmaMetrics metrics() { return metrics; }

    /**
     * Creates the event channel and listens on every port; the agents are then driven by the caller through
     * {@link #cmInvoker()} and {@link #pollerInvoker(int)}. A failure on the caller's thread reaches the caller.
     */
    public synchronized void open() {
        if (opened) return;
        listen();
        ErrorHandler rethrow = LangUtil::rethrowUnchecked;
        cmInvoker = new AgentInvoker(rethrow, null, cm);
        pollerInvokers = new AgentInvoker[pollers.length];
        for (int i = 0; i < pollers.length; i++) pollerInvokers[i] = new AgentInvoker(rethrow, null, pollers[i]);
        cmInvoker.start();
        for (AgentInvoker i : pollerInvokers) i.start();
        progress = this::invokeAll;
    }

    /** Listens on every port and starts the CM agent and every poller on a thread of its own. */
    public synchronized void start() {
        if (opened) return;
        checkPollerCpus();
        listen();
        run(cm, cm.idleStrategy(), -1);
        for (int i = 0; i < pollers.length; i++) run(pollers[i], pollers[i].idleStrategy(), config.pollerCpu(i));
        progress = () -> LockSupport.parkNanos(1_000_000L);
    }

    private void listen() {
        channel = provider.createEventChannel();
        cmWaiter = provider.createEventWaiter();
        cm = new CmAgent(config, provider, channel, cmWaiter, acceptor, pollers, metrics, clock);
        try {
            cm.listen();
        } catch (RuntimeException e) {
            cm.beginShutdown();
            cm.closeDevices();
            channel.close();
            cmWaiter.close();
            throw e;
        }
        opened = true;
    }

    /**
     * transport.poller_cpus must name CPUs this process may run on (its affinity mask, as systemd's CPUAffinity= or
     * taskset set it): a poller that cannot be pinned where the operator asked is refused at start, with the key.
     */
    private void checkPollerCpus() {
        if (config.pollerCpus().isEmpty()) return;
        List<Integer> allowed = Libc.currentThreadCpus();
        for (int cpu : config.pollerCpus()) {
            if (!allowed.contains(cpu)) {
                throw new IllegalStateException("transport.poller_cpus: CPU " + cpu + " is not one this process may"
                        + " run on (its CPUs: " + allowed + ")");
            }
        }
    }

    /** A poller's thread pins itself before its first pass; {@code cpu} -1: not pinned (the CM agent, or no list). */
    private static void pin(String role, int cpu) {
        if (cpu < 0) return;
        int errno = Libc.pinCurrentThread(List.of(cpu));
        if (errno == 0) {
            LOG.log(System.Logger.Level.INFO, role + " pinned to CPU " + cpu);
        } else {
            LOG.log(System.Logger.Level.ERROR, role + " could not be pinned to CPU " + cpu + " ("
                    + Libc.strerror(errno) + "): it runs where the scheduler puts it");
        }
    }

    private void run(Agent agent, IdleStrategy idle, int cpu) {
        // A RuntimeException that reaches the runner (the agents contain their own to the queue concerned) is logged
        // and the agent carries on. An Error ends the agent's thread (AgentRunner rethrows it): see healthy().
        AgentRunner runner = new AgentRunner(idle, t -> LOG.log(System.Logger.Level.ERROR, agent.roleName()
                + (t instanceof Error ? " died; the transport is unhealthy and the daemon must restart" : " failed"),
                t), null, agent);
        runners.add(runner);
        AgentRunner.startOnThread(runner, r -> {
            Thread t = new Thread(() -> {
                pin(agent.roleName(), cpu);
                r.run();
            }, agent.roleName());
            t.setDaemon(true);
            return t;
        });
    }

    private void invokeAll() {
        cmInvoker.invoke();
        for (AgentInvoker i : pollerInvokers) i.invoke();
    }

    public CmAgent cm() { return cm; }

    /**
     * Whether every agent thread still runs (after {@link #start()}; invokers are always healthy). An Error
     * (OutOfMemoryError, StackOverflowError) in an agent ends its thread: it may have struck between two writes of a
     * request's state, so the queues of that agent can no longer be trusted to reuse no buffer the hardware still
     * owns, and carrying on is not safe. The daemon withholds its watchdog ping when this is false, so systemd
     * restarts it; the process exit destroys every QP (the kernel's uverbs cleanup) before the memory goes.
     */
    public boolean healthy() {
        synchronized (this) {
            if (closed) return false;
        }
        for (AgentRunner r : runners) {
            Thread t = r.thread(); // null until its thread has started
            if (t != null && !t.isAlive()) return false;
        }
        return true;
    }

    /** The CM agent's invoker, after {@link #open()}. */
    public AgentInvoker cmInvoker() { return cmInvoker; }

    /** Poller {@code i}'s invoker, after {@link #open()}. */
    public AgentInvoker pollerInvoker(int i) { return pollerInvokers[i]; }

    /**
     * Listens on another port while running (configuration reload): on the CM agent. Returns once the port
     * listens; throws (and listens on nothing new) if it cannot.
     */
    public void addListener(RdmaPortConfig port) {
        onCmAgent(() -> {
            cm.addListener(port);
            return null;
        });
    }

    /** Stops listening on a port while running; its connected queues stay. Returns whether it was listening. */
    public boolean removeListener(int portId) {
        return onCmAgent(() -> cm.removeListener(portId));
    }

    private <T> T onCmAgent(Callable<T> task) {
        synchronized (this) {
            if (!opened || closed) throw new IllegalStateException("transport not running");
        }
        CompletableFuture<T> f = new CompletableFuture<>();
        cm.submit(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!f.isDone() && System.nanoTime() < deadline) progress.run();
        if (!f.isDone()) throw new IllegalStateException("the CM agent did not answer in 10 s");
        try {
            return f.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the CM agent", e);
        }
    }

    public Poller poller(int i) { return pollers[i]; }

    public int pollerCount() { return pollers.length; }

    /** The addresses the listeners are bound to, in port order. */
    public List<InetSocketAddress> listenAddresses() {
        List<InetSocketAddress> out = new ArrayList<>();
        for (PortListener l : cm.listeners()) out.add(l.localAddress());
        return out;
    }

    /** Queues accepted and not yet released (any thread). */
    public long openQueues() { return metrics.queuesOpen.get(); }

    /** The first half of {@link #stop(long)}: the CM agent stops listening and asks every queue to drain. */
    public void beginShutdown() {
        if (cm != null) cm.submit(cm::beginShutdown);
    }

    /**
     * Drains every queue (each ends exactly like a disconnect: flushed, counted back, released, core queue
     * closed), then closes the agents and releases CQs, slabs and PDs. Waits up to {@code timeoutMillis} for the
     * drains.
     */
    public void stop(long timeoutMillis) {
        synchronized (this) {
            if (!opened || closed) return;
        }
        beginShutdown();
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (openQueues() > 0 && System.nanoTime() < deadline) progress.run();
        if (openQueues() > 0) {
            // Never "release anyway": the hardware may still write what the queues use. Their QPs are destroyed
            // first (that stops the hardware), then the queues end like a bounded drain and are released.
            LOG.log(System.Logger.Level.WARNING, "{0} queue(s) did not drain in {1} ms; destroying their QPs",
                    openQueues(), timeoutMillis);
            cm.submit(cm::destroyUndrainedQueues);
            long grace = System.nanoTime() + STOP_GRACE_NANOS;
            while (openQueues() > 0 && System.nanoTime() < grace) progress.run();
            if (openQueues() > 0) {
                LOG.log(System.Logger.Level.WARNING, "{0} queue(s) still wait for the core; their QPs are destroyed",
                        openQueues());
            }
        }
        close();
    }

    public void stop() {
        stop(10_000);
    }

    /**
     * The second half of {@link #stop(long)}: closes the agents (their threads end), then releases pollers' CQs
     * and pools, device PDs and slabs, and the event channel.
     */
    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        if (!opened) {
            for (Poller p : pollers) p.close(); // their waiters
            return;
        }
        cm.requestStop();
        for (Poller p : pollers) p.requestStop();
        for (AgentRunner r : runners) closeWithin(r, 5);
        if (cmInvoker != null) cmInvoker.close();
        for (AgentInvoker i : pollerInvokers) i.close();
        // The agents are closed: this thread owns what they owned. Listeners the CM agent did not get to close
        // (stop() found no queue to wait for) go now. The order is always QP destroyed, then the CQs, then the
        // memory deregistered, then freed: a queue still open (the core still holds a request) has its QP destroyed
        // here; where that fails, its device's memory is leaked on purpose.
        cm.beginShutdown();
        cm.destroyRemainingQueuePairs();
        for (Poller p : pollers) p.close();
        cm.closeDevices();
        channel.close();
        cmWaiter.close();
    }

    /** Closes an agent's runner, waiting at most {@code seconds} for its thread (AgentRunner.close alone waits on). */
    private static void closeWithin(AgentRunner runner, int seconds) {
        int[] waited = {0};
        try {
            runner.close(1000, thread -> {
                if (++waited[0] >= seconds) throw new IllegalStateException(thread.getName() + " did not stop");
            });
        } catch (IllegalStateException e) {
            LOG.log(System.Logger.Level.WARNING, e.getMessage() + " in " + seconds + " s; releasing anyway");
        }
    }
}
