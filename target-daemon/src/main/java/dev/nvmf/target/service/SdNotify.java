package dev.nvmf.target.service;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * systemd's notification protocol (sd_notify(3)) spoken directly: datagrams of newline-separated VAR=value
 * lines to the AF_UNIX socket named by {@code NOTIFY_SOCKET} ('@' = abstract namespace). Without
 * {@code NOTIFY_SOCKET} (not under systemd, or Type=simple) every call does nothing. A failed send is logged once
 * and never stops the daemon: notification is advisory.
 */
public final class SdNotify implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(SdNotify.class.getName());

    private final String address;
    private final Duration watchdogInterval;
    private UnixDatagramSocket socket;
    private boolean failureLogged;

    SdNotify(String address, Duration watchdogInterval) {
        this.address = address;
        this.watchdogInterval = watchdogInterval;
    }

    /** Reads NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID (the watchdog applies only if the pid is ours). */
    public static SdNotify fromEnvironment(Map<String, String> env, long pid) {
        String address = env.get("NOTIFY_SOCKET");
        Duration watchdog = null;
        String usec = env.get("WATCHDOG_USEC");
        String wpid = env.get("WATCHDOG_PID");
        if (usec != null && (wpid == null || wpid.equals(Long.toString(pid)))) {
            try {
                long us = Long.parseLong(usec.trim());
                if (us > 0) {
                    watchdog = Duration.ofNanos(us * 1000);
                }
            } catch (NumberFormatException e) {
                LOG.warning("ignoring WATCHDOG_USEC='" + usec + "': not a number");
            }
        }
        return new SdNotify(address == null || address.isEmpty() ? null : address, watchdog);
    }

    public static SdNotify fromEnvironment() {
        return fromEnvironment(System.getenv(), ProcessHandle.current().pid());
    }

    public boolean enabled() {
        return address != null;
    }

    /** The watchdog period systemd expects pings within (WatchdogSec=), or null when not set. */
    public Duration watchdogInterval() {
        return watchdogInterval;
    }

    /** READY=1 with a status line: every listener is up. Also sent after a reload completes. */
    public void ready(String status) {
        send("READY=1\nSTATUS=" + oneLine(status));
    }

    public void status(String status) {
        send("STATUS=" + oneLine(status));
    }

    /** RELOADING=1 with MONOTONIC_USEC, as systemd (253+, Type=notify-reload) requires; harmless before. */
    public void reloading() {
        send("RELOADING=1\nMONOTONIC_USEC=" + UnixDatagramSocket.monotonicMicros() + "\nSTATUS=reloading");
    }

    public void stopping(String status) {
        send("STOPPING=1\nSTATUS=" + oneLine(status));
    }

    public void watchdog() {
        send("WATCHDOG=1");
    }

    /** Sends raw assignments; false if not under systemd or the send failed. */
    public synchronized boolean send(String message) {
        if (address == null) {
            return false;
        }
        try {
            if (socket == null) {
                socket = UnixDatagramSocket.open();
            }
            socket.send(address, message.getBytes(StandardCharsets.UTF_8));
            return true;
        } catch (IOException | RuntimeException e) {
            if (!failureLogged) {
                failureLogged = true;
                LOG.log(Level.WARNING, "sd_notify to " + address + " failed (further failures not logged): "
                        + e.getMessage());
            }
            return false;
        }
    }

    private static String oneLine(String s) {
        return s.replace('\n', ' ');
    }

    @Override
    public synchronized void close() {
        if (socket != null) {
            socket.close();
            socket = null;
        }
    }
}
