package dev.nvmf.target.rdma;

import java.net.InetSocketAddress;

/**
 * One listening port of the RDMA transport (the kernel target's {@code nvmet_port}).
 *
 * @param portId            the NVMe-oF port id (the discovery log's PORTID; passed to the core on openQueue)
 * @param host              address to bind: an IPv4 or IPv6 literal, or "0.0.0.0" / "::" for any
 * @param port              TCP-style service id (trsvcid), 4420 by convention
 * @param inCapsuleDataSize bytes of in-capsule data a command capsule may carry after its 64-byte SQE (0 = none);
 *                          the core advertises it through IOCCSZ and SGLS bit 20
 * @param maxQueueDepth     largest I/O queue (hsqsize + 1) accepted on this port
 * @param maxAdminQueueDepth largest admin queue accepted (the Linux host asks for 32)
 */
public record RdmaPortConfig(int portId, String host, int port, int inCapsuleDataSize, int maxQueueDepth,
                             int maxAdminQueueDepth) {
    public static final int DEFAULT_IN_CAPSULE_DATA_SIZE = 8192;
    public static final int DEFAULT_MAX_QUEUE_DEPTH = 128;
    public static final int DEFAULT_MAX_ADMIN_QUEUE_DEPTH = 32;

    public RdmaPortConfig {
        if (port < 0 || port > 65535) throw new IllegalArgumentException("port " + port + " out of range");
        if (inCapsuleDataSize < 0 || inCapsuleDataSize > 1 << 20 || inCapsuleDataSize % 16 != 0) {
            throw new IllegalArgumentException("in-capsule data size " + inCapsuleDataSize
                    + " must be a multiple of 16 between 0 and 1 MiB");
        }
        if (maxQueueDepth < 2 || maxQueueDepth > 65536) {
            throw new IllegalArgumentException("max queue depth " + maxQueueDepth + " must be 2..65536");
        }
        if (maxAdminQueueDepth < 2 || maxAdminQueueDepth > 4096) {
            throw new IllegalArgumentException("max admin queue depth " + maxAdminQueueDepth + " must be 2..4096");
        }
    }

    /** A port with the defaults: 8 KiB in-capsule data, I/O queues up to 128, admin queue up to 32. */
    public static RdmaPortConfig of(int portId, String host, int port) {
        return new RdmaPortConfig(portId, host, port, DEFAULT_IN_CAPSULE_DATA_SIZE, DEFAULT_MAX_QUEUE_DEPTH,
                DEFAULT_MAX_ADMIN_QUEUE_DEPTH);
    }

    public RdmaPortConfig withInCapsuleDataSize(int size) {
        return new RdmaPortConfig(portId, host, port, size, maxQueueDepth, maxAdminQueueDepth);
    }

    public RdmaPortConfig withMaxQueueDepth(int depth) {
        return new RdmaPortConfig(portId, host, port, inCapsuleDataSize, depth, maxAdminQueueDepth);
    }

    public InetSocketAddress socketAddress() {
        return new InetSocketAddress(host, port);
    }
}
