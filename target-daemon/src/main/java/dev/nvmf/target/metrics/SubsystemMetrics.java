package dev.nvmf.target.metrics;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Controller-level state of one subsystem: controllers, distinct connected hosts, keep-alive expiries. Called on
 * the control path (Connect, controller teardown, keep-alive timer).
 */
public final class SubsystemMetrics {
    private final AtomicInteger controllers = new AtomicInteger();
    private final AtomicInteger hosts = new AtomicInteger();
    private final Map<String, Integer> controllersByHost = new HashMap<>();
    private final Counter keepAliveExpiries;
    private final Meter[] meters;

    SubsystemMetrics(MeterRegistry registry, String nqn) {
        Gauge c = Gauge.builder("nvmf.controllers", controllers, AtomicInteger::get).tag("subsystem", nqn)
                .description("live controllers (one per host association)").register(registry);
        Gauge h = Gauge.builder("nvmf.connected.hosts", hosts, AtomicInteger::get).tag("subsystem", nqn)
                .description("distinct host NQNs with at least one controller").register(registry);
        keepAliveExpiries = Counter.builder("nvmf.keep.alive.expiries").tag("subsystem", nqn)
                .description("controllers torn down because the host's keep-alive timer expired")
                .register(registry);
        meters = new Meter[] {c, h, keepAliveExpiries};
    }

    /** A controller was created for {@code hostNqn} by a successful admin-queue Connect. */
    public synchronized void controllerCreated(String hostNqn) {
        controllers.incrementAndGet();
        if (controllersByHost.merge(hostNqn, 1, Integer::sum) == 1) {
            hosts.incrementAndGet();
        }
    }

    /** A controller of {@code hostNqn} ended. */
    public synchronized void controllerDestroyed(String hostNqn) {
        Integer n = controllersByHost.get(hostNqn);
        if (n == null) {
            return;
        }
        controllers.decrementAndGet();
        if (n == 1) {
            controllersByHost.remove(hostNqn);
            hosts.decrementAndGet();
        } else {
            controllersByHost.put(hostNqn, n - 1);
        }
    }

    public void keepAliveExpired() {
        keepAliveExpiries.increment();
    }

    Meter[] meters() {
        return meters;
    }
}
