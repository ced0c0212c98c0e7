package dev.nvmf.target.service;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
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
 * The daemon's lifecycle on one control thread: start, then wait for requests (reload, stop, a request from the
 * control socket) and watchdog deadlines, then stop. Signals only enqueue requests ({@link #requestReload},
 * {@link #requestStop}), and so does the control socket ({@link ControlSocket}, {@code nvmf-target ana}), so a
 * reload never races a stop or an {@code ana set}, and nothing runs in a signal handler.
 *
 * <p>Reload: RELOADING=1, read and validate the file, refuse it whole if anything is wrong (the running
 * configuration stays, the errors are logged with file:line:column), otherwise compute the {@link ConfigDiff} and
 * hand it to the runtime, then READY=1 again.
 */
public final class TargetService {
    private static final Logger LOG = Logger.getLogger(TargetService.class.getName());

    private sealed interface Request permits Signal, Control {}

    private enum Signal implements Request { RELOAD, STOP }

    /** A control socket request, answered by completing {@code answer} on the control thread. */
    private record Control(String line, CompletableFuture<List<String>> answer) implements Request {}

    /** How long a control socket request waits for the control thread (a reload may be in progress). */
    static final Duration CONTROL_WAIT = Duration.ofSeconds(60);

    private final Path configFile;
    private final TargetRuntime runtime;
    private final TargetMetrics metrics;
    private final SdNotify notify;
    private final Duration stopTimeout;
    private final BlockingQueue<Request> requests = new LinkedBlockingQueue<>();
    private volatile TargetConfig current;
    private MetricsServer metricsServer;
    private Path controlPath;
    private boolean controlRequired;
    private ControlSocket control;

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
        requests.add(Signal.RELOAD);
    }

    /** Thread-safe; called from the SIGTERM/SIGINT handlers. */
    public void requestStop() {
        requests.add(Signal.STOP);
    }

    /**
     * Serve the control socket at {@code path} once started (call before {@link #run}); null serves none. When
     * {@code required}, a socket that cannot be bound fails the start; otherwise the daemon runs without it and
     * says so.
     */
    public void controlSocket(Path path, boolean required) {
        this.controlPath = path;
        this.controlRequired = required;
    }

    /**
     * A control socket request: runs on the control thread in turn with reloads; the output lines. Thread-safe.
     *
     * @throws IllegalArgumentException when the request or its arguments are refused
     * @throws IllegalStateException when the control thread does not take it in time
     */
    List<String> control(String line) {
        CompletableFuture<List<String>> answer = new CompletableFuture<>();
        requests.add(new Control(line, answer));
        try {
            return answer.get(CONTROL_WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IllegalStateException(String.valueOf(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("the daemon did not take the request within " + CONTROL_WAIT.toSeconds()
                    + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
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
        if (!openControlSocket()) {
            runtime.stop(stopTimeout);
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
        if (control != null) {
            control.close();
        }
        for (Request left : requests) {
            if (left instanceof Control c) {
                c.answer().completeExceptionally(new IllegalStateException("the daemon is stopping"));
            }
        }
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
            if (r == Signal.STOP) {
                return;
            }
            if (r == Signal.RELOAD) {
                reload();
            }
            if (r instanceof Control c) {
                try {
                    c.answer().complete(ControlCommands.execute(runtime, c.line()));
                } catch (RuntimeException e) {
                    c.answer().completeExceptionally(e);
                }
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
            runtime.revalidateNamespaces();
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
        // Namespaces the diff left alone may still have grown (or shrunk) underneath: their hosts are told now.
        runtime.revalidateNamespaces();
        metrics.reloadApplied();
        String status = runtime.status();
        LOG.info("reload applied: " + status);
        notify.ready(status);
    }

    /** Binds the control socket if one is configured; false when a required one cannot be bound. */
    private boolean openControlSocket() {
        if (controlPath == null) {
            return true;
        }
        try {
            control = ControlSocket.open(controlPath, this::control);
            LOG.info("control: listening on " + controlPath + " (nvmf-target ana set|show)");
            return true;
        } catch (IOException | RuntimeException e) {
            if (controlRequired) {
                LOG.severe("startup failed: control socket " + controlPath + ": " + e.getMessage());
                notify.status("failed: control socket " + controlPath + ": " + e.getMessage());
                return false;
            }
            LOG.warning("no control socket (" + controlPath + ": " + e.getMessage() + "): nvmf-target ana cannot "
                    + "reach this daemon; give it one with serve --control-socket PATH");
            return true;
        }
    }

    private void closeMetrics() {
        if (metricsServer != null) {
            metricsServer.close();
            metricsServer = null;
        }
    }
}
