package dev.nvmf.target.cli;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

import dev.nvmf.target.cli.CommandSpec.Type;
import dev.nvmf.target.daemon.selftest.Selftest;
import dev.nvmf.target.service.ExitCodes;
import dev.nvmf.verbs.RdmaProvider;

/** {@code nvmf-target selftest}: whether an RDMA device can carry the target, checked over its loopback. */
final class SelftestCommand implements CliCommand {
    static final CommandSpec SPEC = CommandSpec.command("nvmf-target selftest",
                    "check that an RDMA device can carry the target (first thing on real hardware)",
                    "The first thing to run on a server with an RDMA NIC: over one device's loopback, runs the "
                            + "verbs scenario the target depends on (CM connect with private data, SEND, RDMA WRITE "
                            + "and READ, SEND_WITH_INV of a memory window, unsignaled work, disconnect with flushes) "
                            + "and then an NVMe connect with I/O against an in-process RAM namespace through the "
                            + "daemon's transport. Prints the device's limits, what works and what it lacks; exits "
                            + "0 when everything the target needs works, 6 with one FAIL line per failure "
                            + "otherwise.")
            .option(null, "--device", Type.STRING, "NAME", null, "RDMA device to test (as 'nvmf-target devices' "
                    + "lists it); default: the first with an ACTIVE port")
            .option(null, "--address", Type.STRING, "IP", null, "address to run on; default: the device's own, "
                    + "from its GIDs (needed for InfiniBand: the IPoIB interface's address)")
            .option(null, "--port", Type.INT, "PORT", "14420", "RDMA CM port of the verbs scenario; the NVMe check "
                    + "listens on the next")
            .option(null, "--step-timeout", Type.INT, "SECONDS", "30", "bound of every wait")
            .flag(null, "--verbose", "also print the target's log lines (INFO)");

    String device;
    String address;
    int port;
    int stepTimeoutSeconds;
    boolean verbose;

    private final Supplier<RdmaProvider> providers;

    SelftestCommand() {
        this(DevicesCommand::ffmProvider);
    }

    SelftestCommand(Supplier<RdmaProvider> providers) {
        this.providers = providers;
    }

    @Override
    public void bind(Arguments arguments) {
        device = arguments.string("--device");
        address = arguments.string("--address");
        port = arguments.integer("--port");
        stepTimeoutSeconds = arguments.integer("--step-timeout");
        verbose = arguments.flag("--verbose");
    }

    @Override
    public int call(PrintWriter out, PrintWriter err) {
        if (port < 1 || port > 65534) {
            err.println("nvmf-target: --port must be 1 to 65534 (the NVMe check uses the next port), not " + port);
            return ExitCodes.USAGE;
        }
        if (stepTimeoutSeconds < 1) {
            err.println("nvmf-target: --step-timeout must be at least 1 second, not " + stepTimeoutSeconds);
            return ExitCodes.USAGE;
        }
        InetAddress ip = null;
        if (address != null) {
            try {
                ip = InetAddress.ofLiteral(address);
            } catch (IllegalArgumentException e) {
                err.println("nvmf-target: --address must be an IPv4 or IPv6 address, not '" + address + "'");
                return ExitCodes.USAGE;
            }
        }
        Logger daemonLog = Logger.getLogger("dev.nvmf");
        Level level = daemonLog.getLevel();
        if (!verbose) {
            daemonLog.setLevel(Level.WARNING);
        }
        try (RdmaProvider provider = providers.get();
             PrintStream report = new PrintStream(new WriterStream(out), true, StandardCharsets.UTF_8)) {
            return Selftest.run(provider, new Selftest.Options(device, ip, port, stepTimeoutSeconds * 1000L), report);
        } catch (RuntimeException | LinkageError e) {
            err.println("nvmf-target: the RDMA stack is unavailable: " + e.getMessage()
                    + " (is rdma-core's libibverbs installed? 'nvmf-target devices' says what it sees)");
            return ExitCodes.UNAVAILABLE;
        } finally {
            daemonLog.setLevel(level);
        }
    }

    /** The command's PrintWriter as the byte stream the selftest prints on (UTF-8). */
    private static final class WriterStream extends java.io.OutputStream {
        private final PrintWriter writer;
        private final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();

        WriterStream(PrintWriter writer) {
            this.writer = writer;
        }

        @Override
        public void write(int b) {
            line.write(b);
            if (b == '\n') {
                flush();
            }
        }

        @Override
        public void flush() {
            writer.print(line.toString(StandardCharsets.UTF_8));
            writer.flush();
            line.reset();
        }
    }
}
