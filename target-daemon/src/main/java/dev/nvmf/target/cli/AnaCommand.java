package dev.nvmf.target.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.nvmf.target.cli.CommandSpec.Type;
import dev.nvmf.target.nvme.AnaLog;
import dev.nvmf.target.nvme.AnaState;
import dev.nvmf.target.service.ControlCommands;
import dev.nvmf.target.service.ControlSocket;
import dev.nvmf.target.service.ExitCodes;

/**
 * {@code nvmf-target ana set PORT GROUP STATE} and {@code nvmf-target ana show}: the running daemon's ANA group
 * states, changed and read through its control socket (docs/operations.md, "ANA and planned failover"). The command
 * edits no file: a state set here lasts until the daemon restarts or a reload changes that group on that port.
 */
final class AnaCommand {
    private static final String SOCKET_DESCRIPTION = "the daemon's control socket (default: "
            + "/run/nvmf-target/control.sock, or $RUNTIME_DIRECTORY/control.sock; serve --control-socket)";

    static final CommandSpec SET = CommandSpec.command("nvmf-target ana set",
                    "set an ANA group's state on a port, now (planned failover)",
                    "Sets an ANA group's state on one port of the running daemon, now: hosts connected through the "
                            + "port get an ANA change notice and re-read the states (planned failover). It lasts "
                            + "until the daemon restarts, or until a reload changes that group's entry in that "
                            + "port's ana_groups; edit the file as well to keep it.")
            .option(null, "--socket", Type.PATH, "PATH", null, SOCKET_DESCRIPTION)
            .parameter("PORT", Type.INT, "the port id (ports[].id)")
            .parameter("GROUP", Type.INT, "the ANA group, 1.." + AnaLog.MAX_GROUP_ID)
            .parameter("STATE", Type.STRING, "optimized, non-optimized, inaccessible, persistent-loss or change");

    static final CommandSpec SHOW = CommandSpec.command("nvmf-target ana show",
                    "print every port's ANA group states",
                    "Prints every port's state of every ANA group in use, one line each: port ID group GROUP STATE.")
            .option(null, "--socket", Type.PATH, "PATH", null, SOCKET_DESCRIPTION);

    static final CommandSpec SPEC = CommandSpec.command("nvmf-target ana",
                    "read or set the running daemon's ANA group states (set, show)",
                    "Reads or sets the running daemon's ANA group states (Asymmetric Namespace Access: which path "
                            + "a multipath host uses), through its control socket.")
            .subcommand(SET)
            .subcommand(SHOW);

    private AnaCommand() {}

    /** How long the command waits for the daemon (a reload in progress first). */
    static final Duration TIMEOUT = Duration.ofSeconds(70);

    /** {@code --socket}, of both subcommands. */
    static final class SocketOption {
        Path socket;

        Path path() {
            return socket != null ? socket : ControlSocket.defaultPath(System.getenv());
        }
    }

    /** Sends one request and prints the answer; the exit code. */
    static int send(Path socket, String request, PrintWriter out, PrintWriter err) {
        List<String> answer;
        try {
            answer = ControlSocket.request(socket, request, TIMEOUT);
        } catch (IOException e) {
            err.println("nvmf-target ana: cannot reach the daemon on " + socket + ": " + e.getMessage()
                    + " (is it running? as root or its user? serve --control-socket gives the path)");
            return ExitCodes.UNAVAILABLE;
        }
        if (answer.isEmpty()) {
            err.println("nvmf-target ana: the daemon on " + socket + " closed the connection without an answer");
            return ExitCodes.UNAVAILABLE;
        }
        String last = answer.get(answer.size() - 1);
        answer.subList(0, answer.size() - 1).forEach(out::println);
        if (last.equals("ok")) {
            return ExitCodes.OK;
        }
        err.println("nvmf-target ana: " + (last.startsWith("error: ") ? last.substring(7) : last));
        return ExitCodes.USAGE;
    }

    static final class Set implements CliCommand {
        SocketOption socket = new SocketOption();
        int port;
        int group;
        String state;

        @Override
        public void bind(Arguments arguments) {
            socket.socket = arguments.path("--socket");
            port = arguments.integer("PORT");
            group = arguments.integer("GROUP");
            state = arguments.string("STATE");
        }

        @Override
        public int call(PrintWriter out, PrintWriter err) {
            AnaState s = AnaState.ofName(state);
            if (s == null) {
                err.println("nvmf-target ana set: '" + state + "' is not an ANA state; expected one of "
                        + AnaState.names());
                return ExitCodes.USAGE;
            }
            if (group < 1 || group > AnaLog.MAX_GROUP_ID) {
                err.println("nvmf-target ana set: GROUP must be 1.." + AnaLog.MAX_GROUP_ID + ", found " + group);
                return ExitCodes.USAGE;
            }
            return send(socket.path(), ControlCommands.anaSet(port, group, s), out, err);
        }
    }

    static final class Show implements CliCommand {
        SocketOption socket = new SocketOption();

        @Override
        public void bind(Arguments arguments) {
            socket.socket = arguments.path("--socket");
        }

        @Override
        public int call(PrintWriter out, PrintWriter err) {
            return send(socket.path(), ControlCommands.ANA_SHOW, out, err);
        }
    }
}
