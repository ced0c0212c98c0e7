package dev.nvmf.target.service;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * An AF_UNIX SOCK_DGRAM socket through FFM: what sd_notify needs (JDK 25's UnixDomainSocketAddress channels are
 * stream-only). Addresses are file paths or, with a leading '@', names in the Linux abstract namespace.
 * Control-path only: calls allocate freely.
 */
@SuppressWarnings("restricted")
public final class UnixDatagramSocket implements AutoCloseable {
    static final int AF_UNIX = 1;
    static final int SOCK_DGRAM = 2;
    static final int SOCK_CLOEXEC = 0x80000;
    static final int MSG_NOSIGNAL = 0x4000;
    static final int POLLIN = 1;
    static final int EINTR = 4;
    /** sizeof(struct sockaddr_un): sa_family_t sun_family; char sun_path[108]. */
    static final int SOCKADDR_UN_SIZE = 110;
    static final int SUN_PATH_OFFSET = 2;
    static final int SUN_PATH_MAX = 108;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final SymbolLookup LIBC = LINKER.defaultLookup();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO =
            CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final Linker.Option CAPTURE_ERRNO = Linker.Option.captureCallState("errno");

    private static final MethodHandle SOCKET = downcall("socket",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle BIND = downcall("bind",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle SENDTO = downcall("sendto",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
            CAPTURE_ERRNO);
    private static final MethodHandle RECV = downcall("recv",
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle POLL = downcall("poll",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT), CAPTURE_ERRNO);
    private static final MethodHandle CLOSE = downcall("close",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle STRERROR = downcall("strerror",
            FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    private static final MethodHandle CLOCK_GETTIME = downcall("clock_gettime",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS));

    private final int fd;
    private final String boundAddress;
    private volatile boolean closed;

    private UnixDatagramSocket(int fd, String boundAddress) {
        this.fd = fd;
        this.boundAddress = boundAddress;
    }

    private static MethodHandle downcall(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        MemorySegment symbol = LIBC.find(name).orElseThrow(() -> new IllegalStateException("libc lacks " + name));
        return LINKER.downcallHandle(symbol, descriptor, options);
    }

    /** An unbound socket, for sending. */
    public static UnixDatagramSocket open() throws IOException {
        return new UnixDatagramSocket(socket(), null);
    }

    /** A socket bound to {@code address} (a path, or '@name' for the abstract namespace), for receiving. */
    public static UnixDatagramSocket bind(String address) throws IOException {
        int fd = socket();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = arena.allocate(CAPTURE);
            SockAddr sa = sockaddr(arena, address);
            int rc = (int) BIND.invokeExact(errno, fd, sa.segment, sa.length);
            if (rc != 0) {
                int e = errno(errno);
                closeFd(fd);
                throw new IOException("bind(" + address + "): " + strerror(e));
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            closeFd(fd);
            throw new IOException("bind(" + address + ")", t);
        }
        return new UnixDatagramSocket(fd, address);
    }

    private static int socket() throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = arena.allocate(CAPTURE);
            int fd = (int) SOCKET.invokeExact(errno, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
            if (fd < 0) {
                throw new IOException("socket(AF_UNIX, SOCK_DGRAM): " + strerror(errno(errno)));
            }
            return fd;
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("socket(AF_UNIX, SOCK_DGRAM)", t);
        }
    }

    private record SockAddr(MemorySegment segment, int length) {}

    /** Builds a sockaddr_un; '@' at the start means the abstract namespace (a leading NUL, no terminator). */
    private static SockAddr sockaddr(Arena arena, String address) throws IOException {
        if (address.isEmpty()) {
            throw new IOException("empty AF_UNIX address");
        }
        boolean abstractName = address.charAt(0) == '@';
        byte[] name = (abstractName ? address.substring(1) : address).getBytes(StandardCharsets.UTF_8);
        int pathBytes = abstractName ? 1 + name.length : name.length + 1;
        if (pathBytes > SUN_PATH_MAX) {
            throw new IOException("AF_UNIX address too long (" + pathBytes + " bytes, at most " + SUN_PATH_MAX
                    + "): " + address);
        }
        MemorySegment sa = arena.allocate(SOCKADDR_UN_SIZE, 2);
        sa.fill((byte) 0);
        sa.set(ValueLayout.JAVA_SHORT, 0, (short) AF_UNIX);
        MemorySegment.copy(name, 0, sa, ValueLayout.JAVA_BYTE, SUN_PATH_OFFSET + (abstractName ? 1 : 0),
                name.length);
        return new SockAddr(sa, SUN_PATH_OFFSET + pathBytes);
    }

    /** Sends one datagram to {@code address}. */
    public void send(String address, byte[] payload) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = arena.allocate(CAPTURE);
            SockAddr sa = sockaddr(arena, address);
            MemorySegment buf = arena.allocate(Math.max(1, payload.length));
            MemorySegment.copy(payload, 0, buf, ValueLayout.JAVA_BYTE, 0, payload.length);
            while (true) {
                long n = (long) SENDTO.invokeExact(errno, fd, buf, (long) payload.length, MSG_NOSIGNAL,
                        sa.segment, sa.length);
                if (n >= 0) {
                    return;
                }
                int e = errno(errno);
                if (e != EINTR) {
                    throw new IOException("sendto(" + address + "): " + strerror(e));
                }
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("sendto(" + address + ")", t);
        }
    }

    /** Waits up to {@code timeout} for one datagram; null if none arrived. */
    public byte[] receive(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = arena.allocate(CAPTURE);
            MemorySegment pfd = arena.allocate(8, 4);
            MemorySegment buf = arena.allocate(65536);
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                pfd.set(ValueLayout.JAVA_INT, 0, fd);
                pfd.set(ValueLayout.JAVA_SHORT, 4, (short) POLLIN);
                pfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
                int ready = (int) POLL.invokeExact(errno, pfd, 1L, (int) Math.max(1, Math.min(left / 1_000_000,
                        Integer.MAX_VALUE)));
                if (ready < 0) {
                    int e = errno(errno);
                    if (e == EINTR) {
                        continue;
                    }
                    throw new IOException("poll: " + strerror(e));
                }
                if (ready == 0) {
                    continue;
                }
                long n = (long) RECV.invokeExact(errno, fd, buf, buf.byteSize(), 0);
                if (n < 0) {
                    int e = errno(errno);
                    if (e == EINTR) {
                        continue;
                    }
                    throw new IOException("recv: " + strerror(e));
                }
                return buf.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("recv", t);
        }
    }

    /** The address given to {@link #bind}, or null. */
    public String boundAddress() {
        return boundAddress;
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            closeFd(fd);
        }
    }

    private static void closeFd(int fd) {
        try {
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            // nothing to do: the descriptor is gone either way
        }
    }

    private static int errno(MemorySegment state) {
        return (int) ERRNO.get(state, 0L);
    }

    static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            return s.reinterpret(256).getString(0) + " (errno " + errno + ")";
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    /** CLOCK_MONOTONIC in microseconds: the clock systemd compares MONOTONIC_USEC against. */
    public static long monotonicMicros() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment ts = arena.allocate(16, 8);
            int rc = (int) CLOCK_GETTIME.invokeExact(1 /* CLOCK_MONOTONIC */, ts);
            if (rc != 0) {
                throw new IllegalStateException("clock_gettime(CLOCK_MONOTONIC) failed");
            }
            return ts.get(ValueLayout.JAVA_LONG, 0) * 1_000_000L + ts.get(ValueLayout.JAVA_LONG, 8) / 1_000;
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
