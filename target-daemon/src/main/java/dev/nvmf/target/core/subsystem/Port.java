package dev.nvmf.target.core.subsystem;

import dev.nvmf.target.nvme.DiscoveryLog;

import java.util.List;
import java.util.Objects;

/**
 * A configured transport port (kernel: {@code struct nvmet_port}): where hosts connect, and what a discovery log
 * entry says about it. The transport passes {@link #id()} with every queue it opens.
 *
 * @param id                port identifier (PORTID in discovery log entries), 0..65534
 * @param transportType     {@link DiscoveryLog#TRTYPE_RDMA} (the only transport today)
 * @param addressFamily     {@link DiscoveryLog#ADRFAM_IPV4} or {@link DiscoveryLog#ADRFAM_IPV6}
 * @param address           TRADDR, e.g. "192.168.1.10"
 * @param serviceId         TRSVCID, e.g. "4420"
 * @param inCapsuleDataSize bytes of in-capsule data an I/O command capsule may carry (IOCCSZ = (64 + this) / 16)
 * @param maxQueueSize      largest I/O queue a host may create (CAP.MQES = this - 1), 1's based
 * @param referrals         the discovery referrals of this port (kernel: {@code port->referrals}, listed to hosts
 *                          that come in on this port)
 * @param discoveryAllPorts a host that comes in on this port is shown the discovery entries of every port (true) or
 *                          only those of this port (false, the kernel target's behaviour, kernel discovery.c)
 */
public record Port(int id, int transportType, int addressFamily, String address, String serviceId,
                   int inCapsuleDataSize, int maxQueueSize, List<Referral> referrals, boolean discoveryAllPorts) {
    public static final int DEFAULT_IN_CAPSULE_DATA_SIZE = 4096;
    public static final int DEFAULT_MAX_QUEUE_SIZE = 1024;

    public Port {
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(serviceId, "serviceId");
        referrals = List.copyOf(referrals);
        if (id < 0 || id > 0xFFFE) {
            throw new IllegalArgumentException("port id must be 0..65534: " + id);
        }
        if (inCapsuleDataSize < 0 || inCapsuleDataSize % 16 != 0 || inCapsuleDataSize > 1 << 20) {
            throw new IllegalArgumentException("in-capsule data size must be a multiple of 16, 0..1 MiB: "
                    + inCapsuleDataSize);
        }
        if (maxQueueSize < 2 || maxQueueSize > 65536) {
            throw new IllegalArgumentException("max queue size must be 2..65536: " + maxQueueSize);
        }
    }

    /** A port without referrals whose discovery log lists this port's entries only. */
    public Port(int id, int transportType, int addressFamily, String address, String serviceId,
                int inCapsuleDataSize, int maxQueueSize) {
        this(id, transportType, addressFamily, address, serviceId, inCapsuleDataSize, maxQueueSize, List.of(), false);
    }

    /** An RDMA port with the kernel target's defaults (4 KiB in-capsule data, queues up to 1024 entries). */
    public static Port rdma(int id, int addressFamily, String address, String serviceId) {
        return new Port(id, DiscoveryLog.TRTYPE_RDMA, addressFamily, address, serviceId,
                DEFAULT_IN_CAPSULE_DATA_SIZE, DEFAULT_MAX_QUEUE_SIZE);
    }
}
