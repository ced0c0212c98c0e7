package dev.nvmf.target.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.function.Supplier;

import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.PortAttributes;
import dev.nvmf.verbs.RdmaProvider;

/** {@code nvmf-target devices}: the RDMA devices, their ports, GIDs and limits. */
final class DevicesCommand implements CliCommand {
    static final CommandSpec SPEC = CommandSpec.command("nvmf-target devices",
            "list the RDMA devices, ports and addresses the daemon sees",
            "Lists RDMA devices as rdma-core sees them: ports, link layer, state, MTU, GIDs (addresses) and the "
                    + "device limits the target sizes itself from.");

    /** The FFM provider; loaded by name so this command reports a missing rdma-core cleanly. */
    static final String FFM_PROVIDER = "dev.nvmf.verbs.ffm.FfmProvider";

    private final Supplier<RdmaProvider> providers;

    DevicesCommand() {
        this(DevicesCommand::ffmProvider);
    }

    DevicesCommand(Supplier<RdmaProvider> providers) {
        this.providers = providers;
    }

    static RdmaProvider ffmProvider() {
        try {
            return (RdmaProvider) Class.forName(FFM_PROVIDER).getConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            Throwable cause = e instanceof java.lang.reflect.InvocationTargetException ite ? ite.getCause() : e;
            throw new IllegalStateException(cause.toString(), cause);
        }
    }

    @Override
    public void bind(Arguments arguments) {
        // no options
    }

    @Override
    public int call(PrintWriter out, PrintWriter err) {
        List<DeviceInfo> devices;
        try (RdmaProvider provider = providers.get()) {
            devices = provider.listDevices();
        } catch (RuntimeException | LinkageError e) {
            err.println("nvmf-target: the RDMA stack is unavailable: " + e.getMessage()
                    + " (is rdma-core's libibverbs installed?)");
            return ExitCodes.UNAVAILABLE;
        }
        print(out, devices);
        return ExitCodes.OK;
    }

    static void print(PrintWriter out, List<DeviceInfo> devices) {
        if (devices.isEmpty()) {
            out.println("No RDMA devices found.");
            out.println("(Load a driver, or for Soft-RoCE: rdma link add rxe0 type rxe netdev IFACE)");
            return;
        }
        for (DeviceInfo d : devices) {
            DeviceAttributes a = d.attributes();
            out.printf("%s  node_guid %s  ports %d%n", d.name(), guid(d.nodeGuid()), d.ports().size());
            out.printf("  limits: max_qp %d, max_qp_wr %d, max_sge %d, max_cq %d, max_cqe %d, max_mr %d, "
                            + "max_mr_size %d, max_qp_rd_atom %d, max_qp_init_rd_atom %d%n",
                    a.maxQp(), a.maxQpWr(), a.maxSge(), a.maxCq(), a.maxCqe(), a.maxMr(), a.maxMrSize(),
                    a.maxQpRdAtom(), a.maxQpInitRdAtom());
            out.printf("  memory management extensions (send with invalidate): %s%n",
                    a.memoryManagementExtensions() ? "yes" : "no");
            for (PortAttributes p : d.ports()) {
                out.printf("  port %d: %s  link_layer %s  active_mtu %s  max_mtu %s%n", p.portNum(), p.stateName(),
                        p.linkLayerName(), mtu(p.activeMtu()), mtu(p.maxMtu()));
                if (p.gids().isEmpty()) {
                    out.println("    no GIDs (no address configured on the port's network interface)");
                }
                for (int i = 0; i < p.gids().size(); i++) {
                    out.printf("    gid %d  %s%n", i, p.gids().get(i));
                }
            }
        }
    }

    /** The GUID in ibv_devices' form: 16 hex digits in groups of four. */
    static String guid(long guid) {
        String hex = String.format("%016x", guid);
        return hex.substring(0, 4) + ":" + hex.substring(4, 8) + ":" + hex.substring(8, 12) + ":"
                + hex.substring(12);
    }

    /** enum ibv_mtu to bytes (1 = 256 ... 5 = 4096). */
    static String mtu(int ibvMtu) {
        return ibvMtu >= 1 && ibvMtu <= 5 ? Integer.toString(128 << ibvMtu) : "unknown(" + ibvMtu + ")";
    }
}
