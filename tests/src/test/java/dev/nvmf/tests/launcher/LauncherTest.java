package dev.nvmf.tests.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/nvmf-target, run as an operator runs it, on a copy of the packaged daemon (jar and lib/) in a tree of its own
 * with an AOT cache trained there: the JVM really uses the cache (classes come from the "shared objects file") when
 * the cache's record matches the JDK, the jars and the heap layout; it is left out, and {@code serve} says why in
 * one line, when any of them differs; other commands stay quiet; and no start prints the JDK's sun.misc.Unsafe
 * warnings, while the same command without the launcher's option does (so the check can fail). JDKs the machine
 * does not have are stood in for by a JDK whose release file names another version and whose bin/java records its
 * arguments before it runs the real one.
 */
class LauncherTest {
    static final String FROM_CACHE = "dev.nvmf.target.cli.Main source: shared objects file";
    static final String FROM_JAR = "dev.nvmf.target.cli.Main source: file:";
    static final String UNSAFE_WARNING = "sun.misc.Unsafe";
    static final String NOT_USED = "AOT cache";

    @TempDir
    static Path home;
    static Path launcher;
    static Path build;
    static Path cache;
    static Path record;
    static final Path REAL_JDK = Path.of(System.getProperty("java.home"));

    record Run(int exit, String out, String err) {
        String all() {
            return out + err;
        }
    }

    @BeforeAll
    static void packagedDaemonWithATrainedCache() throws Exception {
        assumeTrue(Runtime.version().feature() >= 25, "the AOT cache needs JDK 25 (tests run on " + Runtime.version() + ")");
        Path packaged = packagedBuild();
        assumeTrue(packaged != null, "target-daemon is not packaged (run mvn package first)");
        Path repo = packaged.getParent().getParent();
        build = home.resolve("target-daemon/target");
        Files.createDirectories(build.resolve("lib"));
        try (Stream<Path> s = Files.list(packaged)) {
            for (Path jar : s.filter(p -> p.getFileName().toString().matches("target-daemon-.*\\.jar")).toList()) {
                Files.copy(jar, build.resolve(jar.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        try (Stream<Path> s = Files.list(packaged.resolve("lib"))) {
            for (Path jar : s.toList()) {
                Files.copy(jar, build.resolve("lib").resolve(jar.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        Files.createDirectories(home.resolve("bin"));
        launcher = home.resolve("bin/nvmf-target");
        Files.copy(repo.resolve("bin/nvmf-target"), launcher, StandardCopyOption.COPY_ATTRIBUTES);
        cache = build.resolve("nvmf-target.aot");
        record = build.resolve("nvmf-target.aot.record");
        // A small training: the command line's start (no kit; the workload is the CLI itself).
        Run train = run(Map.of(), "--aot-train", "", "dev.nvmf.target.cli.Main", "--version");
        assertEquals(0, train.exit(), train::all);
        assertTrue(Files.size(cache) > 0 && Files.exists(record), train::all);
        Files.writeString(home.resolve("unreachable.yaml"), """
                subsystems:
                  - nqn: nqn.2024-01.dev.nvmf:launcher
                    allow_any_host: true
                    namespaces:
                      - nsid: 1
                        ram_size: 1MiB
                ports:
                  - id: 1
                    traddr: 192.0.2.1
                    trsvcid: 4420
                    subsystems: [nqn.2024-01.dev.nvmf:launcher]
                metrics:
                  enabled: false
                """);
    }

    /** target-daemon's build folder with its jar and lib/, found from where the daemon's classes come from. */
    private static Path packagedBuild() throws Exception {
        Path from = Path.of(dev.nvmf.target.cli.Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Path dir = from.getParent();
        if (!Files.isDirectory(dir.resolve("lib"))) {
            return null;
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.anyMatch(p -> p.getFileName().toString().matches("target-daemon-.*\\.jar")) ? dir : null;
        }
    }

    private static Run run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", launcher.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(home.toFile());
        Map<String, String> e = pb.environment();
        for (String k : List.of("JAVA_HOME", "NVMF_JAVA_OPTS", "NVMF_AOT", "NVMF_BUILD_DIR", "NVMF_HOME",
                "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "JDK_AOT_VM_OPTIONS", "NOTIFY_SOCKET")) {
            e.remove(k);
        }
        e.put("NVMF_JAVA_HOME", REAL_JDK.toString());
        e.putAll(env);
        Path out = Files.createTempFile(home, "out", ".txt");
        Path err = Files.createTempFile(home, "err", ".txt");
        Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "bin/nvmf-target " + String.join(" ", args) + " hung");
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private Run version(Map<String, String> env) throws IOException, InterruptedException {
        Map<String, String> e = new java.util.HashMap<>(env);
        e.merge("NVMF_JAVA_OPTS", "-Xlog:class+load=info", (a, b) -> a + " " + b);
        Run r = run(e, "--version");
        assertEquals(0, r.exit(), r::all);
        return r;
    }

    /** {@link #serveMissingConfig} with the JVM's class loading on stdout: where the launcher's main class came from. */
    private Run serveClasses(Map<String, String> env) throws IOException, InterruptedException {
        Map<String, String> e = new java.util.HashMap<>(env);
        e.merge("NVMF_JAVA_OPTS", "-Xlog:class+load=info", (a, b) -> a + " " + b);
        return serveMissingConfig(e);
    }

    /** serve with a configuration it cannot serve: exit 4 at once; what the launcher said is on stderr. */
    private Run serveMissingConfig(Map<String, String> env) throws IOException, InterruptedException {
        Run r = run(env, "serve", "--config", home.resolve("missing.yaml").toString());
        assertEquals(4, r.exit(), r::all);
        return r;
    }

    // ------------------------------------------------------------------------------------------ AOT cache

    @Test
    void theCacheIsUsedWhenItsRecordMatches() throws Exception {
        Run r = serveClasses(Map.of());
        assertTrue(r.out().contains(FROM_CACHE), r::all);
        assertFalse(r.err().contains(NOT_USED), r::all);
    }

    /**
     * A short command starts without the cache even when it matches: the JVM loads every cached class at start-up,
     * which made {@code --version} take 17-18 s against 2.4 s for {@code java -version} in the lab guest
     * (docs/performance.md, section 4).
     */
    @Test
    void shortCommandsStartWithoutTheCache() throws Exception {
        assertTrue(serveClasses(Map.of()).out().contains(FROM_CACHE), "the cache matches");
        Run r = version(Map.of());
        assertTrue(r.out().contains(FROM_JAR), r::all);
        assertFalse(r.all().contains(NOT_USED), r::all);
    }

    @Test
    void aCacheMadeByAnotherJdkIsNotUsedAndServeSaysSo() throws Exception {
        String original = Files.readString(record);
        String jdk = original.lines().filter(l -> l.startsWith("jdk=")).findFirst().orElseThrow();
        try {
            Files.writeString(record, original.replace(jdk, "jdk=Eclipse Adoptium 25.0.1+8-LTS x86_64"));
            Run r = version(Map.of());
            assertFalse(r.err().contains(NOT_USED), "only serve reports it: " + r.err());
            Run serve = serveMissingConfig(Map.of());
            assertTrue(serve.err().contains("AOT cache " + cache + " not used: it was made by JDK Eclipse Adoptium"
                    + " 25.0.1+8-LTS x86_64, this is JDK " + jdk.substring(4)), serve::err);
            assertEquals(1, serve.err().lines().filter(l -> l.contains(NOT_USED)).count(), serve::err);
        } finally {
            Files.writeString(record, original);
        }
        assertTrue(serveClasses(Map.of()).out().contains(FROM_CACHE));
    }

    @Test
    void aCacheIsNotUsedOnceAJarChanged() throws Exception {
        Path jar;
        try (Stream<Path> s = Files.list(build.resolve("lib"))) {
            jar = s.filter(p -> p.getFileName().toString().startsWith("snakeyaml-engine")).findFirst().orElseThrow();
        }
        FileTime before = Files.getLastModifiedTime(jar);
        try {
            Files.setLastModifiedTime(jar, FileTime.fromMillis(before.toMillis() + 60_000));
            Run serve = serveClasses(Map.of());
            assertTrue(serve.out().contains(FROM_JAR), serve::all);
            assertTrue(serve.err().contains("not used: the jars in " + build
                    + " changed since it was made"));
        } finally {
            Files.setLastModifiedTime(jar, before);
        }
        assertTrue(serveClasses(Map.of()).out().contains(FROM_CACHE));
    }

    @Test
    void zgcCannotMapTheCacheSoTheLauncherLeavesItOutQuietly() throws Exception {
        Map<String, String> zgc = Map.of("NVMF_JAVA_OPTS", "-XX:+UseZGC");
        Run r = serveClasses(zgc);
        assertTrue(r.out().contains(FROM_JAR), r::all);
        // The launcher did not hand the JVM a cache it would refuse with "[error][aot] ..." lines.
        assertFalse(r.all().contains("[aot]"), r::all);
        assertTrue(r.err().contains("it was made for compressed-oops and NVMF_JAVA_OPTS "
                + "(-XX:+UseZGC -Xlog:class+load=info) gives no-compressed-oops"), r::err);
    }

    @Test
    void nvmfAot0TurnsItOffWithoutAWord() throws Exception {
        Map<String, String> off = Map.of("NVMF_AOT", "0");
        Run r = serveClasses(off);
        assertTrue(r.out().contains(FROM_JAR), r::all);
        assertFalse(r.err().contains(NOT_USED), r::all);
    }

    @Test
    void withoutACacheNothingIsSaid(@TempDir Path other) throws Exception {
        Path moved = other.resolve("nvmf-target.aot");
        Files.move(cache, moved);
        try {
            Run r = serveClasses(Map.of());
            assertTrue(r.out().contains(FROM_JAR), r::all);
            assertFalse(r.err().contains(NOT_USED), r::all);
        } finally {
            Files.move(moved, cache);
        }
    }

    @Test
    void anOlderJdkGetsNeitherTheCacheNorOptionsItDoesNotKnow() throws Exception {
        Path jdk22 = fakeJdk("22.0.2", "22.0.2+9");
        // serve: the one kind of command that would get the cache.
        Run r = run(Map.of("NVMF_JAVA_HOME", jdk22.toString()), "serve", "--config",
                home.resolve("missing.yaml").toString());
        assertEquals(4, r.exit(), r::all);
        List<String> args = Files.readAllLines(jdk22.resolve("args"));
        assertTrue(args.contains("--enable-native-access=ALL-UNNAMED"), args::toString);
        assertFalse(args.stream().anyMatch(a -> a.startsWith("--sun-misc-unsafe-memory-access")), args::toString);
        assertFalse(args.stream().anyMatch(a -> a.startsWith("-XX:AOTCache")), args::toString);

        Path jdk24 = fakeJdk("24.0.2", "24.0.2+12");
        assertEquals(0, run(Map.of("NVMF_JAVA_HOME", jdk24.toString()), "--version").exit());
        assertTrue(Files.readAllLines(jdk24.resolve("args")).contains("--sun-misc-unsafe-memory-access=allow"));
    }

    @Test
    void trainingWithAJdkOlderThan25SaysSoAndBuildsOn(@TempDir Path otherHome) throws Exception {
        // In a tree of its own: training first removes the cache it replaces.
        Path build2 = otherHome.resolve("lib");
        Files.createDirectories(build2);
        try (Stream<Path> s = Files.list(build)) {
            for (Path p : s.filter(p -> p.toString().endsWith(".jar")).toList()) {
                Files.copy(p, build2.resolve(p.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        try (Stream<Path> s = Files.list(build.resolve("lib"))) {
            for (Path p : s.toList()) {
                Files.copy(p, build2.resolve(p.getFileName()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        Path jdk24 = fakeJdk("24.0.2", "24.0.2+12");
        Run r = run(Map.of("NVMF_JAVA_HOME", jdk24.toString(), "NVMF_HOME", otherHome.toString()),
                "--aot-train", "", "dev.nvmf.target.cli.Main", "--version");
        assertEquals(0, r.exit(), r::all);
        assertTrue(r.out().contains("AOT cache not built: JDK 24.0.2+12"), r::all);
        assertFalse(Files.exists(build2.resolve("nvmf-target.aot")));
        assertFalse(Files.exists(jdk24.resolve("args")), "no JVM was started for it");
    }

    // ------------------------------------------------------------------------------------------ Unsafe warnings

    @Test
    void serveStartsWithoutSunMiscUnsafeWarnings() throws Exception {
        String cfg = home.resolve("unreachable.yaml").toString();
        // Exit 5: nothing listens on 192.0.2.1 (TEST-NET-1), or this machine has no RDMA at all; either way after
        // the core and transport (and with them Agrona) were set up.
        Run r = run(Map.of(), "serve", "--config", cfg, "--stop-timeout", "1");
        assertEquals(5, r.exit(), r::all);
        assertFalse(r.all().contains(UNSAFE_WARNING), r::all);
        // The same start through a JDK 25 that is not given the option: the JDK's warning (JEP 498), from Agrona.
        Path bare = fakeJdk("22.0.2", "22.0.2+9");
        Run without = run(Map.of("NVMF_JAVA_HOME", bare.toString()), "serve", "--config", cfg, "--stop-timeout", "1");
        assertEquals(5, without.exit(), without::all);
        assertTrue(without.err().contains("WARNING: A terminally deprecated method in sun.misc.Unsafe has been called"),
                without::all);
        assertTrue(without.err().contains("org.agrona"), without::all);
    }

    @Test
    void theCommandLineStartsWithoutWarnings() throws Exception {
        Run help = run(Map.of(), "--help");
        assertEquals(0, help.exit(), help::all);
        assertFalse(help.err().contains("WARNING"), help::err);
        Run check = run(Map.of(), "check-config", "--no-device-check", home.resolve("unreachable.yaml").toString());
        assertEquals(0, check.exit(), check::all);
        assertFalse(check.err().contains("WARNING"), check::err);
    }

    /**
     * A JDK whose release file says {@code version} and whose bin/java writes its arguments to {@code args} next to
     * it, then runs this JDK's java: the launcher's choices for an older JDK, observed on the one we have.
     */
    private Path fakeJdk(String version, String runtimeVersion) throws IOException {
        Path jdk = Files.createTempDirectory(home, "jdk-" + version + "-");
        String release = Files.readString(REAL_JDK.resolve("release"))
                .replaceAll("(?m)^JAVA_VERSION=.*$", "JAVA_VERSION=\"" + version + "\"")
                .replaceAll("(?m)^JAVA_RUNTIME_VERSION=.*$", "JAVA_RUNTIME_VERSION=\"" + runtimeVersion + "\"");
        Files.writeString(jdk.resolve("release"), release);
        Files.createDirectories(jdk.resolve("bin"));
        Path java = jdk.resolve("bin/java");
        Files.writeString(java, "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"" + jdk.resolve("args") + "\"\nexec \""
                + REAL_JDK.resolve("bin/java") + "\" \"$@\"\n", StandardCharsets.US_ASCII);
        assertTrue(java.toFile().setExecutable(true));
        return jdk;
    }
}
