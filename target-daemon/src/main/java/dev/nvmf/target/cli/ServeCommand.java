package dev.nvmf.target.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.logging.Logger;

import dev.nvmf.target.cli.CommandSpec.Type;
import dev.nvmf.target.config.ConfigError;
import dev.nvmf.target.config.ConfigException;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.LoggingSection;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.service.ControlSocket;
import dev.nvmf.target.service.DryRunRuntime;
import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.target.service.LogSetup;
import dev.nvmf.target.service.SdNotify;
import dev.nvmf.target.service.TargetRuntime;
import dev.nvmf.target.service.TargetRuntimeFactory;
import dev.nvmf.target.service.TargetService;

/** {@code nvmf-target serve}: the daemon, in the foreground (the systemd unit's ExecStart). */
final class ServeCommand implements CliCommand {
    static final CommandSpec SPEC = CommandSpec.command("nvmf-target serve",
                    "run the target (in the foreground; systemd Type=notify)",
                    "Runs the target in the foreground (systemd Type=notify). SIGHUP reloads the configuration file "
                            + "(a bad file is refused and the running configuration stays); SIGTERM or SIGINT stops "
                            + "in order and exits 0.")
            .requiredOption("-c", "--config", Type.PATH, "FILE", "the YAML configuration")
            .flag(null, "--dry-run", "validate, serve metrics, answer signals and sd_notify, but serve no storage "
                    + "(logs what it would do)")
            .option(null, "--runtime", Type.STRING, "NAME", null, "which target runtime to use when several are "
                    + "installed")
            .option(null, "--control-socket", Type.STRING, "PATH", null, "the local socket nvmf-target ana "
                    + "reaches this daemon on (default: $RUNTIME_DIRECTORY/control.sock under systemd, else "
                    + "/run/nvmf-target/control.sock; 'none' for none). Given explicitly, a socket that cannot be "
                    + "bound fails the start; the default one is only warned about")
            .option(null, "--stop-timeout", Type.INT, "SECONDS", "30", "how long an orderly stop may drain queues, "
                    + "in seconds (keep below systemd's TimeoutStopSec)");

    /** The logger, made when serve runs: parsing another command's arguments starts no logging. */
    private static final class Log {
        static final Logger LOG = Logger.getLogger(ServeCommand.class.getName());
    }

    Path config;
    boolean dryRun;
    String runtimeName;
    String controlSocket;
    int stopTimeoutSeconds;

    @Override
    public void bind(Arguments arguments) {
        config = arguments.path("--config");
        dryRun = arguments.flag("--dry-run");
        runtimeName = arguments.string("--runtime");
        controlSocket = arguments.string("--control-socket");
        stopTimeoutSeconds = arguments.integer("--stop-timeout");
    }

    @Override
    public int call(PrintWriter out, PrintWriter err) {
        LogSetup.configure(LoggingSection.defaults(), System.getenv(), System.err);
        SdNotify notify = SdNotify.fromEnvironment();
        TargetConfig cfg;
        try {
            ConfigLoader.Result result = ConfigLoader.load(config);
            result.warnings().forEach(w -> Log.LOG.warning("configuration warning: " + w));
            cfg = result.config();
        } catch (ConfigException e) {
            for (ConfigError error : e.errors()) {
                Log.LOG.severe("invalid configuration: " + error);
            }
            notify.status("invalid configuration: " + e.errors().get(0));
            return ExitCodes.CONFIG;
        }
        LogSetup.configure(cfg.logging(), System.getenv(), System.err);
        TargetMetrics metrics = new TargetMetrics();
        TargetRuntime runtime;
        if (dryRun) {
            runtime = new DryRunRuntime();
        } else {
            List<TargetRuntimeFactory> factories = new ArrayList<>();
            ServiceLoader.load(TargetRuntimeFactory.class).forEach(factories::add);
            TargetRuntimeFactory chosen = null;
            for (TargetRuntimeFactory f : factories) {
                if (runtimeName == null || f.name().equals(runtimeName)) {
                    chosen = f;
                    break;
                }
            }
            if (chosen == null) {
                Log.LOG.severe(factories.isEmpty()
                        ? "this build has no target runtime yet; 'serve --dry-run' exercises configuration, "
                          + "reload, signals, sd_notify and metrics without serving"
                        : "no target runtime named '" + runtimeName + "'; installed: "
                          + factories.stream().map(TargetRuntimeFactory::name).toList());
                notify.status("failed: no target runtime");
                return ExitCodes.UNAVAILABLE;
            }
            runtime = chosen.create(metrics);
        }
        TargetService service = new TargetService(config, runtime, metrics, notify,
                Duration.ofSeconds(stopTimeoutSeconds));
        service.installSignalHandlers();
        if (!"none".equals(controlSocket)) {
            service.controlSocket(controlSocket == null ? ControlSocket.defaultPath(System.getenv())
                    : Path.of(controlSocket), controlSocket != null);
        }
        try (notify) {
            return service.run(cfg);
        }
    }
}
