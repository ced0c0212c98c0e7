package dev.nvmf.tests.lab;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs a lab scenario ({@code tests/lab/scenarios/*.sh}) in a QEMU guest with Soft-RoCE, the kernel NVMe-oF
 * drivers and this build's classes, through {@code tests/lab/lab.sh}.
 *
 * <pre>{@code
 * LabRun run = LabVm.run("kernel-target-fio.sh", Map.of("FIO_RUNTIME", "10"), Duration.ofMinutes(6));
 * assertEquals("1", run.results().get("verify_ok"));
 * }</pre>
 *
 * <p>The guest sees the host's file system at the same paths, so it gets the class path of the running tests
 * ({@code LAB_CLASSPATH}) and this JVM's JDK ({@code LAB_JAVA_HOME}); guest scripts start Java programs with
 * {@code run_java} / {@code start_java_bg} from {@code tests/lab/guest/lib.sh}.
 *
 * <p>Where the lab cannot run at all (no qemu, no Debian kernel, ...) a lab test FAILS when the environment says
 * {@code CI=true} and is skipped, with the reason, elsewhere.
 */
public final class LabVm {
    /** lab.sh's exit status for "the lab cannot run on this machine". */
    static final int EXIT_UNAVAILABLE = 77;
    /** Time allowed on top of the VM's own bound for lab.sh (initramfs build, qemu start and exit). */
    private static final Duration HOST_SLACK = Duration.ofMinutes(3);
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");
    private static final AtomicInteger SEQ = new AtomicInteger();

    private LabVm() {
    }

    /**
     * Boots the lab VM, runs {@code scenarioScript} (a name under tests/lab/scenarios/ or a path) with the extra
     * environment {@code env}, and returns the run. The test fails, with the console log and every scenario log
     * printed, if the guest hangs past {@code timeout}, dies, the scenario exits non-zero, or a JVM crashed in the
     * guest (its hs_err report is kept in the results folder; the run is not repeated).
     */
    public static LabRun run(String scenarioScript, Map<String, String> env, Duration timeout) {
        return start(scenarioScript, env, timeout, false).assertSucceeded();
    }

    /**
     * Like {@link #run} but returns whatever the scenario's exit status was (for tests that expect a failure, and for
     * scenarios of several parts that tests judge one by one). A guest that hangs or dies without reporting, or a
     * JVM crash in the guest, still fails the test.
     */
    public static LabRun runAllowingFailure(String scenarioScript, Map<String, String> env, Duration timeout) {
        return start(scenarioScript, env, timeout, true);
    }

    private static LabRun start(String scenarioScript, Map<String, String> env, Duration timeout,
                                boolean anyStatus) {
        Path repo = repoRoot();
        Path labSh = repo.resolve("tests/lab/lab.sh");
        requireAvailable();
        String name = scenarioScript.replaceFirst(".*/", "").replaceFirst("\\.sh$", "");
        Path out = outputRoot(repo).resolve(name + "-" + LocalDateTime.now().format(STAMP) + "-" + SEQ.incrementAndGet());
        Path hostLog = out.resolve("lab-host.log");
        long vmSeconds = Math.max(60, timeout.toSeconds());
        List<String> cmd = new ArrayList<>(List.of("bash", labSh.toString(), "--out", out.toString(),
                "--timeout", Long.toString(vmSeconds)));
        env.forEach((k, v) -> {
            cmd.add("--env");
            cmd.add(k + "=" + v);
        });
        cmd.add(scenarioScript);
        System.out.println("lab: starting " + name + " (timeout " + vmSeconds + " s), results in " + out);
        int rc;
        try {
            Files.createDirectories(out);
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(repo.toFile())
                    .redirectErrorStream(true).redirectOutput(hostLog.toFile());
            pb.environment().put("LAB_JAVA_HOME", System.getProperty("java.home"));
            pb.environment().put("LAB_CLASSPATH", testClassPath());
            Process p = pb.start();
            if (!p.waitFor(vmSeconds + HOST_SLACK.toSeconds(), TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(30, TimeUnit.SECONDS);
                rc = LabRun.STATUS_VM_TIMEOUT;
            } else {
                rc = p.exitValue();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("lab: cannot start " + labSh, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("lab: interrupted while running " + name, e);
        }
        LabRun r = new LabRun(name, rc, out, hostLog);
        if (rc == EXIT_UNAVAILABLE) {
            unavailable(LabRun.read(hostLog).strip(), System.getenv());
        }
        System.out.println("lab: " + (anyStatus && r.guestReported()
                ? "lab scenario " + name + " exited with status " + rc + " (any status allowed; the test judges it)"
                : r.verdict()) + "; " + r.results());
        if (!r.guestReported()) {
            String d = r.describe();
            System.out.println(d);
            Assertions.fail(d);
        }
        failOnJvmCrash(r);
        return r;
    }

    /**
     * Fails the test when a JVM crashed in the guest, whatever the scenario's status. Under single-threaded TCG (the
     * default) a crash is our bug until shown otherwise; under {@code LAB_TCG_THREAD=multi} the JVM crashes of
     * multi-threaded TCG are known (tests/lab/README.md), and still fail: use the jit-control scenario to measure them.
     */
    static void failOnJvmCrash(LabRun r) {
        if (r.jvmCrashed()) {
            String d = r.describe();
            System.out.println(d);
            Assertions.fail(d);
        }
    }

    /**
     * Checks that the lab can run here ({@code lab.sh check}): fails the test in CI, skips it elsewhere, with
     * the reason.
     */
    public static void requireAvailable() {
        Path labSh = repoRoot().resolve("tests/lab/lab.sh");
        String output;
        int rc;
        try {
            Process p = new ProcessBuilder("bash", labSh.toString(), "check").redirectErrorStream(true).start();
            output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                rc = -1;
                output = "lab.sh check did not finish";
            } else {
                rc = p.exitValue();
            }
        } catch (IOException e) {
            rc = -1;
            output = "cannot run bash " + labSh + ": " + e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        if (rc != 0) {
            unavailable(output, System.getenv());
        }
    }

    /**
     * The lab cannot run: in CI ({@code CI} set to anything but false/0) that is a failure, elsewhere the test is
     * skipped with the reason.
     */
    static void unavailable(String reason, Map<String, String> env) {
        String msg = "The VM lab cannot run on this machine: " + reason
                + "\n  (scripts/setup.sh, as root, installs what it needs; see tests/lab/README.md)";
        if (isCi(env)) {
            Assertions.fail(msg + "\n  CI is set: lab tests must run in CI, so this is a failure.");
        }
        System.out.println("lab: SKIPPED: " + msg);
        Assumptions.abort(msg);
    }

    static boolean isCi(Map<String, String> env) {
        String ci = env.get("CI");
        return ci != null && !ci.isBlank() && !ci.equalsIgnoreCase("false") && !ci.equals("0");
    }

    /** The repository root: the first folder upward from the working directory with tests/lab/lab.sh. */
    public static Path repoRoot() {
        Path d = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        for (Path p = d; p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("tests/lab/lab.sh"))) {
                return p;
            }
        }
        throw new IllegalStateException("lab: no tests/lab/lab.sh above " + d);
    }

    /**
     * The class path of the running tests: surefire's test class path (this module's classes and test classes,
     * the sibling modules' classes, the Maven repository's jars), all host paths the guest sees as they are.
     */
    public static String testClassPath() {
        String cp = System.getProperty("surefire.test.class.path");
        if (cp == null || cp.isBlank()) {
            cp = System.getProperty("java.class.path");
        }
        return cp;
    }

    /** Runs go under this module's build folder (target/lab, or target-NAME/lab with -DbuildDir). */
    static Path outputRoot(Path repo) {
        try {
            Path classes = Path.of(LabVm.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isDirectory(classes) && classes.getParent() != null) {
                return classes.getParent().resolve("lab");
            }
        } catch (URISyntaxException | SecurityException | NullPointerException e) {
            // fall through to the source-tree default
        }
        return repo.resolve("tests/lab/out");
    }
}
