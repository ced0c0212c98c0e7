package dev.nvmf.target.backend.rbd;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real single-node Ceph cluster for the test JVM: {@code scripts/ceph-test-cluster.sh start} once, on first use
 * by any test class that extends with this, and {@code stop} when JUnit closes the root context (after the last
 * test, passed or failed). Should the JVM die instead, the script's watchdog ({@code NVMF_CEPH_OWNER_PID}) stops
 * the cluster when this process is gone.
 *
 * <p>Cost: about 7-10 s to start on the 2-core build machine (one monitor, one BlueStore OSD on a sparse 4 GiB file,
 * a pool), 1-2 s to stop; printed as {@code ceph-test-cluster: started in N ms}.
 *
 * <p>Where the cluster cannot start (packages missing, not enough rights) the test classes are skipped with the
 * reason; with {@code CI=true} they fail instead.
 */
public final class CephTestCluster implements BeforeAllCallback {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(CephTestCluster.class);
    /** The script's exit status for missing packages. */
    private static final int EXIT_MISSING_TOOLS = 2;

    /** What a started cluster offers its clients (the script's output). */
    public record Cluster(Path dir, Path conf, String monitor, String pool, Path adminKeyring, String clientId,
                          Path clientKeyring, String readOnlyClientId, Path readOnlyClientKeyring,
                          long startMillis) {
        /** The OSD's process id (for tests that freeze it). */
        public long osdPid() throws IOException {
            return Long.parseLong(Files.readString(dir.resolve("run/osd.0.pid")).trim());
        }

        /** A spec for {@code image} as the least-privileged client (mon 'profile rbd', osd 'profile rbd'). */
        public RbdSpec spec(String image) {
            return RbdSpec.of(pool, image).withCredentials(conf, clientId, clientKeyring);
        }

        /** A spec for {@code image} as a client with read-only caps (osd 'profile rbd-read-only'). */
        public RbdSpec readOnlySpec(String image) {
            return RbdSpec.of(pool, image).withCredentials(conf, readOnlyClientId, readOnlyClientKeyring);
        }

        /** A spec for {@code image} as client.admin. */
        public RbdSpec adminSpec(String image) {
            return RbdSpec.of(pool, image).withCredentials(conf, "admin", adminKeyring);
        }
    }

    private static volatile Cluster current;

    /** The running cluster; only inside a class extended with this. */
    public static Cluster cluster() {
        Cluster c = current;
        if (c == null) {
            throw new IllegalStateException("no Ceph test cluster: extend the test class with CephTestCluster");
        }
        return c;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        Holder holder = context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Holder.class,
                k -> Holder.start(Path.of(System.getProperty("java.io.tmpdir"),
                        "nvmf-ceph-" + ProcessHandle.current().pid())), Holder.class);
        current = holder.startedOrSkip();
    }

    /**
     * A cluster of its own, for a test that harms it (freezes its only OSD): built now in a folder of its own,
     * removed by {@link Own#close()}, so that no other test ever runs against a cluster recovering from that harm.
     * Costs a second start (about the same as the shared one's). Skipped or failed like the shared cluster when it
     * cannot start.
     */
    public static Own startOwn(String tag) {
        Holder holder = Holder.start(Path.of(System.getProperty("java.io.tmpdir"),
                "nvmf-ceph-" + ProcessHandle.current().pid() + "-" + tag));
        try {
            return new Own(holder, holder.startedOrSkip());
        } catch (RuntimeException | Error e) {
            holder.close();
            throw e;
        }
    }

    /** A cluster started by {@link #startOwn}: {@link #close()} kills it and deletes its folder. */
    public static final class Own implements AutoCloseable {
        private final Holder holder;
        private final Cluster cluster;
        private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();

        private Own(Holder holder, Cluster cluster) {
            this.holder = holder;
            this.cluster = cluster;
        }

        public Cluster cluster() {
            return cluster;
        }

        /** Stops the cluster (once; later calls do nothing). */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                holder.close();
            }
        }
    }

    /** Started once per JVM (or once per {@link #startOwn}); JUnit closes the shared one with the root context. */
    private static final class Holder implements ExtensionContext.Store.CloseableResource {
        final Cluster cluster;
        final String failure;
        final Path script;
        final Path dir;

        private Holder(Cluster cluster, String failure, Path script, Path dir) {
            this.cluster = cluster;
            this.failure = failure;
            this.script = script;
            this.dir = dir;
        }

        /** The cluster, or (no cluster) the test is skipped, or fails with {@code CI=true}. */
        Cluster startedOrSkip() {
            if (failure != null) {
                if ("true".equals(System.getenv("CI"))) {
                    throw new AssertionError("CI=true and the Ceph test cluster is unavailable: " + failure);
                }
                Assumptions.abort("the Ceph test cluster is unavailable: " + failure);
            }
            return cluster;
        }

        static Holder start(Path dir) {
            Path script = findScript();
            if (script == null) {
                return new Holder(null, "scripts/ceph-test-cluster.sh not found above " + Path.of("").toAbsolutePath(),
                        null, null);
            }
            long t0 = System.nanoTime();
            Result r = run(script, "start", dir, 240);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            if (r.exit != 0) {
                String why = r.exit == EXIT_MISSING_TOOLS ? "Ceph packages are missing (scripts/setup.sh installs "
                        + "ceph-mon, ceph-osd, ceph-common)" : "start failed (exit " + r.exit + ")";
                run(script, "stop", dir, 60);
                return new Holder(null, why + ":\n" + tail(r.output), script, dir);
            }
            Map<String, String> env = new HashMap<>();
            for (String line : r.output.split("\n")) {
                int eq = line.indexOf('=');
                if (line.startsWith("CEPH_") && eq > 0) {
                    env.put(line.substring(0, eq), line.substring(eq + 1).trim());
                }
            }
            for (String key : List.of("CEPH_CONF", "CEPH_MON", "CEPH_POOL", "CEPH_ADMIN_KEYRING", "CEPH_CLIENT_ID",
                    "CEPH_CLIENT_KEYRING", "CEPH_RO_CLIENT_ID", "CEPH_RO_CLIENT_KEYRING")) {
                if (!env.containsKey(key)) {
                    run(script, "stop", dir, 60);
                    return new Holder(null, "the script printed no " + key + ":\n" + tail(r.output), script, dir);
                }
            }
            System.out.println("CephTestCluster: cluster at " + env.get("CEPH_MON") + " ready in " + millis
                    + " ms (" + dir + ")");
            Cluster c = new Cluster(dir, Path.of(env.get("CEPH_CONF")), env.get("CEPH_MON"), env.get("CEPH_POOL"),
                    Path.of(env.get("CEPH_ADMIN_KEYRING")), env.get("CEPH_CLIENT_ID"),
                    Path.of(env.get("CEPH_CLIENT_KEYRING")), env.get("CEPH_RO_CLIENT_ID"),
                    Path.of(env.get("CEPH_RO_CLIENT_KEYRING")), millis);
            return new Holder(c, null, script, dir);
        }

        @Override
        public void close() {
            if (script != null && cluster != null) {
                long t0 = System.nanoTime();
                Result r = run(script, "stop", dir, 60);
                System.out.println("CephTestCluster: stopped in "
                        + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms (exit " + r.exit + ")");
            }
        }
    }

    private record Result(int exit, String output) {
    }

    private static Result run(Path script, String command, Path dir, int timeoutSeconds) {
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString(), command, dir.toString())
                .redirectErrorStream(true);
        pb.environment().put("NVMF_CEPH_OWNER_PID", Long.toString(ProcessHandle.current().pid()));
        try {
            Process p = pb.start();
            // The output is small; read it fully, then wait (the script ends when its output closes).
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, new String(out, StandardCharsets.UTF_8) + "\n(timed out)");
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return new Result(-1, "cannot run " + script + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, "interrupted");
        }
    }

    private static Path findScript() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path s = d.resolve("scripts/ceph-test-cluster.sh");
            if (Files.isRegularFile(s)) {
                return s;
            }
        }
        return null;
    }

    private static String tail(String s) {
        String[] lines = s.split("\n");
        return String.join("\n", java.util.Arrays.copyOfRange(lines, Math.max(0, lines.length - 25), lines.length));
    }
}
