package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.HashMap;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The control path of libibverbs.so.1 and librdmacm.so.1, bound by name through {@link SymbolLookup} (exported
 * symbols only: the data path is inline in the headers and goes through {@link DataPath}). Loaded once, on
 * first use; a machine without rdma-core gets a {@link VerbsException} naming the library.
 *
 * <p>Every call captures errno. Conventions of the C API, which this class folds into one rule:
 * pointer results are NULL on failure (errno set); {@code ibv_*} int results are 0 or an errno value (some
 * return -1 and set errno); {@code rdma_*} int results are 0 or -1 with errno set.
 */
final class Rdma {
    static final String LIBIBVERBS = "libibverbs.so.1";
    static final String LIBRDMACM = "librdmacm.so.1";

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");

    private static volatile Rdma instance;
    private static volatile VerbsException loadFailure;

    private final Map<String, MethodHandle> handles = new HashMap<>();
    private final Map<String, MemoryLayout> results = new HashMap<>();

    private Rdma(SymbolLookup verbs, SymbolLookup cm) {
        // libibverbs. Unversioned lookup yields the default version (ibv_reg_mr@@IBVERBS_1.1 and so on).
        bind(verbs, "ibv_get_device_list", ADDRESS, ADDRESS);
        bind(verbs, "ibv_free_device_list", null, ADDRESS);
        bind(verbs, "ibv_get_device_name", ADDRESS, ADDRESS);
        bind(verbs, "ibv_get_device_guid", JAVA_LONG, ADDRESS);
        bind(verbs, "ibv_open_device", ADDRESS, ADDRESS);
        bind(verbs, "ibv_close_device", JAVA_INT, ADDRESS);
        bind(verbs, "ibv_query_device", JAVA_INT, ADDRESS, ADDRESS);
        bind(verbs, "ibv_query_port", JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS);
        bind(verbs, "ibv_query_gid", JAVA_INT, ADDRESS, JAVA_BYTE, JAVA_INT, ADDRESS);
        bind(verbs, "ibv_alloc_pd", ADDRESS, ADDRESS);
        bind(verbs, "ibv_dealloc_pd", JAVA_INT, ADDRESS);
        bind(verbs, "ibv_reg_mr", ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT);
        bind(verbs, "ibv_dereg_mr", JAVA_INT, ADDRESS);
        bind(verbs, "ibv_create_comp_channel", ADDRESS, ADDRESS);
        bind(verbs, "ibv_destroy_comp_channel", JAVA_INT, ADDRESS);
        bind(verbs, "ibv_create_cq", ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
        bind(verbs, "ibv_destroy_cq", JAVA_INT, ADDRESS);
        bind(verbs, "ibv_get_cq_event", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
        bind(verbs, "ibv_ack_cq_events", null, ADDRESS, JAVA_INT);
        bind(verbs, "ibv_create_srq", ADDRESS, ADDRESS, ADDRESS);
        bind(verbs, "ibv_destroy_srq", JAVA_INT, ADDRESS);
        bind(verbs, "ibv_modify_qp", JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
        bind(verbs, "ibv_query_qp", JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS);
        bind(verbs, "ibv_get_async_event", JAVA_INT, ADDRESS, ADDRESS);
        bind(verbs, "ibv_ack_async_event", null, ADDRESS);
        // librdmacm
        bind(cm, "rdma_create_event_channel", ADDRESS);
        bind(cm, "rdma_destroy_event_channel", null, ADDRESS);
        bind(cm, "rdma_create_id", JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT);
        bind(cm, "rdma_destroy_id", JAVA_INT, ADDRESS);
        bind(cm, "rdma_bind_addr", JAVA_INT, ADDRESS, ADDRESS);
        bind(cm, "rdma_listen", JAVA_INT, ADDRESS, JAVA_INT);
        bind(cm, "rdma_resolve_addr", JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT);
        bind(cm, "rdma_resolve_route", JAVA_INT, ADDRESS, JAVA_INT);
        bind(cm, "rdma_create_qp", JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
        bind(cm, "rdma_destroy_qp", null, ADDRESS);
        bind(cm, "rdma_connect", JAVA_INT, ADDRESS, ADDRESS);
        bind(cm, "rdma_accept", JAVA_INT, ADDRESS, ADDRESS);
        bind(cm, "rdma_reject", JAVA_INT, ADDRESS, ADDRESS, JAVA_BYTE);
        bind(cm, "rdma_disconnect", JAVA_INT, ADDRESS);
        bind(cm, "rdma_notify", JAVA_INT, ADDRESS, JAVA_INT);
        bind(cm, "rdma_get_cm_event", JAVA_INT, ADDRESS, ADDRESS);
        bind(cm, "rdma_ack_cm_event", JAVA_INT, ADDRESS);
        bind(cm, "rdma_get_devices", ADDRESS, ADDRESS);
        bind(cm, "rdma_free_devices", null, ADDRESS);
    }

    /** The loaded bindings; loads the libraries on first use. */
    static Rdma get() {
        Rdma r = instance;
        if (r != null) return r;
        synchronized (Rdma.class) {
            if (instance != null) return instance;
            if (loadFailure != null) throw loadFailure;
            try {
                SymbolLookup verbs = load(LIBIBVERBS, "libibverbs1");
                SymbolLookup cm = load(LIBRDMACM, "librdmacm1");
                instance = new Rdma(verbs, cm);
                return instance;
            } catch (VerbsException e) {
                loadFailure = e;
                throw e;
            }
        }
    }

    static SymbolLookup load(String library, String debianPackage) {
        try {
            return SymbolLookup.libraryLookup(library, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new VerbsException("dlopen " + library, "cannot load " + library
                    + " (rdma-core is not installed: install " + debianPackage + ", e.g. with scripts/setup.sh)");
        }
    }

    private void bind(SymbolLookup lookup, String name, MemoryLayout result, MemoryLayout... args) {
        MemorySegment symbol = lookup.find(name).orElseThrow(() ->
                new VerbsException("dlsym " + name, "symbol not found (rdma-core too old?)"));
        FunctionDescriptor fd = result == null ? FunctionDescriptor.ofVoid(args) : FunctionDescriptor.of(result, args);
        handles.put(name, LINKER.downcallHandle(symbol, fd, ERRNO));
        results.put(name, result);
    }

    /** The raw handle (errno capture segment first), for the few control calls made without allocation. */
    MethodHandle handle(String name) {
        MethodHandle h = handles.get(name);
        if (h == null) throw new IllegalArgumentException("not bound: " + name);
        return h;
    }

    /** Result of one call: the raw return value (0 for void; an address as long) and the captured errno. */
    record Outcome(long value, int errno) {}

    Outcome invoke(String name, Object... args) {
        MethodHandle h = handles.get(name);
        if (h == null) throw new IllegalArgumentException("not bound: " + name);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Libc.allocateCapture(arena);
            Object[] all = new Object[args.length + 1];
            all[0] = capture;
            System.arraycopy(args, 0, all, 1, args.length);
            Object r = h.invokeWithArguments(all);
            int errno = Libc.errno(capture);
            long value;
            if (r == null) value = 0;
            else if (r instanceof MemorySegment s) value = s.address();
            else if (r instanceof Integer i) value = i;
            else if (r instanceof Long l) value = l;
            else throw new IllegalStateException("unexpected result " + r);
            return new Outcome(value, errno);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(name, t);
        }
    }

    /** Calls a function returning a pointer; NULL throws with errno. */
    MemorySegment pointer(String name, Object... args) {
        Outcome o = invoke(name, args);
        if (o.value() == 0) throw failure(name, o.errno());
        return MemorySegment.ofAddress(o.value());
    }

    /** Calls a function returning 0 on success; anything else throws with the errno it stands for. */
    void check(String name, Object... args) {
        Outcome o = invoke(name, args);
        if (o.value() != 0) throw failure(name, errnoOf(o));
    }

    /** Calls a void function. */
    void run(String name, Object... args) {
        invoke(name, args);
    }

    /** The errno a non-zero int result stands for: the value itself when positive, else the captured errno. */
    static int errnoOf(Outcome o) {
        int v = (int) o.value();
        if (v > 0) return v;
        if (o.errno() != 0) return o.errno();
        return v < 0 ? -v : 0;
    }

    static VerbsException failure(String call, int errno) {
        return new VerbsException(call, errno, Libc.strerror(errno));
    }

    /** A native pointer argument. */
    static MemorySegment ptr(long address) {
        return MemorySegment.ofAddress(address);
    }
}
