package dev.nvmf.tests.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The outcome of one lab VM run: what {@code tests/lab/lab.sh} left in its results folder.
 *
 * <p>{@link #exitStatus()} is the scenario's exit status, or {@link #STATUS_VM_TIMEOUT} when the VM ran past its
 * bound, or {@link #STATUS_NO_STATUS} when the guest stopped without reporting (crash, panic, setup failure).
 * {@link #describe()} gathers everything needed to diagnose a failure: console, setup log, the scenario's
 * output and every collected log.
 */
public final class LabRun {
    /** lab.sh: the VM did not finish within its timeout and was killed. */
    public static final int STATUS_VM_TIMEOUT = 124;
    /** lab.sh: the guest stopped without writing a status. */
    public static final int STATUS_NO_STATUS = 125;
    /** Scenario status when it ran past its own (guest-side) timeout. */
    public static final int STATUS_SCENARIO_TIMEOUT = 124;

    private static final int TAIL_LINES = 60;
    private static final int HS_ERR_HEAD_LINES = 40;

    private final String scenario;
    private final int exitStatus;
    private final Path outDir;
    private final Path hostLog;

    LabRun(String scenario, int exitStatus, Path outDir, Path hostLog) {
        this.scenario = scenario;
        this.exitStatus = exitStatus;
        this.outDir = outDir;
        this.hostLog = hostLog;
    }

    public String scenario() { return scenario; }

    /** The scenario's exit status (0 = success); 124 or 125 for a hung or dead guest, see the constants. */
    public int exitStatus() { return exitStatus; }

    public boolean succeeded() { return exitStatus == 0; }

    /** Whether the guest wrote its status file, i.e. the scenario ran to completion (or to its own timeout). */
    public boolean guestReported() { return Files.isRegularFile(outDir.resolve("status")); }

    /** The folder with everything the run produced (kept after the test for inspection). */
    public Path outDir() { return outDir; }

    public String stdout() { return read(outDir.resolve("scenario.out")); }

    public String stderr() { return read(outDir.resolve("scenario.err")); }

    /** The guest's serial console (kernel messages, boot.sh progress). */
    public String console() { return read(outDir.resolve("console.log")); }

    /** The guest's common setup (modules, veth, Soft-RoCE links). */
    public String setupLog() { return read(outDir.resolve("setup.log")); }

    /** What lab.sh itself printed on the host (initramfs build, qemu errors). */
    public String hostLog() { return read(hostLog); }

    /** A log the scenario or the harness collected: {@code logs/NAME.log}, or {@code logs/NAME} if it has a suffix. */
    public Optional<String> log(String name) {
        Path p = outDir.resolve("logs").resolve(name.contains(".") ? name : name + ".log");
        return Files.isRegularFile(p) ? Optional.of(read(p)) : Optional.empty();
    }

    /**
     * Whether a JVM in the guest died of a fatal error (SIGSEGV, SIGILL...): an hs_err report among the logs, or
     * HotSpot's fatal-error banner in the scenario's output or a log. Under single-threaded TCG that is our bug until
     * shown otherwise: {@link #assertSucceeded()} fails such a run whatever the scenario's exit status, and the
     * report stays in the results folder (tests/lab/README.md, "JVM crashes").
     */
    public boolean jvmCrashed() {
        String banner = "A fatal error has been detected by the Java Runtime Environment";
        if (stderr().contains(banner) || stdout().contains(banner)) {
            return true;
        }
        for (String name : logNames()) {
            if (name.startsWith("hs_err_pid") || log(name).orElse("").contains(banner)) {
                return true;
            }
        }
        return false;
    }

    /** The hs_err reports guest JVMs left among the logs (boot.sh points -XX:ErrorFile there), by name. */
    public List<String> hsErrReports() {
        return logNames().stream().filter(n -> n.startsWith("hs_err_pid")).toList();
    }

    /** Names of the collected logs. */
    public List<String> logNames() {
        Path dir = outDir.resolve("logs");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The key=value lines the scenario recorded with {@code lab_result}, plus the harness's timings
     * (guest_boot_s, setup_s, scenario_s, host_initramfs_s, host_vm_wall_s). A key written twice keeps its last value.
     */
    public Map<String, String> results() {
        return parseResults(read(outDir.resolve("results.properties")));
    }

    /** One result, or empty. */
    public Optional<String> result(String key) {
        return Optional.ofNullable(results().get(key));
    }

    static Map<String, String> parseResults(String text) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0 && !line.startsWith("#")) {
                m.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
            }
        }
        return Collections.unmodifiableMap(m);
    }

    /**
     * Fails (AssertionError with {@link #describe()}, also printed) unless the scenario exited with status 0 and no
     * JVM crashed in the guest.
     */
    public LabRun assertSucceeded() {
        if (!succeeded() || jvmCrashed()) {
            AssertionError e = failure();
            System.out.println(e.getMessage());
            throw e;
        }
        return this;
    }

    /** The AssertionError {@link #assertSucceeded()} throws for this run, not thrown, not printed. */
    public AssertionError failure() {
        return new AssertionError(describe());
    }

    /** A short verdict line. */
    public String verdict() {
        if (guestReported() && jvmCrashed()) {
            List<String> reports = hsErrReports();
            return "lab scenario " + scenario + ": a JVM CRASHED in the guest ("
                    + (reports.isEmpty() ? "HotSpot's fatal-error banner in the output" : "logs/" + String.join(", logs/", reports))
                    + "; scenario exit status " + exitStatus + ")";
        }
        if (exitStatus == 0) {
            return "lab scenario " + scenario + " passed";
        }
        if (!guestReported()) {
            return exitStatus == STATUS_VM_TIMEOUT
                    ? "lab VM for " + scenario + " HUNG: killed at its timeout, no status from the guest"
                    : "lab guest for " + scenario + " DIED without reporting a status (lab.sh exit " + exitStatus + ")";
        }
        return exitStatus == STATUS_SCENARIO_TIMEOUT
                ? "lab scenario " + scenario + " TIMED OUT inside the guest"
                : "lab scenario " + scenario + " FAILED with exit status " + exitStatus;
    }

    /** Everything needed to diagnose the run: verdict, results, console, setup log, scenario output, logs. */
    public String describe() {
        StringBuilder b = new StringBuilder();
        b.append("==== ").append(verdict()).append(" (results in ").append(outDir).append(")\n");
        for (String report : hsErrReports()) {
            // The head says what crashed (signal, problematic frame, the thread); the rest is in the folder.
            head(b, "logs/" + report + " (a guest JVM crashed; the whole report is in the results folder)",
                    read(outDir.resolve("logs").resolve(report)), HS_ERR_HEAD_LINES);
        }
        section(b, "results.properties", read(outDir.resolve("results.properties")), Integer.MAX_VALUE);
        section(b, "lab.sh (host)", hostLog(), TAIL_LINES);
        section(b, "console.log (guest serial console)", console(), TAIL_LINES * 2);
        section(b, "setup.log", setupLog(), TAIL_LINES);
        section(b, "scenario stdout", stdout(), TAIL_LINES * 2);
        section(b, "scenario stderr", stderr(), TAIL_LINES * 2);
        List<String> rest = new ArrayList<>();
        for (String name : logNames()) {
            if (name.equals("dmesg.txt") || name.startsWith("hs_err_pid")) {
                continue;
            }
            rest.add(name);
            section(b, "logs/" + name, read(outDir.resolve("logs").resolve(name)), TAIL_LINES);
        }
        section(b, "logs/dmesg.txt", read(outDir.resolve("logs/dmesg.txt")), TAIL_LINES);
        b.append("==== end of lab run ").append(scenario).append('\n');
        return b.toString();
    }

    private static void head(StringBuilder b, String title, String text, int maxLines) {
        String[] lines = text.split("\n", -1);
        b.append("---- ").append(title).append('\n');
        for (int i = 0; i < Math.min(lines.length, maxLines); i++) {
            b.append(lines[i]).append('\n');
        }
    }

    private static void section(StringBuilder b, String title, String text, int maxLines) {
        if (text.isEmpty()) {
            b.append("---- ").append(title).append(": (empty or missing)\n");
            return;
        }
        String[] lines = text.split("\n", -1);
        int from = Math.max(0, lines.length - maxLines);
        b.append("---- ").append(title);
        if (from > 0) {
            b.append(" (last ").append(maxLines).append(" of ").append(lines.length).append(" lines)");
        }
        b.append('\n');
        for (int i = from; i < lines.length; i++) {
            if (i == lines.length - 1 && lines[i].isEmpty()) {
                break;
            }
            b.append(lines[i]).append('\n');
        }
    }

    static String read(Path p) {
        try {
            return Files.isRegularFile(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            // Binary garbage on a console (a panicking guest) must not hide the rest of the diagnosis.
            try {
                return new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1);
            } catch (IOException e2) {
                return "(unreadable: " + e2 + ")";
            }
        }
    }

    @Override
    public String toString() {
        return verdict();
    }
}
