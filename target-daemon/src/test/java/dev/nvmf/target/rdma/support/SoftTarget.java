package dev.nvmf.target.rdma.support;

import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.memory.BufferPool;
import dev.nvmf.target.rdma.poller.PollerDevice;
import dev.nvmf.target.rdma.queue.SharedReceives;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A target on a manual soft fabric with a fake core, and hosts ({@link ScriptedInitiator}s) to connect to it;
 * everything is driven deterministically by {@link #pump()}: the fabric, the transport's agents through their
 * invokers, and the hosts.
 */
public final class SoftTarget implements AutoCloseable {
    public static final String TARGET_IP = "10.0.0.1";
    public static final String HOST_IP = "10.0.0.2";
    public static final int PORT = 4420;

    public final SoftFabric fabric = SoftFabric.manual();
    public final FakeCore core = new FakeCore();
    public final RdmaTransport transport;
    public final List<ScriptedInitiator> hosts = new ArrayList<>();

    public SoftTarget() {
        this(c -> c, SoftFabric.defaultAttributes());
    }

    public SoftTarget(UnaryOperator<RdmaTransportConfig> tweak, DeviceAttributes targetAttributes) {
        // As rxe on Linux 6.1: work posted to a QP in the error state never completes, not even flushed. A target
        // that posts anything once a queue left LIVE never finishes that queue's drain, which every test then sees.
        fabric.faults().sendsPostedInErrorVanish(true).receivesPostedInErrorVanish(true);
        // The READ depth negotiated at connect is enforced, as hardware does (a READ beyond it is NAKed and both QPs
        // fail): a target that exceeds it breaks the test's queue.
        fabric.enforceReadDepth(true);
        fabric.addDevice("t0", TARGET_IP, targetAttributes);
        fabric.addDevice("h0", HOST_IP);
        RdmaTransportConfig config = tweak.apply(RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, TARGET_IP, PORT))));
        transport = new RdmaTransport(fabric, config, core, fabric::nanoTime);
        transport.open();
    }

    public InetSocketAddress target() { return new InetSocketAddress(TARGET_IP, PORT); }

    public InetSocketAddress source() { return new InetSocketAddress(HOST_IP, 0); }

    /** Runs the fabric, the CM agent, the pollers and the hosts until nothing moves. */
    public void pump() {
        pump(fabric, transport, hosts);
    }

    /** {@link #pump()} for any manual fabric, transport and hosts. */
    public static void pump(SoftFabric fabric, RdmaTransport transport, List<ScriptedInitiator> hosts) {
        for (int i = 0; i < 100_000; i++) {
            int w = fabric.deliverAll();
            w += transport.cmInvoker().invoke();
            for (int p = 0; p < transport.pollerCount(); p++) w += transport.pollerInvoker(p).invoke();
            for (ScriptedInitiator h : hosts) w += h.doWork();
            if (w == 0) return;
        }
        throw new AssertionError("pump did not settle");
    }

    /** A host that starts connecting with {@code options}; pump until its state is no longer connecting. */
    public ScriptedInitiator startConnect(ScriptedInitiator.Options options) {
        ScriptedInitiator h = new ScriptedInitiator(fabric, options);
        hosts.add(h);
        h.startConnect();
        pump();
        return h;
    }

    /** Connects queue {@code qid} of {@code depth} entries (CONNECTED, or REJECTED with the reason). */
    public ScriptedInitiator connect(int qid, int depth) {
        return startConnect(Capsules.queueOptions(source(), target(), qid, depth, 16));
    }

    /**
     * Connects queue 1 (depth 8) and sends a Flush that the core keeps (deferred) until the test sets
     * {@code core.deferred} back and releases it.
     */
    public ScriptedInitiator connectWithACommandInTheCore() {
        ScriptedInitiator h = connect(1, 8);
        core.deferred = true;
        assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, 1, 0), 0));
        pump();
        assertEquals(1, core.deferredCount(), "the command is in the core");
        return h;
    }

    /** The statuses of {@code host}'s SENDs and window binds that failed. */
    public static List<Integer> sendErrors(ScriptedInitiator host) {
        List<Integer> out = new ArrayList<>();
        for (ScriptedInitiator.Completion c : host.sendCompletions()) if (c.status() != WcStatus.SUCCESS) out.add(c.status());
        for (ScriptedInitiator.Completion c : host.bindErrors()) out.add(c.status());
        return out;
    }

    /** Resources of any kind alive on device {@code name} (QPs, CQs, PDs, MRs, channels, contexts). */
    public long resourcesOn(String name) {
        return fabric.resources().live().stream()
                .filter(l -> !l.startsWith("cm_id") && (l.endsWith(" " + name) || l.contains(" " + name + " "))).count();
    }

    /** QPs alive on the target's devices (named t...), like {@code rdma resource show qp} on the target. */
    public long targetQps() {
        return fabric.resources().live().stream()
                .filter(l -> l.startsWith("qp ") && l.substring(l.lastIndexOf(' ') + 1).startsWith("t")).count();
    }

    /**
     * Everything the released queues took is back: no queue open, no QP on the target, every data buffer in its pool
     * and every CQ entry unreserved, only the pollers' pools still out of the slabs, and no QP destroyed before it
     * was drained.
     */
    public void assertEverythingReturned() {
        assertEverythingReturned(0);
    }

    /**
     * {@link #assertEverythingReturned()} where {@code undrainedQpDestroys} QPs were destroyed on purpose before their
     * drain could end (a dead device, a bounded drain): their completions never came.
     */
    public void assertEverythingReturned(int undrainedQpDestroys) {
        assertEquals(0, transport.openQueues(), "open queues");
        assertEquals(0, targetQps(), "QPs left on the target: " + fabric.resources());
        int srqs = 0;
        for (int p = 0; p < transport.pollerCount(); p++) {
            for (PollerDevice d : transport.poller(p).devices()) {
                for (BufferPool pool : d.pools()) assertEquals(pool.capacity(), pool.available(), "data buffers returned");
                SharedReceives s = d.sharedReceives();
                // The SRQ's receive completions stay reserved on its CQ for as long as the SRQ lives.
                assertEquals(s == null ? 0 : s.depth(), d.cqReserved(), "CQ entries returned");
                if (s != null) {
                    srqs++;
                    assertEquals(0, s.queues(), "no queue left on the SRQ");
                    assertEquals(s.depth(), s.posted(), "every receive buffer back on the SRQ");
                }
            }
        }
        assertEquals(undrainedQpDestroys, fabric.resources().undrainedQpDestroys(),
                "QPs destroyed before they were drained");
        for (var d : transport.cm().deviceResources().values()) {
            assertEquals(2L * transport.pollerCount() + srqs, d.slabs().regionsOutstanding(),
                    "only the pollers' data pools (and SRQ buffers)");
        }
    }

    /**
     * QPs a test destroys on purpose before their drain could end (a dead device, a bounded drain): {@link #close()}
     * expects exactly this many undrained destroys.
     */
    public int expectedUndrainedQpDestroys;

    /**
     * Stops the transport and closes the hosts, then checks that everything came back, after every test: no verbs
     * resource of any kind is left on the fabric (QP, CQ, MR, PD, channel, context, CM id), no QP was destroyed
     * undrained beyond {@link #expectedUndrainedQpDestroys}, no registered memory was leaked, and every queue the
     * core opened was closed.
     */
    @Override
    public void close() {
        transport.stop(5000);
        for (ScriptedInitiator h : hosts) h.close();
        fabric.deliverAll();
        assertTrue(fabric.resources().nothingLeaked(), "left after stop: " + fabric.resources());
        assertEquals(expectedUndrainedQpDestroys, fabric.resources().undrainedQpDestroys(),
                "QPs destroyed before they were drained");
        for (FakeCore.Queue q : core.queues) assertTrue(q.closed, "core queue qid " + q.qid + " closed");
        assertEquals(0, fabric.readDepthViolations(), "RDMA READs beyond the negotiated depth");
    }
}
