package dev.nvmf.target.backend.rbd;

import dev.nvmf.verbs.Errno;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.logging.Level;
import java.util.logging.Logger;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Notices a resize of an open image: a thread of its own reads {@code rbd_get_size} whenever librbd reports a header
 * update ({@code rbd_update_watch}: another client resized, snapshotted or changed features), and every poll interval
 * in case a notification was missed (librbd re-establishes its header watch after a reconnect and refreshes then,
 * but a notification sent meanwhile is lost). Each size read goes to {@code sizeRead}. An image opened with
 * {@code rbd_open_read_only} has no header watch (librbd.h): librbd never refreshes its size, and polling cannot help.
 *
 * <p>The size is read here and not in the watch callback: {@code rbd_get_size} may refresh the image header
 * synchronously, which librbd's own notification thread must not wait for. The callback only releases a permit.
 */
final class ImageSizeMonitor implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ImageSizeMonitor.class.getName());

    private final String name;
    private final long image;
    private final Duration interval;
    private final LongConsumer sizeRead;
    private final Semaphore wake = new Semaphore(0);
    private final MemorySegment sizeOut;
    private final MemorySegment watchHandle;
    private final boolean watching;
    private final Thread thread;
    private volatile boolean stopping;

    /**
     * @param arena the owner's arena: holds the upcall stub and out-parameters, closed by the owner after
     *              {@link #close()}
     */
    ImageSizeMonitor(String name, long image, boolean watch, Duration interval, Arena arena, LongConsumer sizeRead) {
        this.name = name;
        this.image = image;
        this.interval = interval;
        this.sizeRead = sizeRead;
        this.sizeOut = arena.allocate(JAVA_LONG);
        this.watchHandle = arena.allocate(JAVA_LONG);
        MemorySegment stub;
        try {
            MethodHandle target = MethodHandles.lookup().findVirtual(ImageSizeMonitor.class, "headerUpdated",
                    MethodType.methodType(void.class, long.class)).bindTo(this);
            stub = Linker.nativeLinker().upcallStub(target, CephNative.RBD_UPDATE_CALLBACK, arena);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        int rc = watch ? CephNative.rbdUpdateWatch(image, watchHandle, stub.address(), 0) : -Errno.EROFS;
        this.watching = rc >= 0;
        if (watch && !watching) {
            LOG.info(name + ": no header-update watch (" + Errno.name(rc)
                    + "); the size is only polled, every " + interval.toMillis() + " ms");
        }
        this.thread = Thread.ofPlatform().daemon().name("nvmf-rbd-size-" + name).unstarted(this::run);
        thread.start();
    }

    /** True if librbd notifies this monitor of header updates. */
    boolean watching() {
        return watching;
    }

    /** librbd's update callback, on its notification thread: wake the monitor. Never throws into native code. */
    private void headerUpdated(long arg) {
        try {
            wake.release();
        } catch (Throwable t) {
            // Nothing to do: the next poll reads the size anyway.
        }
    }

    private void run() {
        while (!stopping) {
            try {
                wake.tryAcquire(interval.toNanos(), TimeUnit.NANOSECONDS);
                wake.drainPermits();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            if (stopping) {
                return;
            }
            int rc = CephNative.rbdGetSize(image, sizeOut);
            if (rc < 0) {
                LOG.warning(name + ": rbd_get_size: " + Errno.describe(rc));
                continue;
            }
            try {
                sizeRead.accept(sizeOut.get(JAVA_LONG, 0));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, name + ": capacity listener failed", e);
            }
        }
    }

    /**
     * Stops the thread (waiting at most {@code bound} for a size read in progress) and removes the watch, after
     * which librbd calls the stub no more. Returns false if the thread did not stop in time.
     */
    boolean close(Duration bound) {
        stopping = true;
        wake.release();
        boolean stopped;
        try {
            stopped = thread.join(bound);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopped = false;
        }
        if (watching) {
            int rc = CephNative.rbdUpdateUnwatch(image, watchHandle.get(JAVA_LONG, 0));
            if (rc < 0) {
                LOG.warning(name + ": rbd_update_unwatch: " + Errno.describe(rc));
            }
        }
        return stopped;
    }

    @Override
    public void close() {
        close(Duration.ofSeconds(60));
    }
}
