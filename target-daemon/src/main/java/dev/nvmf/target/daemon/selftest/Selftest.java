package dev.nvmf.target.daemon.selftest;

import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.PortAttributes;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.selftest.VerbsScenario;

import java.io.PrintStream;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code nvmf-target selftest}: what an operator runs first on a server with an RDMA NIC. On one device, over its
 * loopback (both ends on the device's own address), it runs the provider scenario ({@link VerbsScenario}: RDMA CM
 * with private data, SEND, RDMA WRITE and READ, a type-2 window invalidated by SEND_WITH_INV, an unsignaled chain,
 * disconnect with every receive flushed) and then the NVMe check ({@link NvmeLoopbackCheck}: the daemon's runtime
 * serving a RAM namespace, an in-process host connecting and doing I/O through the real transport). It prints the
 * device's limits, what works, what the device lacks, and one line per failure.
 *
 * <p>Required: everything the target uses (CM, SEND/RECV, RDMA READ as initiator, RDMA WRITE, unsignaled work,
 * flushes on disconnect, the NVMe connect and I/O). Optional, reported as lacking: type-2 memory windows and
 * remote invalidation (the target then answers with plain SENDs, and hosts invalidate their keys themselves).
 */
public final class Selftest {
    /**
     * @param device            device name, or null for the first with an ACTIVE port
     * @param address           the address to run on, or null for the device's own (from its GIDs)
     * @param port              the verbs scenario listens on this RDMA CM port, the NVMe target on the next
     * @param stepTimeoutMillis bound of every wait
     */
    public record Options(String device, InetAddress address, int port, long stepTimeoutMillis) {}

    private Selftest() {}

    /** Runs the selftest on {@code provider}; prints the report on {@code out}; returns the exit code. */
    public static int run(RdmaProvider provider, Options options, PrintStream out) {
        List<DeviceInfo> devices = provider.listDevices();
        if (devices.isEmpty()) {
            out.println("SELFTEST: FAIL devices: no RDMA device (load the NIC's RDMA driver, or for Soft-RoCE"
                    + " 'rdma link add rxe0 type rxe netdev IFACE'; 'nvmf-target devices' lists what rdma-core sees)");
            return ExitCodes.UNAVAILABLE;
        }
        DeviceInfo device = choose(devices, options.device());
        if (device == null) {
            List<String> names = devices.stream().map(DeviceInfo::name).toList();
            out.println("SELFTEST: FAIL devices: " + (options.device() != null
                    ? "no device named " + options.device() + "; devices: " + names
                    : "no device has an ACTIVE port; devices: " + names + " (see 'nvmf-target devices')"));
            return options.device() != null ? ExitCodes.USAGE : ExitCodes.SELFTEST_FAILED;
        }
        InetAddress address = options.address();
        if (address == null) {
            List<InetAddress> addresses = addresses(device);
            if (addresses.isEmpty()) {
                out.println("SELFTEST: FAIL address: device " + device.name() + " has no IP address in its GIDs"
                        + " (InfiniBand, or no address on its network interface): give --address, an address of"
                        + " its IPoIB or Ethernet interface");
                return ExitCodes.USAGE;
            }
            address = addresses.getFirst();
        }
        PortAttributes port = device.ports().isEmpty() ? null : device.ports().getFirst();
        out.println("SELFTEST: device " + device.name() + (port == null ? "" : ", port " + port.portNum() + " "
                + port.stateName() + " " + port.linkLayerName()) + ", address " + address.getHostAddress()
                + ", RDMA CM ports " + options.port() + " (verbs) and " + (options.port() + 1) + " (NVMe)");
        out.flush();

        List<String> failures = new ArrayList<>();
        VerbsScenario.Result verbs = VerbsScenario.run(provider, VerbsScenario.Config.loopback(
                new InetSocketAddress(address, options.port()), options.stepTimeoutMillis(), out));
        boolean onDevice = verbs.capabilities().isEmpty()
                || verbs.capabilities().getFirst().startsWith(device.name() + ":");
        if (!verbs.passed()) {
            failures.add("verbs " + verbs.failedStep() + ": " + verbs.reason());
        } else if (!onDevice) {
            failures.add("address: " + address.getHostAddress() + " is on device "
                    + verbs.capabilities().getFirst().split(":")[0] + ", not " + device.name());
        }
        NvmeLoopbackCheck.Result nvme = null;
        if (failures.isEmpty()) {
            nvme = NvmeLoopbackCheck.run(provider, address, options.port() + 1,
                    !verbs.lacks(VerbsScenario.FEATURE_MEMORY_WINDOWS), options.stepTimeoutMillis(), out);
            if (!nvme.passed()) {
                failures.add("nvme " + nvme.failedStep() + ": " + nvme.reason());
            }
        }

        out.println();
        out.println("SELFTEST: device " + device.name() + " at " + address.getHostAddress());
        for (String c : verbs.capabilities()) {
            out.println("SELFTEST: limit " + c);
        }
        if (verbs.passed()) {
            out.println("SELFTEST: works: RDMA CM connect with private data, SEND, RDMA WRITE, RDMA READ, unsignaled"
                    + " chain, disconnect with every receive flushed in order"
                    + (verbs.lacks(VerbsScenario.FEATURE_MEMORY_WINDOWS) ? ""
                            : ", type-2 memory window bind"
                            + (verbs.lacks(VerbsScenario.FEATURE_REMOTE_INVALIDATION) ? ""
                                    : ", SEND_WITH_INV of the window's key (dead afterwards)")));
        }
        if (nvme != null && nvme.passed()) {
            out.println("SELFTEST: works: NVMe/RDMA connect (admin and I/O queue), Identify, keyed write and read,"
                    + " in-capsule write, Flush, disconnect with the target's drain, through the daemon's transport");
        }
        for (String l : verbs.lacking()) {
            out.println("SELFTEST: lacks (optional) " + l);
        }
        if (nvme == null) {
            out.println("SELFTEST: not run: the NVMe check (the verbs scenario failed first)");
        }
        for (String f : failures) {
            out.println("SELFTEST: FAIL " + f);
        }
        out.println(failures.isEmpty() ? "SELFTEST: PASS" : "SELFTEST: FAIL (" + failures.size() + ")");
        out.flush();
        return failures.isEmpty() ? ExitCodes.OK : ExitCodes.SELFTEST_FAILED;
    }

    /** The named device, or with no name the first with an ACTIVE port; null if none. */
    static DeviceInfo choose(List<DeviceInfo> devices, String name) {
        for (DeviceInfo d : devices) {
            if (name != null ? d.name().equals(name)
                    : d.ports().stream().anyMatch(p -> p.state() == PORT_ACTIVE)) {
                return d;
            }
        }
        return null;
    }

    /** IBV_PORT_ACTIVE. */
    private static final int PORT_ACTIVE = 4;

    /**
     * The IP addresses in a device's GIDs, IPv4 first (RoCE's IPv4-mapped GIDs, ::ffff:a.b.c.d), then global IPv6
     * ones; link-local GIDs (an InfiniBand port's, RoCE v1's fe80::) name no address the CM can bind.
     */
    static List<InetAddress> addresses(DeviceInfo device) {
        Set<InetAddress> v4 = new LinkedHashSet<>();
        Set<InetAddress> v6 = new LinkedHashSet<>();
        for (PortAttributes p : device.ports()) {
            for (String gid : p.gids()) {
                InetAddress a;
                try {
                    a = InetAddress.getByName(gid); // an IPv4-mapped literal comes back as an Inet4Address
                } catch (UnknownHostException e) {
                    continue;
                }
                if (a instanceof Inet4Address) {
                    v4.add(a);
                } else if (a instanceof Inet6Address && !a.isLinkLocalAddress() && !a.isLoopbackAddress()) {
                    v6.add(a);
                }
            }
        }
        List<InetAddress> out = new ArrayList<>(v4);
        out.addAll(v6);
        return out;
    }
}
