package dev.nvmf.target.service;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.nvme.AnaState;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The control socket: its protocol, the files it leaves and takes over, and the requests it understands. */
class ControlSocketTest {
    @TempDir
    Path dir;

    static final Duration T = Duration.ofSeconds(10);

    @Test
    void oneLineInAnswerLinesAndOkOrErrorOut() throws Exception {
        Path p = dir.resolve("c.sock");
        try (ControlSocket s = ControlSocket.open(p, line -> {
            if (line.equals("fail")) {
                throw new IllegalArgumentException("refused: " + line);
            }
            return List.of("got " + line, "second");
        })) {
            assertEquals(List.of("got hello", "second", "ok"), ControlSocket.request(p, "hello", T));
            assertEquals(List.of("error: refused: fail"), ControlSocket.request(p, "fail", T));
            assertEquals(List.of("error: the request must be one line of at most 4096 bytes"),
                    ControlSocket.request(p, "x".repeat(5000), T));
        }
        assertFalse(Files.exists(p), "closed: the file is gone");
    }

    @Test
    void aStaleSocketIsReplacedAndOneInUseIsRefused() throws Exception {
        Path p = dir.resolve("c.sock");
        // What a daemon killed with SIGKILL leaves: a socket file nothing accepts on.
        ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        dead.bind(UnixDomainSocketAddress.of(p));
        dead.close();
        assertTrue(Files.exists(p));
        try (ControlSocket s = ControlSocket.open(p, line -> List.of())) {
            assertEquals(List.of("ok"), ControlSocket.request(p, "x", T));
            IOException inUse = assertThrows(IOException.class, () -> ControlSocket.open(p, line -> List.of()));
            assertTrue(inUse.getMessage().contains("in use by another running daemon"), inUse.getMessage());
            assertEquals(List.of("ok"), ControlSocket.request(p, "x", T), "the first one still answers");
        }
        Path notASocket = dir.resolve("file");
        Files.writeString(notASocket, "x");
        IOException e = assertThrows(IOException.class, () -> ControlSocket.open(notASocket, line -> List.of()));
        assertTrue(e.getMessage().endsWith("exists and is not a socket"), e.getMessage());
    }

    @Test
    void aClientThatSendsNothingDoesNotHoldTheSocket() throws Exception {
        Path p = dir.resolve("c.sock");
        try (ControlSocket s = ControlSocket.open(p, line -> List.of("answer"), Duration.ofMillis(300));
             SocketChannel silent = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            silent.connect(UnixDomainSocketAddress.of(p));
            assertEquals(List.of("answer", "ok"), ControlSocket.request(p, "x", T), "served meanwhile");
            // The silent one is closed by the daemon after its read timeout: its read ends.
            ByteBuffer b = ByteBuffer.allocate(16);
            assertEquals(-1, silent.read(b));
        }
    }

    @Test
    void noDaemonIsAnIoException() {
        assertThrows(IOException.class, () -> ControlSocket.request(dir.resolve("none.sock"), "ana show", T));
    }

    @Test
    void theDefaultPathIsTheRuntimeDirectory() {
        assertEquals(Path.of("/run/nvmf-target/control.sock"), ControlSocket.defaultPath(Map.of()));
        assertEquals(Path.of("/run/nvmf-target/control.sock"),
                ControlSocket.defaultPath(Map.of("RUNTIME_DIRECTORY", "/run/nvmf-target")));
        assertEquals(Path.of("/run/a/control.sock"), ControlSocket.defaultPath(Map.of("RUNTIME_DIRECTORY", "/run/a:/run/b")));
    }

    @Test
    void requestsAreParsedAndCheckedBeforeTheRuntimeSeesThem() throws Exception {
        String yaml = """
                subsystems:
                  - nqn: nqn.2024-01.dev.nvmf:x
                    allow_any_host: true
                ports:
                  - {id: 3, traddr: 10.0.0.1, subsystems: [nqn.2024-01.dev.nvmf:x],
                     ana_groups: [{grpid: 2, state: non-optimized}]}
                """;
        DryRunRuntime runtime = new DryRunRuntime();
        runtime.start(ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK).config());
        assertEquals("ana set 3 2 persistent-loss", ControlCommands.anaSet(3, 2, AnaState.PERSISTENT_LOSS));
        assertEquals(List.of("port 3 ANA group 2: non-optimized -> inaccessible (dry run: nothing changed)"),
                ControlCommands.execute(runtime, "ana set 3 2 inaccessible"));
        assertEquals(List.of("port 3 group 1 optimized", "port 3 group 2 non-optimized"),
                ControlCommands.execute(runtime, "  ana   show "));
        assertEquals("no port 4", message(runtime, "ana set 4 1 optimized"));
        assertEquals("GROUP must be 1..128, found 0", message(runtime, "ana set 3 0 optimized"));
        assertEquals("PORT must be a number, found 'one'", message(runtime, "ana set one 1 optimized"));
        assertEquals("'standby' is not an ANA state; expected one of optimized, non-optimized, inaccessible, "
                + "persistent-loss, change", message(runtime, "ana set 3 1 standby"));
        assertEquals("unknown request 'reboot\\u0007?'; expected 'ana set PORT GROUP STATE' or 'ana show'"
                .replace("\\u0007", ""), message(runtime, "reboot\u0007"));
    }

    private static String message(TargetRuntime runtime, String line) {
        return assertThrows(IllegalArgumentException.class, () -> ControlCommands.execute(runtime, line))
                .getMessage();
    }

    /** What the wire carries: the request line, then the answer; a raw client sees exactly this. */
    @Test
    void theWireFormat() throws Exception {
        Path p = dir.resolve("c.sock");
        try (ControlSocket s = ControlSocket.open(p, line -> List.of("a", "b"));
             SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            c.connect(UnixDomainSocketAddress.of(p));
            c.write(ByteBuffer.wrap("req\n".getBytes(StandardCharsets.US_ASCII)));
            ByteBuffer b = ByteBuffer.allocate(64);
            while (c.read(b) >= 0) {
                // until the daemon closes
            }
            assertEquals("a\nb\nok\n", new String(b.array(), 0, b.position(), StandardCharsets.US_ASCII));
        }
    }
}
