package dev.nvmf.target.daemon;

import dev.nvmf.target.backend.BackendOpenException;
import dev.nvmf.target.config.PortSection;
import dev.nvmf.target.service.EnvironmentException;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.VerbsException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Turns the failures a machine causes at start (or in a reload's prepare phase) into an {@link EnvironmentException}
 * that says what to load or check, instead of a source location: the RDMA stack missing (no rdma-core, no kernel
 * modules, no device), no permission on {@code /dev/infiniband}, a listen address no RDMA device has, the
 * locked-memory limit, a namespace's file or device. Anything else is left alone: it is a bug and keeps its stack.
 */
final class StartupDiagnosis {
    /** What an operator checks when the RDMA stack is not there at all. */
    static final String RDMA_STACK_CHECKS = "check that 'nvmf-target devices' lists a device; that the kernel "
            + "modules rdma_ucm and ib_uverbs are loaded (modprobe rdma_ucm ib_uverbs; /dev/infiniband/rdma_cm "
            + "must exist) with the NIC's RDMA driver (mlx5_ib, irdma, bnxt_re, ..., or rdma_rxe for Soft-RoCE: "
            + "rdma link add rxe0 type rxe netdev IFACE); and that the device's user-space provider is installed "
            + "(Debian: ibverbs-providers)";

    private StartupDiagnosis() {}

    /**
     * The explained failure, or null when {@code failure} is not one the machine causes.
     *
     * @param ports the ports being bound (named when an address is refused)
     */
    static EnvironmentException explain(Throwable failure, List<PortSection> ports) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof EnvironmentException e) {
                return e;
            }
            if (t instanceof VerbsException v) {
                String text = verbs(v, ports);
                return text == null ? null : new EnvironmentException(text, v);
            }
            if (t instanceof BackendOpenException b) {
                return new EnvironmentException("a namespace cannot be opened: " + b.getMessage(), b);
            }
            if (t instanceof UnsatisfiedLinkError u) {
                return new EnvironmentException("the RDMA stack is not available: " + u.getMessage() + "; install "
                        + "rdma-core's libibverbs1, librdmacm1 and ibverbs-providers", u);
            }
        }
        return null;
    }

    private static String verbs(VerbsException v, List<PortSection> ports) {
        String call = v.call();
        int errno = v.errno();
        if (call.startsWith("dlopen") || call.startsWith("dlsym")) {
            return "the RDMA stack is not available: " + v.getMessage() + "; install rdma-core's libibverbs1, "
                    + "librdmacm1 and ibverbs-providers";
        }
        if (errno == Errno.EACCES || errno == Errno.EPERM) {
            if (call.equals("ibv_reg_mr")) {
                return memlock(v);
            }
            return "no permission to use the RDMA devices: " + v.getMessage() + "; the daemon's user needs read "
                    + "and write access to /dev/infiniband/rdma_cm and /dev/infiniband/uverbs* (root, or the group "
                    + "that owns them), and under systemd the unit must not hide them (no PrivateDevices=, no "
                    + "DevicePolicy=closed without DeviceAllow=/dev/infiniband/*)";
        }
        if (call.equals("ibv_reg_mr") && (errno == Errno.ENOMEM || errno == Errno.EAGAIN)) {
            return memlock(v);
        }
        if (call.equals("rdma_bind_addr") || call.equals("rdma_listen")) {
            if (errno == Errno.EADDRINUSE) {
                return "a listen address is already in use: " + v.getMessage() + " (" + endpoints(ports)
                        + "); another RDMA listener holds it, such as the kernel target (look under "
                        + "/sys/kernel/config/nvmet/ports) or a second nvmf-target";
            }
            return "no RDMA device has a listen address: " + v.getMessage() + " (" + endpoints(ports) + "); "
                    + "ports[].traddr must be the IP address of a network interface an RDMA device is on ('nvmf-target "
                    + "devices' lists each port's GIDs, which hold those addresses; 'rdma link' shows each device's "
                    + "interface), or 0.0.0.0 for every device";
        }
        if (errno == Errno.ENODEV || errno == Errno.ENOENT || errno == Errno.ENOSYS) {
            return "the RDMA stack is not available: " + v.getMessage() + "; " + RDMA_STACK_CHECKS;
        }
        return null;
    }

    private static String memlock(VerbsException v) {
        return "registering memory with the RDMA device failed: " + v.getMessage() + "; RDMA pins registered "
                + "memory and the locked-memory limit is " + lockedMemoryLimit() + ": run with LimitMEMLOCK=infinity "
                + "(the systemd unit sets it) or ulimit -l unlimited, or give the process CAP_IPC_LOCK";
    }

    /** "64 KiB" or "unlimited", from /proc/self/limits ("Max locked memory  65536  65536  bytes"). */
    static String lockedMemoryLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max locked memory")) {
                    String soft = line.substring("Max locked memory".length()).trim().split("\\s+")[0];
                    return soft.equals("unlimited") ? "unlimited" : (Long.parseLong(soft) >> 10) + " KiB";
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux, or an unexpected format: say nothing precise
        }
        return "unknown";
    }

    private static String endpoints(List<PortSection> ports) {
        if (ports.isEmpty()) {
            return "no ports";
        }
        List<String> all = ports.stream().map(PortSection::endpoint).toList();
        return (all.size() == 1 ? "port " : "ports ") + String.join(", ", all);
    }
}
