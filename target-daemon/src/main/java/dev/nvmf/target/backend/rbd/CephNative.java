package dev.nvmf.target.backend.rbd;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The downcalls into librados and librbd (Ceph 16.2 C API: {@code rados/librados.h}, {@code rbd/librbd.h}), one static
 * handle each, and the two upcall shapes librbd calls back through.
 *
 * <p>Every function here returns 0 (or a count) on success and a negative errno on failure; nothing sets errno.
 * Handles ({@code rados_t}, {@code rados_ioctx_t}, {@code rbd_image_t}, {@code rbd_completion_t}) travel as
 * {@code long}. The I/O path ({@code rbd_aio_*}) takes every pointer as a {@code long} too, so that a call wraps
 * nothing in a {@link MemorySegment} and allocates nothing; the control path passes strings and out-parameters as
 * segments from the caller's arena.
 *
 * <p>None of the downcalls is "critical": librbd may take locks or wait for queue space (throttling when
 * {@code rbd_cache_max_dirty} is reached), and a critical call would stall safepoints meanwhile.
 */
final class CephNative {
    private static final Linker LINKER = Linker.nativeLinker();

    /** {@code void (*rbd_callback_t)(rbd_completion_t cb, void *arg)}, both as 64-bit integers. */
    static final FunctionDescriptor RBD_CALLBACK = FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_LONG);
    /** {@code void (*rbd_update_callback_t)(void *arg)}. */
    static final FunctionDescriptor RBD_UPDATE_CALLBACK = FunctionDescriptor.ofVoid(JAVA_LONG);

    // ---- librados: control path
    private static final MethodHandle RADOS_CREATE = rados("rados_create", JAVA_INT, ADDRESS, ADDRESS);
    private static final MethodHandle RADOS_CONF_READ_FILE = rados("rados_conf_read_file", JAVA_INT, JAVA_LONG,
            ADDRESS);
    private static final MethodHandle RADOS_CONF_SET = rados("rados_conf_set", JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS);
    private static final MethodHandle RADOS_CONF_GET = rados("rados_conf_get", JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS,
            JAVA_LONG);
    private static final MethodHandle RADOS_CONNECT = rados("rados_connect", JAVA_INT, JAVA_LONG);
    private static final MethodHandle RADOS_SHUTDOWN = rados("rados_shutdown", null, JAVA_LONG);
    private static final MethodHandle RADOS_IOCTX_CREATE = rados("rados_ioctx_create", JAVA_INT, JAVA_LONG, ADDRESS,
            ADDRESS);
    private static final MethodHandle RADOS_IOCTX_DESTROY = rados("rados_ioctx_destroy", null, JAVA_LONG);
    private static final MethodHandle RADOS_IOCTX_SET_NAMESPACE = rados("rados_ioctx_set_namespace", null, JAVA_LONG,
            ADDRESS);
    private static final MethodHandle RADOS_VERSION = rados("rados_version", null, ADDRESS, ADDRESS, ADDRESS);

    // ---- librbd: control path
    private static final MethodHandle RBD_OPEN = rbd("rbd_open", JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS, ADDRESS);
    private static final MethodHandle RBD_OPEN_READ_ONLY = rbd("rbd_open_read_only", JAVA_INT, JAVA_LONG, ADDRESS,
            ADDRESS, ADDRESS);
    private static final MethodHandle RBD_CLOSE = rbd("rbd_close", JAVA_INT, JAVA_LONG);
    private static final MethodHandle RBD_STAT = rbd("rbd_stat", JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG);
    private static final MethodHandle RBD_GET_SIZE = rbd("rbd_get_size", JAVA_INT, JAVA_LONG, ADDRESS);
    private static final MethodHandle RBD_GET_FEATURES = rbd("rbd_get_features", JAVA_INT, JAVA_LONG, ADDRESS);
    private static final MethodHandle RBD_UPDATE_WATCH = rbd("rbd_update_watch", JAVA_INT, JAVA_LONG, ADDRESS,
            JAVA_LONG, JAVA_LONG);
    private static final MethodHandle RBD_UPDATE_UNWATCH = rbd("rbd_update_unwatch", JAVA_INT, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle RBD_VERSION = rbd("rbd_version", null, ADDRESS, ADDRESS, ADDRESS);

    // ---- librbd: I/O path (every pointer a long)
    private static final MethodHandle RBD_AIO_CREATE_COMPLETION = rbd("rbd_aio_create_completion", JAVA_INT,
            JAVA_LONG, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle RBD_AIO_READ = rbd("rbd_aio_read", JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG);
    private static final MethodHandle RBD_AIO_WRITE = rbd("rbd_aio_write", JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG);
    private static final MethodHandle RBD_AIO_FLUSH = rbd("rbd_aio_flush", JAVA_INT, JAVA_LONG, JAVA_LONG);
    private static final MethodHandle RBD_AIO_DISCARD = rbd("rbd_aio_discard", JAVA_INT, JAVA_LONG, JAVA_LONG,
            JAVA_LONG, JAVA_LONG);
    private static final MethodHandle RBD_AIO_WRITE_ZEROES = rbd("rbd_aio_write_zeroes", JAVA_INT, JAVA_LONG,
            JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT);
    private static final MethodHandle RBD_AIO_GET_RETURN_VALUE = rbd("rbd_aio_get_return_value", JAVA_LONG,
            JAVA_LONG);
    private static final MethodHandle RBD_AIO_RELEASE = rbd("rbd_aio_release", null, JAVA_LONG);

    private CephNative() {
    }

    private static MethodHandle rados(String name, MemoryLayout result, MemoryLayout... args) {
        return bind(CephLibraries.rados(), CephLibraries.LIBRADOS, name, result, args);
    }

    private static MethodHandle rbd(String name, MemoryLayout result, MemoryLayout... args) {
        return bind(CephLibraries.rbd(), CephLibraries.LIBRBD, name, result, args);
    }

    static MethodHandle bind(SymbolLookup lookup, String library, String name, MemoryLayout result,
                             MemoryLayout... args) {
        MemorySegment symbol = lookup.find(name).orElseThrow(() -> new IllegalStateException(
                library + " has no " + name + " (Ceph older than 16.2?)"));
        FunctionDescriptor fd = result == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(result, args);
        return LINKER.downcallHandle(symbol, fd);
    }

    // ------------------------------------------------------------------ librados

    static int radosCreate(MemorySegment clusterOut, MemorySegment id) {
        try {
            return (int) RADOS_CREATE.invokeExact(clusterOut, id);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int radosConfReadFile(long cluster, MemorySegment path) {
        try {
            return (int) RADOS_CONF_READ_FILE.invokeExact(cluster, path);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int radosConfSet(long cluster, MemorySegment option, MemorySegment value) {
        try {
            return (int) RADOS_CONF_SET.invokeExact(cluster, option, value);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int radosConfGet(long cluster, MemorySegment option, MemorySegment buffer, long length) {
        try {
            return (int) RADOS_CONF_GET.invokeExact(cluster, option, buffer, length);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int radosConnect(long cluster) {
        try {
            return (int) RADOS_CONNECT.invokeExact(cluster);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static void radosShutdown(long cluster) {
        try {
            RADOS_SHUTDOWN.invokeExact(cluster);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int radosIoctxCreate(long cluster, MemorySegment pool, MemorySegment ioctxOut) {
        try {
            return (int) RADOS_IOCTX_CREATE.invokeExact(cluster, pool, ioctxOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static void radosIoctxDestroy(long ioctx) {
        try {
            RADOS_IOCTX_DESTROY.invokeExact(ioctx);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static void radosIoctxSetNamespace(long ioctx, MemorySegment namespace) {
        try {
            RADOS_IOCTX_SET_NAMESPACE.invokeExact(ioctx, namespace);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static void radosVersion(MemorySegment major, MemorySegment minor, MemorySegment extra) {
        try {
            RADOS_VERSION.invokeExact(major, minor, extra);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------ librbd, control path

    static int rbdOpen(long ioctx, MemorySegment name, MemorySegment imageOut, MemorySegment snapshot) {
        try {
            return (int) RBD_OPEN.invokeExact(ioctx, name, imageOut, snapshot);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdOpenReadOnly(long ioctx, MemorySegment name, MemorySegment imageOut, MemorySegment snapshot) {
        try {
            return (int) RBD_OPEN_READ_ONLY.invokeExact(ioctx, name, imageOut, snapshot);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdClose(long image) {
        try {
            return (int) RBD_CLOSE.invokeExact(image);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdStat(long image, MemorySegment info, long infoSize) {
        try {
            return (int) RBD_STAT.invokeExact(image, info, infoSize);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdGetSize(long image, MemorySegment sizeOut) {
        try {
            return (int) RBD_GET_SIZE.invokeExact(image, sizeOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdGetFeatures(long image, MemorySegment featuresOut) {
        try {
            return (int) RBD_GET_FEATURES.invokeExact(image, featuresOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdUpdateWatch(long image, MemorySegment handleOut, long callback, long arg) {
        try {
            return (int) RBD_UPDATE_WATCH.invokeExact(image, handleOut, callback, arg);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdUpdateUnwatch(long image, long handle) {
        try {
            return (int) RBD_UPDATE_UNWATCH.invokeExact(image, handle);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static void rbdVersion(MemorySegment major, MemorySegment minor, MemorySegment extra) {
        try {
            RBD_VERSION.invokeExact(major, minor, extra);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    // ------------------------------------------------------------------ librbd, I/O path

    /** rbd_aio_create_completion(arg, callback, &out): the new completion is stored at {@code completionOut}. */
    static int rbdAioCreateCompletion(long arg, long callback, long completionOut) {
        try {
            return (int) RBD_AIO_CREATE_COMPLETION.invokeExact(arg, callback, completionOut);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdAioRead(long image, long offset, long length, long buffer, long completion) {
        try {
            return (int) RBD_AIO_READ.invokeExact(image, offset, length, buffer, completion);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdAioWrite(long image, long offset, long length, long buffer, long completion) {
        try {
            return (int) RBD_AIO_WRITE.invokeExact(image, offset, length, buffer, completion);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdAioFlush(long image, long completion) {
        try {
            return (int) RBD_AIO_FLUSH.invokeExact(image, completion);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdAioDiscard(long image, long offset, long length, long completion) {
        try {
            return (int) RBD_AIO_DISCARD.invokeExact(image, offset, length, completion);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static int rbdAioWriteZeroes(long image, long offset, long length, long completion, int zeroFlags, int opFlags) {
        try {
            return (int) RBD_AIO_WRITE_ZEROES.invokeExact(image, offset, length, completion, zeroFlags, opFlags);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The operation's result: bytes transferred (reads) or 0, or a negative errno. */
    static long rbdAioGetReturnValue(long completion) {
        try {
            return (long) RBD_AIO_GET_RETURN_VALUE.invokeExact(completion);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    static void rbdAioRelease(long completion) {
        try {
            RBD_AIO_RELEASE.invokeExact(completion);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** What a downcall threw, as an unchecked exception (an Error is rethrown as itself). */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }
}
