package dev.nvmf.target.rdma.support;

import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

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
        fabric.addDevice("t0", TARGET_IP, targetAttributes);
        fabric.addDevice("h0", HOST_IP);
        RdmaTransportConfig config = tweak.apply(RdmaTransportConfig.of(List.of(RdmaPortConfig.of(1, TARGET_IP, PORT))));
        transport = new RdmaTransport(fabric, config, core);
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

    /** The statuses of {@code host}'s SENDs and window binds that failed. */
    public static List<Integer> sendErrors(ScriptedInitiator host) {
        List<Integer> out = new ArrayList<>();
        for (ScriptedInitiator.Completion c : host.sendCompletions()) if (c.status() != WcStatus.SUCCESS) out.add(c.status());
        for (ScriptedInitiator.Completion c : host.bindErrors()) out.add(c.status());
        return out;
    }

    @Override
    public void close() {
        transport.stop(5000);
        for (ScriptedInitiator h : hosts) h.close();
        fabric.deliverAll();
    }
}
