package dev.nvmf.target.core;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/** A QueueTransport that captures completions and disconnect requests. */
final class FakeTransport implements QueueTransport {
    final ConcurrentLinkedQueue<NvmeRequest> completed = new ConcurrentLinkedQueue<>();
    final List<String> disconnects = new ArrayList<>();
    private final String peer;
    /** When false, complete() does not record (zero-allocation runs use their own counter). */
    volatile boolean record = true;
    volatile long completions;
    /** What {@link #localAddress} answers: the local address the host reached (null: unknown). */
    volatile InetAddress localAddress;

    FakeTransport(String peer) {
        this.peer = peer;
    }

    @Override
    public void complete(NvmeRequest request) {
        completions++;
        if (record) {
            completed.add(request);
        }
    }

    @Override
    public synchronized void requestDisconnect(String reason) {
        disconnects.add(reason);
    }

    synchronized int disconnectCount() {
        return disconnects.size();
    }

    @Override
    public InetAddress localAddress() {
        return localAddress;
    }

    @Override
    public String peer() {
        return peer;
    }
}
