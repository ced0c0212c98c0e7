package dev.nvmf.target.rdma.support;

import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.soft.SoftFabric;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/** A target on a manual soft fabric with a fake core, and hosts to connect to it; pumped deterministically. */
public final class SoftTarget implements AutoCloseable {
    public static final String TARGET_IP = "10.0.0.1";
    public static final String HOST_IP = "10.0.0.2";
    public static final int PORT = 4420;

    public final SoftFabric fabric = SoftFabric.manual();
    public final FakeCore core = new FakeCore();
    public final RdmaTransport transport;
    public final List<TestHost> hosts = new ArrayList<>();

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
        for (int i = 0; i < 100_000; i++) {
            int w = fabric.deliverAll();
            w += transport.cmInvoker().invoke();
            for (int p = 0; p < transport.pollerCount(); p++) w += transport.pollerInvoker(p).invoke();
            for (TestHost h : hosts) w += h.poll();
            if (w == 0) return;
        }
        throw new AssertionError("pump did not settle");
    }

    public TestHost newHost() {
        TestHost h = new TestHost(fabric);
        hosts.add(h);
        return h;
    }

    public TestHost connect(int qid, int depth) {
        TestHost h = newHost();
        h.connect(source(), target(), qid, depth, 16, this::pump);
        pump();
        return h;
    }

    @Override
    public void close() {
        transport.stop(5000);
        for (TestHost h : hosts) h.close();
        fabric.deliverAll();
    }
}
