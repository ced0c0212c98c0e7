package dev.nvmf.target.metrics;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * Serves {@code GET /metrics} in the Prometheus text format (version 0.0.4) with the JDK's HTTP server, on one
 * daemon thread. A scrape only reads counters; it never reaches a poller.
 */
public final class MetricsServer implements AutoCloseable {
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final HttpServer server;
    private final ExecutorService executor;

    private MetricsServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /** Binds and starts; port 0 picks a free port (see {@link #address()}). */
    public static MetricsServer start(TargetMetrics metrics, InetSocketAddress address) throws IOException {
        HttpServer server = HttpServer.create(address, 16);
        ExecutorService executor = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "nvmf-metrics-http");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", exchange -> handle(metrics, exchange));
        server.start();
        return new MetricsServer(server, executor);
    }

    private static void handle(TargetMetrics metrics, HttpExchange exchange) throws IOException {
        try (exchange) {
            String path = exchange.getRequestURI().getPath();
            String method = exchange.getRequestMethod();
            if (!path.equals("/metrics")) {
                reply(exchange, 404, "text/plain; charset=utf-8", "not found; metrics are at /metrics\n", true);
            } else if (!method.equals("GET") && !method.equals("HEAD")) {
                exchange.getResponseHeaders().set("Allow", "GET, HEAD");
                reply(exchange, 405, "text/plain; charset=utf-8", "method not allowed\n", true);
            } else {
                reply(exchange, 200, CONTENT_TYPE, metrics.scrape(), method.equals("GET"));
            }
        }
    }

    private static void reply(HttpExchange exchange, int status, String type, String body, boolean withBody)
            throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, withBody ? bytes.length : -1);
        if (withBody) {
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        }
    }

    public InetSocketAddress address() {
        return server.getAddress();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
