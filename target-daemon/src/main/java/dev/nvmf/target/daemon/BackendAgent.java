package dev.nvmf.target.daemon;

import dev.nvmf.target.rdma.NotifyingIdleStrategy;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The daemon's control-plane agent for namespace backends: the work that may run on neither a poller (it blocks),
 * a backend's own threads (librbd's callback or size-monitor thread must not block, and must not change the core's
 * model behind the control plane's back), nor the service's control thread (which pings the systemd watchdog).
 * Two kinds of work come here, through one queue, and run in order on the agent's thread:
 * <ul>
 *   <li>a backend's report that its medium changed size (an RBD image resized by another client), which becomes
 *   the core's revalidation of that namespace and the hosts' Namespace Attribute Changed event;</li>
 *   <li>closing a backend whose close can block for a cluster's timeouts (an RBD image whose cluster is gone:
 *   {@code RbdBackend.close} waits up to twice {@code osd_op_timeout} for what is in flight).</li>
 * </ul>
 * Run by an {@code AgentRunner} in the daemon, by an {@code AgentInvoker} in tests. Tasks are offered from any
 * thread; {@link #doWork} runs each once. Between tasks its thread parks with no timeout and {@link #submit}
 * unparks it: a few tasks a day cost no wake-ups in between.
 */
final class BackendAgent implements Agent, NotifyingIdleStrategy.Sleeper {
    private static final Logger LOG = Logger.getLogger(BackendAgent.class.getName());

    private record Task(String what, Runnable work, CompletableFuture<Void> done) {}

    /** The last task: the agent ends after it ({@link AgentTerminationException}), its runner's thread with it. */
    private static final Runnable RETIRE = () -> { };

    private final ManyToOneConcurrentLinkedQueue<Task> tasks = new ManyToOneConcurrentLinkedQueue<>();
    private volatile Thread owner;

    /**
     * Queues {@code work} (any thread; never blocks). The future completes once it ran, also when it threw (which
     * is logged with {@code what}).
     */
    CompletableFuture<Void> submit(String what, Runnable work) {
        Task t = new Task(what, work, new CompletableFuture<>());
        tasks.offer(t);
        Thread o = owner;
        if (o != null) {
            LockSupport.unpark(o);
        }
        return t.done();
    }

    @Override
    public void onStart() {
        owner = Thread.currentThread();
    }

    /** A task offered after this look unparks the thread, so the park below cannot miss it. */
    @Override
    public boolean prepareToBlock() {
        return tasks.isEmpty();
    }

    @Override
    public void block() {
        LockSupport.park(this);
    }

    /**
     * Ends the agent once every task queued before has run (its runner stops; an invoker reports it closed). The
     * caller does not wait: a close that a lost cluster holds for minutes holds only the agent's thread.
     */
    void retire() {
        submit("retire", RETIRE);
    }

    @Override
    public int doWork() {
        int done = 0;
        Task t;
        while ((t = tasks.poll()) != null) {
            if (t.work() == RETIRE) {
                t.done().complete(null);
                throw new AgentTerminationException("retired");
            }
            try {
                t.work().run();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, t.what() + ": " + e.getMessage(), e);
            } finally {
                t.done().complete(null);
            }
            done++;
        }
        return done;
    }

    @Override
    public String roleName() {
        return "nvmf-backends";
    }
}
