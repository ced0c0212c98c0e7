package dev.nvmf.verbs.ffm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/** struct sockaddr_in / sockaddr_in6 to and from {@link InetSocketAddress}; port and address in network order. */
final class Sockaddr {
    private static final ValueLayout.OfShort PORT = JAVA_SHORT.withOrder(ByteOrder.BIG_ENDIAN);

    private Sockaddr() {}

    /** A sockaddr_storage holding {@code address} (an unresolved host name is resolved here). */
    static MemorySegment write(Arena arena, InetSocketAddress address) {
        MemorySegment s = arena.allocate(NativeLayout.SOCKADDR_STORAGE_SIZE, 8);
        InetAddress ip = address.getAddress();
        if (ip == null) {
            try {
                ip = InetAddress.getByName(address.getHostString());
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("cannot resolve " + address.getHostString(), e);
            }
        }
        if (ip instanceof Inet4Address) {
            s.set(JAVA_SHORT, NativeLayout.SOCKADDR_FAMILY, (short) NativeLayout.AF_INET);
            s.set(PORT, NativeLayout.SOCKADDR_IN_PORT, (short) address.getPort());
            MemorySegment.copy(ip.getAddress(), 0, s, JAVA_BYTE, NativeLayout.SOCKADDR_IN_ADDR, 4);
        } else {
            s.set(JAVA_SHORT, NativeLayout.SOCKADDR_FAMILY, (short) NativeLayout.AF_INET6);
            s.set(PORT, NativeLayout.SOCKADDR_IN6_PORT, (short) address.getPort());
            MemorySegment.copy(ip.getAddress(), 0, s, JAVA_BYTE, NativeLayout.SOCKADDR_IN6_ADDR, 16);
            if (ip instanceof Inet6Address v6) {
                s.set(JAVA_INT, NativeLayout.SOCKADDR_IN6_SCOPE_ID, v6.getScopeId());
            }
        }
        return s;
    }

    /** Reads a sockaddr; null for AF_UNSPEC or an unknown family. */
    static InetSocketAddress read(MemorySegment s) {
        int family = Short.toUnsignedInt(s.get(JAVA_SHORT, NativeLayout.SOCKADDR_FAMILY));
        try {
            if (family == NativeLayout.AF_INET) {
                byte[] a = s.asSlice(NativeLayout.SOCKADDR_IN_ADDR, 4).toArray(JAVA_BYTE);
                int port = Short.toUnsignedInt(s.get(PORT, NativeLayout.SOCKADDR_IN_PORT));
                return new InetSocketAddress(InetAddress.getByAddress(a), port);
            }
            if (family == NativeLayout.AF_INET6) {
                byte[] a = s.asSlice(NativeLayout.SOCKADDR_IN6_ADDR, 16).toArray(JAVA_BYTE);
                int port = Short.toUnsignedInt(s.get(PORT, NativeLayout.SOCKADDR_IN6_PORT));
                int scope = s.get(JAVA_INT, NativeLayout.SOCKADDR_IN6_SCOPE_ID);
                InetAddress ip = scope != 0 ? Inet6Address.getByAddress(null, a, scope) : InetAddress.getByAddress(a);
                return new InetSocketAddress(ip, port);
            }
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        return null;
    }
}
