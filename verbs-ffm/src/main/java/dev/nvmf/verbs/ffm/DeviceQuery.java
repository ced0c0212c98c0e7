package dev.nvmf.verbs.ffm;

import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.PortAttributes;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/** ibv_query_device / ibv_query_port / ibv_query_gid, copied into the heap records of dev.nvmf.verbs. */
final class DeviceQuery {
    private DeviceQuery() {}

    static String deviceName(Rdma rdma, MemorySegment device) {
        MemorySegment name = rdma.pointer("ibv_get_device_name", device);
        return name.reinterpret(256).getString(0);
    }

    static DeviceInfo describe(Rdma rdma, MemorySegment device) {
        String name = deviceName(rdma, device);
        // ibv_get_device_guid returns the GUID in network byte order (__be64); ibv_devices prints it host order.
        long guid = Long.reverseBytes(rdma.invoke("ibv_get_device_guid", device).value());
        MemorySegment ctx = rdma.pointer("ibv_open_device", device);
        try {
            DeviceAttributes attributes = queryDevice(rdma, ctx);
            List<PortAttributes> ports = new ArrayList<>();
            for (int p = 1; p <= attributes.physPortCnt(); p++) ports.add(queryPort(rdma, ctx, p));
            return new DeviceInfo(name, guid, attributes, List.copyOf(ports));
        } finally {
            rdma.check("ibv_close_device", ctx);
        }
    }

    static DeviceAttributes queryDevice(Rdma rdma, MemorySegment ctx) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocate(NativeLayout.IBV_DEVICE_ATTR_SIZE, 8);
            rdma.check("ibv_query_device", ctx, a);
            return new DeviceAttributes(
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_QP),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_QP_WR),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_SGE),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_CQ),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_CQE),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_MR),
                    a.get(JAVA_LONG, NativeLayout.IBV_DEVICE_ATTR_MAX_MR_SIZE),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_QP_RD_ATOM),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_QP_INIT_RD_ATOM),
                    Integer.toUnsignedLong(a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_DEVICE_CAP_FLAGS)),
                    Byte.toUnsignedInt(a.get(JAVA_BYTE, NativeLayout.IBV_DEVICE_ATTR_PHYS_PORT_CNT)),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_SRQ),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_SRQ_WR),
                    a.get(JAVA_INT, NativeLayout.IBV_DEVICE_ATTR_MAX_SRQ_SGE));
        }
    }

    static PortAttributes queryPort(Rdma rdma, MemorySegment ctx, int port) {
        try (Arena arena = Arena.ofConfined()) {
            // The exported ibv_query_port fills the compat prefix of struct ibv_port_attr; zero the whole.
            MemorySegment a = arena.allocate(NativeLayout.IBV_PORT_ATTR_SIZE, 8);
            rdma.check("ibv_query_port", ctx, (byte) port, a);
            int gidCount = a.get(JAVA_INT, NativeLayout.IBV_PORT_ATTR_GID_TBL_LEN);
            List<String> gids = new ArrayList<>();
            MemorySegment gid = arena.allocate(NativeLayout.IBV_GID_SIZE, 8);
            for (int i = 0; i < gidCount; i++) {
                gid.fill((byte) 0);
                // Unpopulated RoCE GID entries fail (EINVAL/ENODATA) or read as zero: both are skipped.
                if (rdma.invoke("ibv_query_gid", ctx, (byte) port, i, gid).value() != 0) continue;
                byte[] raw = gid.toArray(JAVA_BYTE);
                if (!isZero(raw)) gids.add(formatIpv6(raw));
            }
            return new PortAttributes(port,
                    a.get(JAVA_INT, NativeLayout.IBV_PORT_ATTR_STATE),
                    a.get(JAVA_INT, NativeLayout.IBV_PORT_ATTR_MAX_MTU),
                    a.get(JAVA_INT, NativeLayout.IBV_PORT_ATTR_ACTIVE_MTU),
                    Byte.toUnsignedInt(a.get(JAVA_BYTE, NativeLayout.IBV_PORT_ATTR_LINK_LAYER)),
                    List.copyOf(gids));
        }
    }

    private static boolean isZero(byte[] b) {
        for (byte x : b) if (x != 0) return false;
        return true;
    }

    /** RFC 5952 text of a 16-byte GID (longest run of zero groups as "::"). Always IPv6, even when v4-mapped. */
    static String formatIpv6(byte[] b) {
        int[] g = new int[8];
        for (int i = 0; i < 8; i++) g[i] = ((b[2 * i] & 0xff) << 8) | (b[2 * i + 1] & 0xff);
        int bestStart = -1, bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (g[i] != 0) { i++; continue; }
            int j = i;
            while (j < 8 && g[j] == 0) j++;
            if (j - i > bestLen && j - i >= 2) { bestStart = i; bestLen = j - i; }
            i = j;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 8; i++) {
            if (i == bestStart) {
                sb.append("::");
                i += bestLen - 1;
                continue;
            }
            if (sb.length() > 0 && sb.charAt(sb.length() - 1) != ':') sb.append(':');
            sb.append(Integer.toHexString(g[i]));
        }
        return sb.toString();
    }
}
