package dev.nvmf.target.backend.rbd;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Creates, resizes, snapshots and removes test images as client.admin, in-process through librbd (the product binds
 * none of these calls). Every image made here is removed by {@link #close()}. Public for tests of other packages
 * (the daemon's, with an RBD namespace).
 */
public final class TestImages implements AutoCloseable {
    private static final MethodHandle RBD_CREATE = bind("rbd_create", JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG,
            ADDRESS);
    private static final MethodHandle RBD_REMOVE = bind("rbd_remove", JAVA_INT, JAVA_LONG, ADDRESS);
    private static final MethodHandle RBD_RESIZE = bind("rbd_resize", JAVA_INT, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle RBD_SNAP_CREATE = bind("rbd_snap_create", JAVA_INT, JAVA_LONG, ADDRESS);
    private static final MethodHandle RBD_SNAP_REMOVE = bind("rbd_snap_remove", JAVA_INT, JAVA_LONG, ADDRESS);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private final RadosConnection admin;
    private final List<String> created = new ArrayList<>();
    /** "image@snapshot" of every snapshot made: removed before their image. */
    private final List<String[]> snapshots = new ArrayList<>();

    public TestImages(CephTestCluster.Cluster cluster) throws RbdOpenException {
        this.admin = RadosConnection.open(cluster.adminSpec("test-admin"));
    }

    private static MethodHandle bind(String name, java.lang.foreign.MemoryLayout result,
                                     java.lang.foreign.MemoryLayout... args) {
        return CephNative.bind(CephLibraries.rbd(), CephLibraries.LIBRBD, name, result, args);
    }

    /** A new image "prefix-PID-N" of {@code sizeBytes} with 4 MiB objects (order 22) and the default features. */
    public String create(String prefix, long sizeBytes) {
        String name = prefix + "-" + ProcessHandle.current().pid() + "-" + SEQUENCE.incrementAndGet();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment order = a.allocate(JAVA_INT);
            order.set(JAVA_INT, 0, 22);
            int rc = (int) RBD_CREATE.invokeExact(admin.ioctx(), a.allocateFrom(name), sizeBytes, order);
            check(rc, "rbd_create " + name);
        } catch (Throwable t) {
            throw CephNative.rethrow(t);
        }
        created.add(name);
        return name;
    }

    /** Resizes through a handle of its own: another client, as far as the backend under test can tell. */
    public void resize(String image, long sizeBytes) {
        withImage(image, h -> (int) RBD_RESIZE.invokeExact(h, sizeBytes), "rbd_resize");
    }

    public void snapshot(String image, String snapshot) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment snap = a.allocateFrom(snapshot);
            withImage(image, h -> (int) RBD_SNAP_CREATE.invokeExact(h, snap), "rbd_snap_create");
        }
        snapshots.add(new String[]{image, snapshot});
    }

    public void remove(String image) {
        for (String[] s : List.copyOf(snapshots)) {
            if (s[0].equals(image)) {
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment snap = a.allocateFrom(s[1]);
                    withImage(image, h -> (int) RBD_SNAP_REMOVE.invokeExact(h, snap), "rbd_snap_remove");
                }
                snapshots.remove(s);
            }
        }
        try (Arena a = Arena.ofConfined()) {
            int rc = (int) RBD_REMOVE.invokeExact(admin.ioctx(), a.allocateFrom(image));
            check(rc, "rbd_remove " + image);
        } catch (Throwable t) {
            throw CephNative.rethrow(t);
        }
        created.remove(image);
    }

    private interface ImageCall {
        int call(long image) throws Throwable;
    }

    private void withImage(String image, ImageCall call, String what) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(CephNative.rbdOpen(admin.ioctx(), a.allocateFrom(image), out, MemorySegment.NULL), "rbd_open");
            long h = out.get(JAVA_LONG, 0);
            try {
                check(call.call(h), what + " " + image);
            } finally {
                CephNative.rbdClose(h);
            }
        } catch (Throwable t) {
            throw CephNative.rethrow(t);
        }
    }

    private static void check(int rc, String what) {
        if (rc < 0) {
            throw new IllegalStateException(what + ": " + dev.nvmf.verbs.Errno.describe(rc));
        }
    }

    @Override
    public void close() {
        for (String image : List.copyOf(created)) {
            try {
                remove(image);
            } catch (RuntimeException e) {
                // Snapshots or a watcher left by a failed test: the cluster is torn down with the JVM anyway.
                System.out.println("TestImages: " + e.getMessage());
            }
        }
        admin.close();
    }
}
