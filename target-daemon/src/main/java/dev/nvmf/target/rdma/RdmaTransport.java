package dev.nvmf.target.rdma;

import dev.nvmf.target.core.QueueAcceptor;
import dev.nvmf.target.rdma.cm.CmEventLoop;
import dev.nvmf.target.rdma.cm.PortListener;
import dev.nvmf.target.rdma.poller.Poller;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.RdmaProvider;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The NVMe-oF RDMA transport: listeners, the CM thread and the pollers, over any {@link RdmaProvider}.
 *
 * <p>Two ways to run it: {@link #start()} starts the CM thread and one thread per poller; tests instead call
 * {@link #open()} and drive {@link #cm()}{@code .doWork()} and {@link #poller(int)}{@code .doWork()} themselves
 * (deterministic, no threads). {@link #stop()} drains every queue (the same drain as a host disconnect) and then
 * releases everything; in manual mode use {@link #beginShutdown()}, pump, then {@link #close()}.
 */
public final class RdmaTransport implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RdmaTransport.class.getName());

    private final RdmaProvider provider;
    private final RdmaTransportConfig config;
    private final QueueAcceptor acceptor;
    private final RdmaMetrics metrics = new RdmaMetrics();
    private final Poller[] pollers;
    private CmEventChannel channel;
    private CmEventLoop cm;
    private final List<Thread> threads = new ArrayList<>();
    private boolean opened;
    private boolean closed;

    public RdmaTransport(RdmaProvider provider, RdmaTransportConfig config, QueueAcceptor acceptor) {
        this.provider = provider;
        this.config = config;
        this.acceptor = acceptor;
        this.pollers = new Poller[config.pollers()];
        for (int i = 0; i < pollers.length; i++) pollers[i] = new Poller(i, config, metrics);
    }

    public RdmaTransportConfig config() { return config; }

    public RdmaMetrics metrics() { return metrics; }

    /** Creates the event channel and listens on every port, without starting threads. */
    public synchronized void open() {
        if (opened) return;
        channel = provider.createEventChannel();
        cm = new CmEventLoop(config, channel, acceptor, pollers, metrics);
        try {
            cm.listen();
        } catch (RuntimeException e) {
            cm.beginShutdown();
            channel.close();
            throw e;
        }
        opened = true;
    }

    /** Opens and starts the CM thread and the poller threads. */
    public synchronized void start() {
        open();
        Thread cmThread = new Thread(cm, "nvmf-rdma-cm");
        cmThread.setDaemon(true);
        threads.add(cmThread);
        for (Poller p : pollers) {
            Thread t = new Thread(p, "nvmf-rdma-poller-" + p.index());
            t.setDaemon(true);
            threads.add(t);
        }
        for (Thread t : threads) t.start();
    }

    public CmEventLoop cm() { return cm; }

    /**
     * Listens on another port while running (configuration reload): on the CM thread when it runs, else here.
     * Returns once the port listens; throws (and listens on nothing new) if it cannot.
     */
    public void addListener(RdmaPortConfig port) {
        onCmThread(() -> {
            cm.addListener(port);
            return null;
        });
    }

    /** Stops listening on a port while running; its connected queues stay. Returns whether it was listening. */
    public boolean removeListener(int portId) {
        return onCmThread(() -> cm.removeListener(portId));
    }

    private <T> T onCmThread(java.util.concurrent.Callable<T> task) {
        synchronized (this) {
            if (!opened || closed) throw new IllegalStateException("transport not running");
        }
        if (threads.isEmpty()) {
            try {
                return task.call();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        java.util.concurrent.CompletableFuture<T> f = new java.util.concurrent.CompletableFuture<>();
        cm.submit(() -> {
            try {
                f.complete(task.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        try {
            return f.get(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) throw r;
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the CM thread", e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("the CM thread did not answer in 10 s", e);
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

    /** Stops listening and asks every queue to drain (manual mode; {@link #stop()} does it for threads). */
    public void beginShutdown() {
        if (cm != null) cm.beginShutdown();
    }

    /**
     * Drains every queue (each ends exactly like a disconnect: flushed, counted back, released, core queue
     * closed), then stops the threads and releases CQs, slabs and PDs. Waits up to {@code timeoutMillis} for the
     * drains.
     */
    public void stop(long timeoutMillis) {
        synchronized (this) {
            if (!opened || closed) return;
        }
        if (threads.isEmpty()) {
            beginShutdown();
            long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
            while (openQueues() > 0 && System.nanoTime() < deadline) {
                int w = cm.doWork();
                for (Poller p : pollers) w += p.doWork();
                if (w == 0) Thread.onSpinWait();
            }
        } else {
            cm.submit(cm::beginShutdown);
            long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
            while (openQueues() > 0 && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (openQueues() > 0) {
            LOG.log(System.Logger.Level.WARNING, "{0} queue(s) did not drain in {1} ms; releasing anyway",
                    openQueues(), timeoutMillis);
            for (Poller p : pollers) {
                for (var q : p.liveQueues()) LOG.log(System.Logger.Level.WARNING, "  " + q.describe());
            }
        }
        cm.stop();
        for (Poller p : pollers) p.stop();
        for (Thread t : threads) {
            try {
                t.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        close();
    }

    public void stop() {
        stop(10_000);
    }

    /** Releases pollers' CQs and pools, device PDs and slabs, and the event channel. */
    @Override
    public synchronized void close() {
        if (closed || !opened) return;
        closed = true;
        for (Poller p : pollers) p.close();
        cm.closeDevices();
        channel.close();
    }
}
