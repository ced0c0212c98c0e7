package dev.nvmf.target.config;

/**
 * The Prometheus endpoint.
 *
 * @param enabled serve /metrics at all
 * @param host    address to bind; loopback by default so metrics are not exposed by accident
 * @param port    TCP port, 9464 by default (the port OpenTelemetry's Prometheus exporter made familiar)
 */
public record MetricsSection(boolean enabled, String host, int port) {
    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_PORT = 9464;

    public static MetricsSection defaults() {
        return new MetricsSection(true, DEFAULT_HOST, DEFAULT_PORT);
    }

    /** "host:port", IPv6 in brackets. */
    public String listen() {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }
}
