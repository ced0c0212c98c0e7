package dev.nvmf.target.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import java.util.logging.Logger;

import dev.nvmf.target.config.ConfigError;
import dev.nvmf.target.config.ConfigException;
import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.LoggingSection;
import dev.nvmf.target.config.TargetConfig;
import dev.nvmf.target.metrics.TargetMetrics;
import dev.nvmf.target.service.DryRunRuntime;
import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.target.service.LogSetup;
import dev.nvmf.target.service.SdNotify;
import dev.nvmf.target.service.TargetRuntime;
import dev.nvmf.target.service.TargetRuntimeFactory;
import dev.nvmf.target.service.TargetService;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Runs the target in the foreground (systemd Type=notify). SIGHUP reloads the configuration "
                + "file (a bad file is refused and the running configuration stays); SIGTERM or SIGINT stops in "
                + "order and exits 0."})
final class ServeCommand implements Callable<Integer> {
    private static final Logger LOG = Logger.getLogger(ServeCommand.class.getName());

    @Option(names = {"-c", "--config"}, required = true, paramLabel = "FILE", description = "the YAML configuration")
    Path config;

    @Option(names = "--dry-run", description = "validate, serve metrics, answer signals and sd_notify, but serve "
            + "no storage (logs what it would do)")
    boolean dryRun;

    @Option(names = "--runtime", paramLabel = "NAME", description = "which target runtime to use when several are "
            + "installed")
    String runtimeName;

    @Option(names = "--stop-timeout", paramLabel = "SECONDS", defaultValue = "30",
            description = "how long an orderly stop may drain queues (default ${DEFAULT-VALUE}s; keep below "
                    + "systemd's TimeoutStopSec)")
    int stopTimeoutSeconds;

    @Override
    public Integer call() {
        LogSetup.configure(LoggingSection.defaults(), System.getenv(), System.err);
        SdNotify notify = SdNotify.fromEnvironment();
        TargetConfig cfg;
        try {
            ConfigLoader.Result result = ConfigLoader.load(config);
            result.warnings().forEach(w -> LOG.warning("configuration warning: " + w));
            cfg = result.config();
        } catch (ConfigException e) {
            for (ConfigError error : e.errors()) {
                LOG.severe("invalid configuration: " + error);
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
                LOG.severe(factories.isEmpty()
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
        try (notify) {
            return service.run(cfg);
        }
    }
}
