package dev.nvmf.target.service;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

import dev.nvmf.target.config.ConfigDiff;
import dev.nvmf.target.config.ConfigError;
import dev.nvmf.target.config.ConfigException;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.metrics.MetricsServer;
import dev.nvmf.target.metrics.TargetMetrics;

/**
 * The daemon's lifecycle on one control thread: start, then wait for requests (reload, stop) and watchdog
 * deadlines, then stop. Signals only enqueue requests ({@link #requestReload}, {@link #requestStop}), so a reload
 * never races a stop and nothing runs in a signal handler.
 *
 * <p>Reload: RELOADING=1, read and validate the file, refuse it whole if anything is wrong (the running
 * configuration stays, the errors are logged with file:line:column), otherwise compute the {@link ConfigDiff} and
 * hand it to the runtime, then READY=1 again.
 */
public final class TargetService {
    private static final Logger LOG = Logger.getLogger(TargetService.class.getName());

    private enum Request { RELOAD, STOP }

    private final Path configFile;
    private final TargetRuntime runtime;
    private final TargetMetrics metrics;
    private final SdNotify notify;
    private final Duration stopTimeout;
    private final BlockingQueue<Request> requests = new LinkedBlockingQueue<>();
    private volatile TargetConfig current;
    private MetricsServer metricsServer;

    public TargetService(Path configFile, TargetRuntime runtime, TargetMetrics metrics, SdNotify notify,
                         Duration stopTimeout) {
        this.configFile = configFile;
        this.runtime = runtime;
        this.metrics = metrics;
        this.notify = notify;
        this.stopTimeout = stopTimeout;
    }

    /** Thread-safe; called from the SIGHUP handler. */
    public void requestReload() {
        requests.add(Request.RELOAD);
    }

    /** Thread-safe; called from the SIGTERM/SIGINT handlers. */
    public void requestStop() {
        requests.add(Request.STOP);
    }

    /** Installs HUP (reload), TERM and INT (orderly stop). */
    public void installSignalHandlers() {
        SignalRelay.handle("HUP", this::requestReload);
        SignalRelay.handle("TERM", this::requestStop);
        SignalRelay.handle("INT", this::requestStop);
    }

    public TargetConfig currentConfig() {
        return current;
    }

    /**
     * Runs until stopped. {@code initial} was loaded and validated by the caller (so that a bad file exits with
     * {@link ExitCodes#CONFIG} before anything starts).
     *
     * @return the process exit code
     */
    public int run(TargetConfig initial) {
        current = initial;
        notify.status("starting");
        if (initial.metrics().enabled()) {
            try {
                metricsServer = MetricsServer.start(metrics,
                        new InetSocketAddress(initial.metrics().host(), initial.metrics().port()));
                LOG.info("metrics: serving http://" + initial.metrics().listen() + "/metrics");
            } catch (Exception e) {
                LOG.severe("cannot serve metrics on " + initial.metrics().listen() + ": " + e.getMessage()
                        + " (set metrics.listen to a free address, or metrics.enabled: false)");
                notify.status("failed: metrics listener " + initial.metrics().listen() + ": " + e.getMessage());
                return ExitCodes.UNAVAILABLE;
            }
        }
        try {
            runtime.start(initial);
        } catch (EnvironmentException e) {
            LOG.severe("startup failed: " + e.getMessage());
            notify.status("failed: " + e.getMessage());
            closeMetrics();
            return ExitCodes.UNAVAILABLE;
        } catch (Exception e) {
            LOG.log(Level.SEVERE, "startup failed", e);
            notify.status("failed: " + e.getMessage());
            closeMetrics();
            return ExitCodes.UNAVAILABLE;
        }
        String status = runtime.status();
        LOG.info("ready: " + status);
        notify.ready(status);
        try {
            loop();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.warning("control thread interrupted; stopping");
        }
        notify.stopping("stopping");
        LOG.info("stopping: draining queues (up to " + stopTimeout.toSeconds() + "s)");
        try {
            runtime.stop(stopTimeout);
        } catch (RuntimeException e) {
            LOG.log(Level.SEVERE, "error while stopping", e);
        }
        closeMetrics();
        LOG.info("stopped");
        return ExitCodes.OK;
    }

    private void loop() throws InterruptedException {
        Duration watchdog = notify.watchdogInterval();
        // Ping at half the interval, as sd_watchdog_enabled(3) advises.
        long waitMillis = watchdog == null ? 60_000 : Math.max(1, watchdog.toMillis() / 2);
        long nextPing = System.nanoTime();
        while (true) {
            if (watchdog != null && System.nanoTime() - nextPing >= 0) {
                if (runtime.healthy()) {
                    notify.watchdog();
                } else {
                    LOG.warning("runtime unhealthy: withholding the watchdog ping (systemd will restart us)");
                }
                nextPing = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMillis);
            }
            Request r = requests.poll(waitMillis, TimeUnit.MILLISECONDS);
            if (r == Request.STOP) {
                return;
            }
            if (r == Request.RELOAD) {
                reload();
            }
        }
    }

    /** Reloads the file now, on the calling thread (the control thread in {@link #run}). */
    void reload() {
        notify.reloading();
        LOG.info("reload: reading " + configFile);
        TargetConfig next;
        try {
            ConfigLoader.Result result = ConfigLoader.load(configFile);
            result.warnings().forEach(w -> LOG.warning("reload: warning: " + w));
            next = result.config();
        } catch (ConfigException e) {
            for (ConfigError err : e.errors()) {
                LOG.warning("reload refused: " + err);
            }
            metrics.reloadRefused();
            String first = e.errors().isEmpty() ? "" : e.errors().get(0).toString();
            notify.ready("reload refused, running configuration unchanged: " + first);
            return;
        }
        ConfigDiff diff = ConfigDiff.between(current, next);
        if (diff.isEmpty()) {
            LOG.info("reload: no changes");
            metrics.reloadApplied();
            notify.ready(runtime.status());
            return;
        }
        for (String line : diff.describe()) {
            LOG.info("reload: " + line);
        }
        try {
            runtime.apply(diff, next);
        } catch (EnvironmentException e) {
            LOG.severe("reload failed, running configuration unchanged: " + e.getMessage());
            metrics.reloadRefused();
            notify.ready("reload failed, running configuration unchanged: " + e.getMessage());
            return;
        } catch (Exception e) {
            LOG.log(Level.SEVERE, "reload failed while applying; running configuration unchanged", e);
            metrics.reloadRefused();
            notify.ready("reload failed, running configuration unchanged: " + e.getMessage());
            return;
        }
        if (diff.loggingChanged()) {
            LogSetup.apply(next.logging());
        }
        current = next;
        metrics.reloadApplied();
        String status = runtime.status();
        LOG.info("reload applied: " + status);
        notify.ready(status);
    }

    private void closeMetrics() {
        if (metricsServer != null) {
            metricsServer.close();
            metricsServer = null;
        }
    }
}
