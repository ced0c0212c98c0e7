package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.MemoryWindow;
import dev.nvmf.verbs.VerbsException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * A type-2 ibv_mw. {@code ibv_alloc_mw} and {@code ibv_dealloc_mw} are static inline in verbs.h (libibverbs
 * exports no such symbols): they call {@code ops.alloc_mw} / {@code ops.dealloc_mw} of the context, which is what
 * this class does, with errno captured. Binding goes through post_send (IBV_WR_BIND_MW); the native struct's
 * {@code rkey} is kept current by {@link #bindPosted}, as rxe's post_send reads it to name the window.
 */
final class FfmMemoryWindow implements MemoryWindow {
    /** struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type). */
    private static final MethodHandle ALLOC_MW = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT), Linker.Option.captureCallState("errno"));
    /** int (*dealloc_mw)(struct ibv_mw *mw). */
    private static final MethodHandle DEALLOC_MW = Linker.nativeLinker().downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS), Linker.Option.captureCallState("errno"));

    private final MemorySegment mw;
    private final MemorySegment deallocMw;
    private boolean closed;

    private FfmMemoryWindow(MemorySegment mw, MemorySegment deallocMw) {
        this.mw = mw;
        this.deallocMw = deallocMw;
    }

    static FfmMemoryWindow allocate(FfmDevice device, MemorySegment pd) {
        MemorySegment context = device.context().reinterpret(NativeLayout.IBV_CONTEXT_SIZE);
        long alloc = context.get(ADDRESS, NativeLayout.IBV_CONTEXT_OPS_ALLOC_MW).address();
        long dealloc = context.get(ADDRESS, NativeLayout.IBV_CONTEXT_OPS_DEALLOC_MW).address();
        if (alloc == 0 || dealloc == 0) {
            // What ibv_alloc_mw itself answers when the provider has no memory windows.
            throw Rdma.failure("ibv_alloc_mw", NativeLayout.EOPNOTSUPP);
        }
        MemorySegment result;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Libc.allocateCapture(arena);
            result = (MemorySegment) ALLOC_MW.invokeExact(MemorySegment.ofAddress(alloc), capture, pd,
                    NativeLayout.IBV_MW_TYPE_2);
            errno = Libc.errno(capture);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("ibv_alloc_mw", t);
        }
        if (result.address() == 0) throw Rdma.failure("ibv_alloc_mw", errno == 0 ? NativeLayout.EOPNOTSUPP : errno);
        MemorySegment mw = result.reinterpret(NativeLayout.IBV_MW_SIZE);
        int type = mw.get(JAVA_INT, NativeLayout.IBV_MW_TYPE);
        if (type != NativeLayout.IBV_MW_TYPE_2) {
            throw new VerbsException("ibv_alloc_mw", "provider returned a window of type " + type + ", not 2");
        }
        return new FfmMemoryWindow(mw, MemorySegment.ofAddress(dealloc));
    }

    @Override
    public int rkey() { return mw.get(JAVA_INT, NativeLayout.IBV_MW_RKEY); }

    @Override
    public long handle() { return mw.address(); }

    @Override
    public void bindPosted(int rkey) { mw.set(JAVA_INT, NativeLayout.IBV_MW_RKEY, rkey); }

    @Override
    public synchronized void close() {
        if (closed) return;
        int rc;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment capture = Libc.allocateCapture(arena);
            rc = (int) DEALLOC_MW.invokeExact(deallocMw, capture, mw);
            errno = Libc.errno(capture);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("ibv_dealloc_mw", t);
        }
        if (rc != 0) throw Rdma.failure("ibv_dealloc_mw", rc > 0 ? rc : errno != 0 ? errno : -rc);
        closed = true;
    }

    @Override
    public String toString() { return "FfmMemoryWindow[rkey=0x" + Integer.toHexString(rkey()) + "]"; }
}
