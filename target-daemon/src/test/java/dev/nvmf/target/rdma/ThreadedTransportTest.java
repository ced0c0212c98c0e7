package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.ffm.Libc;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transport with its own threads (CM thread, two pollers that block on their completion channels when idle)
 * on an automatic soft fabric, with core completions arriving from another thread (a backend-like executor).
 */
class ThreadedTransportTest {
    private static void await(BooleanSupplier condition, ScriptedInitiator h, String what) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (h != null) h.doWork();
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what);
            Thread.onSpinWait();
        }
    }

    /** An automatic soft fabric with a target device t0 (10.0.0.1) and a host device h0 (10.0.0.2). */
    private static SoftFabric fabric() {
        SoftFabric fabric = SoftFabric.automatic();
        fabric.addDevice("t0", "10.0.0.1");
        fabric.addDevice("h0", "10.0.0.2");
        return fabric;
    }

    /** A transport on its own threads listening on 10.0.0.1:4420, configured by {@code tweak}. */
    private static RdmaTransport started(SoftFabric fabric, FakeCore core,
                                         java.util.function.UnaryOperator<RdmaTransportConfig> tweak) {
        RdmaTransport t = new RdmaTransport(fabric,
                tweak.apply(RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, "10.0.0.1", 4420)))), core);
        t.start();
        return t;
    }

    /** A host for queue {@code qid} of depth 8 to 10.0.0.1:4420 (not yet connected). */
    private static ScriptedInitiator host(SoftFabric fabric, int qid) {
        return new ScriptedInitiator(fabric, Capsules.queueOptions(
                new InetSocketAddress("10.0.0.2", 0), new InetSocketAddress("10.0.0.1", 4420), qid, 8, 16));
    }

    /** The CPUs in a /proc Cpus_allowed_list ("0-2,5"). */
    private static List<Integer> cpuList(String list) {
        List<Integer> out = new java.util.ArrayList<>();
        for (String part : list.strip().split(",")) {
            String[] r = part.split("-");
            for (int c = Integer.parseInt(r[0]); c <= Integer.parseInt(r[r.length - 1]); c++) out.add(c);
        }
        return out;
    }

    /**
     * The CPUs of each of this process's threads whose name (cut to 15 characters, as the kernel keeps it) starts
     * with {@code prefix}.
     */
    private static List<List<Integer>> threadCpus(String prefix) throws java.io.IOException {
        List<List<Integer>> out = new java.util.ArrayList<>();
        try (var tasks = java.nio.file.Files.list(java.nio.file.Path.of("/proc/self/task"))) {
            for (java.nio.file.Path task : tasks.toList()) {
                try {
                    if (!java.nio.file.Files.readString(task.resolve("comm")).strip().startsWith(prefix)) continue;
                    for (String line : java.nio.file.Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("Cpus_allowed_list:")) out.add(cpuList(line.substring(18)));
                    }
                } catch (java.nio.file.NoSuchFileException gone) {
                    // a thread that ended meanwhile
                }
            }
        }
        return out;
    }

    /**
     * transport.poller_cpus: every poller thread pins itself to its CPU (poller i to the i-th modulo the list: both
     * to the one given here) before its first pass; the CM thread stays where the scheduler puts it.
     */
    @Test
    void pollerThreadsRunOnTheirConfiguredCpuAlone() throws Exception {
        List<Integer> allowed = Libc.currentThreadCpus();
        int cpu = allowed.get(allowed.size() - 1);
        SoftFabric fabric = fabric();
        RdmaTransport t = started(fabric, new FakeCore(), c -> c.withPollers(2).withPollerCpus(List.of(cpu)));
        try {
            await(() -> {
                try {
                    return threadCpus("nvmf-rdma-polle").equals(List.of(List.of(cpu), List.of(cpu)));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }, null, "both pollers on CPU " + cpu);
            assertEquals(List.of(allowed), threadCpus("nvmf-rdma-cm"), "the CM thread is not pinned");
        } finally {
            t.stop(5000);
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }

    /** A CPU this process may not run on is refused at start, naming the key, before anything is opened. */
    @Test
    void aPollerCpuOutsideTheProcesssCpusIsRefusedAtStart() {
        List<Integer> allowed = Libc.currentThreadCpus();
        int cpu = Libc.CPU_SETSIZE - 1;
        org.junit.jupiter.api.Assumptions.assumeFalse(allowed.contains(cpu), "this machine has CPU " + cpu);
        SoftFabric fabric = fabric();
        RdmaTransport t = new RdmaTransport(fabric, RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, "10.0.0.1",
                4420))).withPollerCpus(List.of(cpu)), new FakeCore());
        try {
            IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    t::start);
            assertEquals("transport.poller_cpus: CPU " + cpu + " is not one this process may run on (its CPUs: "
                    + allowed + ")", e.getMessage());
            assertEquals(0, t.openQueues());
        } finally {
            t.close();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }

    /**
     * On threads, a drain that cannot end (the device died silently) is ended by the CM agent's timer: nothing else
     * wakes the agent (no event, no completion), so only the waiter's timerfd armed for the drain's deadline can.
     * The bound here is 300 ms; the wait for it is generous.
     */
    @Test
    void theCmAgentsTimerEndsADrainThatCannotEnd() throws Exception {
        SoftFabric fabric = fabric();
        FakeCore core = new FakeCore();
        RdmaTransport t = started(fabric, core, c -> c.withDrainTimeoutMillis(300));
        ScriptedInitiator h = host(fabric, 1);
        try {
            assertEquals(ScriptedInitiator.State.CONNECTED, h.connect(10_000));
            await(() -> t.openQueues() == 1, h, "the queue");
            fabric.faults().killDevice("t0");
            core.queue(0).transport.requestDisconnect("keep-alive timeout");
            await(() -> t.openQueues() == 0, null, "the drain ended by its bound");
            assertEquals(1, t.metrics().drainTimeouts.sum());
            assertTrue(core.queue(0).closed);
        } finally {
            t.stop(5000);
            h.close();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }

    /**
     * An idle transport makes no wake-ups: the CM agent blocks on the CM channel, the devices' asynchronous event fds
     * and its deadlines together, each poller on its completion channels, all with no timeout (before, each woke every
     * 100 ms). Measured over a second of idleness with a connected host, after one I/O; then an early capsule (its
     * RTU lost, so only COMM_EST on the device's fd establishes the queue) is still answered.
     */
    @Test
    void anIdleTransportMakesNoWakeUps() throws Exception {
        SoftFabric fabric = fabric();
        FakeCore core = new FakeCore();
        RdmaTransport t = started(fabric, core, c -> c.withPollers(2));
        List<ScriptedInitiator> hosts = new java.util.ArrayList<>();
        try {
            ScriptedInitiator h = host(fabric, 1);
            hosts.add(h);
            assertEquals(ScriptedInitiator.State.CONNECTED, h.connect(10_000));
            assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, 1, 0), 0));
            await(() -> Cqe.find(h, 1) != null, h, "response 1");
            Thread.sleep(300); // the agents go idle and block
            long cm = t.cm().wakeups();
            long p0 = t.poller(0).wakeups();
            long p1 = t.poller(1).wakeups();
            Thread.sleep(1000);
            assertEquals(cm, t.cm().wakeups(), "the idle CM agent woke up");
            assertEquals(p0, t.poller(0).wakeups(), "the idle poller with a queue woke up");
            assertEquals(p1, t.poller(1).wakeups(), "the idle poller without a queue woke up");

            fabric.acceptLeavesRtr(true);
            fabric.faults().dropNext(dev.nvmf.verbs.soft.CmMessage.RTU);
            ScriptedInitiator early = host(fabric, 2);
            hosts.add(early);
            early.startConnect();
            await(() -> early.state() == ScriptedInitiator.State.CONNECTED, early, "the host's side established");
            assertEquals(0, Capsules.send(early, Capsules.command(FakeCore.OP_FLUSH, 2, 0), 0));
            await(() -> Cqe.find(early, 2) != null, early, "the early capsule answered (COMM_EST woke the CM agent)");
            assertEquals(0, Cqe.find(early, 2).status());
        } finally {
            t.stop(5000);
            for (ScriptedInitiator h : hosts) h.close();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }

    /**
     * An Error (here a StackOverflowError from the core, on the poller's thread) is not contained: it may strike between
     * two writes of a request's state, after which no buffer of that poller's queues can be trusted to be free. The
     * poller's thread ends and the transport reports itself unhealthy (the daemon then withholds its watchdog ping and
     * systemd restarts it); the CM thread still serves the other pollers.
     */
    @Test
    void anErrorEndsThePollerThreadAndTheTransportIsUnhealthy() throws Exception {
        SoftFabric fabric = fabric();
        FakeCore core = new FakeCore();
        RdmaTransport t = started(fabric, core, c -> c);
        ScriptedInitiator h = host(fabric, 1);
        try (dev.nvmf.target.rdma.support.LogCapture log = new dev.nvmf.target.rdma.support.LogCapture(RdmaTransport.class)) {
            assertEquals(ScriptedInitiator.State.CONNECTED, h.connect(10_000));
            assertTrue(t.healthy());
            assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_ERROR_IN_EXECUTE, 1, 0), 0));
            await(() -> !t.healthy(), h, "the poller thread ends");
            assertTrue(!t.poller(0).thread().isAlive());
            assertEquals(1, log.containing("nvmf-rdma-poller-0 died").size(), "logged as fatal");
        } finally {
            t.stop(500);
            h.close();
        }
    }

    @Test
    void threadsServeIoAndStopDrainsEverything() throws Exception {
        SoftFabric fabric = fabric();
        FakeCore core = new FakeCore();
        core.deferred = true;
        RdmaTransport t = started(fabric, core, c -> c.withPollers(2));
        Thread backend = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                if (core.releaseDeferred() == 0) Thread.onSpinWait();
            }
        }, "fake-backend");
        backend.setDaemon(true);
        backend.start();
        ScriptedInitiator[] hosts = new ScriptedInitiator[2];
        try {
            for (int q = 0; q < 2; q++) {
                ScriptedInitiator h = new ScriptedInitiator(fabric, Capsules.queueOptions(
                        new InetSocketAddress("10.0.0.2", 0), new InetSocketAddress("10.0.0.1", 4420), q + 1, 16, 16));
                hosts[q] = h;
                assertEquals(ScriptedInitiator.State.CONNECTED, h.connect(10_000));
            }
            // The two queues went to different pollers.
            assertEquals(1, t.poller(0).openQueues());
            assertEquals(1, t.poller(1).openQueues());
            Thread.sleep(300); // let the pollers go idle and block on their channels: completions must wake them
            for (int round = 0; round < 50; round++) {
                for (int q = 0; q < 2; q++) {
                    ScriptedInitiator h = hosts[q];
                    ScriptedInitiator.HostBuffer r = h.exposeBuffer(8192);
                    MemorySegment c = Capsules.command(FakeCore.OP_WRITE, round, q * 65536L + round * 8L);
                    Capsules.keyed(c, r.address(), 8192, r.rkey(), true);
                    assertEquals(0, Capsules.send(h, c, 0));
                    int cid = round;
                    await(() -> Cqe.find(h, cid) != null, h, "response " + round);
                    assertEquals(0, Cqe.take(h, cid).status());
                }
            }
            // A response is counted after its post returns, and the automatic fabric may hand it to the host before
            // that: the count of the last one can trail the host by a moment, so wait for it (then it must be exact).
            await(() -> t.metrics().responsesSent.sum() >= 100, hosts[1], "the 100th response counted");
            assertEquals(100, t.metrics().responsesSent.sum());
            core.deferred = false;
            t.stop(10_000);
            assertEquals(0, t.openQueues());
            for (ScriptedInitiator h : hosts) await(() -> h.sawEvent(CmEventType.DISCONNECTED), h, "host DISCONNECTED");
            assertTrue(core.queue(0).closed && core.queue(1).closed);
        } finally {
            backend.interrupt();
            t.stop(1000);
            for (ScriptedInitiator h : hosts) if (h != null) h.close();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }
}
