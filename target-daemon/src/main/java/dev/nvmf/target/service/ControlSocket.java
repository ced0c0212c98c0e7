package dev.nvmf.target.service;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.ConnectException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.StandardCopyOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.logging.Logger;

import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The daemon's local control socket: an AF_UNIX stream socket (mode 0600, in a directory of mode 0700 when the
 * daemon creates it) on which {@code nvmf-target ana set|show} reach the running daemon. Only root and the daemon's
 * own user are answered (the peer's credentials, SO_PEERCRED, are checked on every connection, besides the file's
 * mode).
 *
 * <p>The protocol is one request line per connection (UTF-8, at most {@link #MAX_LINE} bytes, ending in a newline),
 * answered by zero or more lines of output and a last line {@code ok} or {@code error: MESSAGE}; then the daemon
 * closes the connection. The request is handled by the service's control thread, in turn with reloads and stop
 * ({@link TargetService}), so an {@code ana set} never runs concurrently with a reload.
 *
 * <p>A socket file left by a daemon that was killed is found stale (nothing accepts on it) and replaced; one that
 * another running daemon answers on is refused: each daemon on a machine needs its own path
 * ({@code serve --control-socket}).
 */
public final class ControlSocket implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ControlSocket.class.getName());

    /** A request line's limit (a request is a few words). */
    public static final int MAX_LINE = 4096;
    /** How long one connection may take to send its line: a client that stalls does not hold the socket. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

    /** The socket of a daemon under systemd ({@code RuntimeDirectory=nvmf-target}) or started by hand as root. */
    public static Path defaultPath(Map<String, String> env) {
        String runtime = env.get("RUNTIME_DIRECTORY");
        if (runtime != null && !runtime.isBlank()) {
            // systemd may list several directories separated by ':'; the unit has one.
            return Path.of(runtime.split(":")[0], "control.sock");
        }
        return Path.of("/run/nvmf-target/control.sock");
    }

    private final Path path;
    private final ServerSocketChannel server;
    private final Function<String, List<String>> handler;
    private final UserPrincipal owner;
    private final Duration readTimeout;
    private final Thread acceptor;
    private volatile boolean closed;

    private ControlSocket(Path path, ServerSocketChannel server, Function<String, List<String>> handler,
                          UserPrincipal owner, Duration readTimeout) {
        this.path = path;
        this.server = server;
        this.handler = handler;
        this.owner = owner;
        this.readTimeout = readTimeout;
        this.acceptor = Thread.ofPlatform().daemon().name("nvmf-control").unstarted(this::acceptLoop);
    }

    /**
     * Binds the socket and starts answering. {@code handler} takes the request line and returns the output lines; an
     * {@link IllegalArgumentException} it throws becomes {@code error: MESSAGE}.
     *
     * @throws IOException when the path cannot be bound (directory not writable, another daemon serves it)
     */
    public static ControlSocket open(Path path, Function<String, List<String>> handler) throws IOException {
        return open(path, handler, READ_TIMEOUT);
    }

    static ControlSocket open(Path path, Function<String, List<String>> handler, Duration readTimeout)
            throws IOException {
        Path dir = path.toAbsolutePath().getParent();
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(
                    "rwx------")));
        }
        if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            removeStale(path);
        }
        // Bound under a temporary name, made owner-only, then renamed into place: nobody can connect while the
        // file still has the process umask's mode.
        Path bound = dir.resolve("." + path.getFileName() + "." + ProcessHandle.current().pid());
        Files.deleteIfExists(bound);
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            server.bind(UnixDomainSocketAddress.of(bound));
            Files.setPosixFilePermissions(bound, PosixFilePermissions.fromString("rw-------"));
            Files.move(bound, path, StandardCopyOption.ATOMIC_MOVE);
            UserPrincipal owner = Files.getOwner(path, LinkOption.NOFOLLOW_LINKS);
            ControlSocket s = new ControlSocket(path, server, handler, owner, readTimeout);
            s.acceptor.start();
            return s;
        } catch (IOException | RuntimeException e) {
            server.close();
            Files.deleteIfExists(bound);
            throw e;
        }
    }

    /** A socket file nothing answers on is what a killed daemon leaves: removed. One that answers is in use. */
    private static void removeStale(Path path) throws IOException {
        if (!"socket".equals(fileType(path))) {
            throw new IOException(path + " exists and is not a socket");
        }
        try (SocketChannel probe = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            probe.connect(UnixDomainSocketAddress.of(path));
            throw new IOException(path + " is in use by another running daemon (give each daemon its own "
                    + "serve --control-socket)");
        } catch (ConnectException stale) {
            Files.delete(path);
        }
    }

    private static String fileType(Path path) throws IOException {
        Object mode = Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        return mode instanceof Integer m && (m & 0170000) == 0140000 ? "socket" : "other";
    }

    public Path path() { return path; }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel c;
            try {
                c = server.accept();
            } catch (IOException e) {
                if (!closed) {
                    LOG.warning("control socket " + path + ": accept failed: " + e.getMessage());
                }
                return;
            }
            // One virtual thread per connection: a client that stalls before sending its line blocks nobody.
            Thread.ofVirtual().name("nvmf-control-conn").start(() -> serve(c));
        }
    }

    private void serve(SocketChannel c) {
        try (c; Deadline d = new Deadline(c, readTimeout)) {
            UnixDomainPrincipal peer = c.getOption(ExtendedSocketOptions.SO_PEERCRED);
            if (!allowed(peer.user())) {
                LOG.warning("control socket: request from user " + peer.user().getName() + " refused (only root "
                        + "and " + owner.getName() + ")");
                write(c, List.of("error: permission denied: only root and " + owner.getName() + " may control "
                        + "this daemon"));
                return;
            }
            String line = readLine(c);
            if (line == null) {
                // Answered, then the rest is read and dropped until the client closes (or the deadline does): closing
                // with unread bytes would reset the connection before the client reads the answer.
                write(c, List.of("error: the request must be one line of at most " + MAX_LINE + " bytes"));
                c.shutdownOutput();
                ByteBuffer drop = ByteBuffer.allocate(4096);
                while (c.read(drop.clear()) >= 0) {
                    // dropped
                }
                return;
            }
            d.cancel(); // the handler may wait for the control thread (a reload in progress)
            List<String> out = new ArrayList<>();
            try {
                out.addAll(handler.apply(line.strip()));
                out.add("ok");
            } catch (IllegalArgumentException | UnsupportedOperationException | IllegalStateException e) {
                out.add("error: " + e.getMessage());
            }
            write(c, out);
        } catch (IOException e) {
            LOG.fine("control connection: " + e.getMessage());
        }
    }

    private boolean allowed(UserPrincipal user) {
        return user.getName().equals(owner.getName()) || user.getName().equals("root");
    }

    /**
     * One line, or null when it is too long or the peer closed before the newline. Reads one byte at a time, so that
     * nothing after the newline is taken (a request is a few words).
     */
    static String readLine(SocketChannel c) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        ByteBuffer b = ByteBuffer.allocate(1);
        while (line.size() <= MAX_LINE) {
            b.clear();
            if (c.read(b) < 0) {
                return null;
            }
            b.flip();
            while (b.hasRemaining()) {
                byte x = b.get();
                if (x == '\n') {
                    return line.toString(StandardCharsets.UTF_8);
                }
                line.write(x);
            }
        }
        return null;
    }

    static void write(SocketChannel c, List<String> lines) throws IOException {
        ByteBuffer out = ByteBuffer.wrap((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
        while (out.hasRemaining()) {
            c.write(out);
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            LOG.fine("closing the control socket: " + e.getMessage());
        }
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            LOG.warning("cannot remove the control socket " + path + ": " + e.getMessage());
        }
    }

    /**
     * The client side ({@code nvmf-target ana}): sends one request and returns the daemon's lines, the last of which
     * is {@code ok} or {@code error: ...}.
     *
     * @throws IOException when no daemon answers on {@code path} (not running, wrong path, no permission) or it does
     *                     not answer within {@code timeout}
     */
    public static List<String> request(Path path, String line, Duration timeout) throws IOException {
        try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
             Deadline d = new Deadline(c, timeout)) {
            c.connect(UnixDomainSocketAddress.of(path));
            write(c, List.of(line));
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            ByteBuffer b = ByteBuffer.allocate(4096);
            while (c.read(b.clear()) >= 0) {
                all.write(b.array(), 0, b.position());
            }
            if (d.expired()) {
                throw new IOException("no answer within " + timeout.toSeconds() + " s");
            }
            return all.toString(StandardCharsets.UTF_8).lines().toList();
        } catch (java.nio.channels.AsynchronousCloseException e) {
            throw new IOException("no answer within " + timeout.toSeconds() + " s", e);
        }
    }

    /** Closes a channel when its time is up, which ends a blocked read or connect. */
    private static final class Deadline implements AutoCloseable {
        private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r ->
                Thread.ofPlatform().daemon().name("nvmf-control-timer").unstarted(r));
        private final ScheduledFuture<?> closing;
        private volatile boolean expired;

        Deadline(SocketChannel c, Duration after) {
            closing = TIMER.schedule(() -> {
                expired = true;
                try {
                    c.close();
                } catch (IOException e) {
                    // closed anyway
                }
            }, after.toMillis(), TimeUnit.MILLISECONDS);
        }

        boolean expired() { return expired; }

        void cancel() { closing.cancel(false); }

        @Override
        public void close() { cancel(); }
    }
}
