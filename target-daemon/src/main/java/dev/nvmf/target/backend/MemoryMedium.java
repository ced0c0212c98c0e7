package dev.nvmf.target.backend;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;

/**
 * A namespace's medium that is plain native memory (a {@link RamBackend}), which a transport may register with its
 * devices and move the host's data straight into and out of (zero copy), instead of through a buffer of its own.
 *
 * <p>Lifetime: the memory is freed only when nothing may still touch it. The backend holds it, and so does every
 * {@link User} attached to it (a transport's registration of it on one device). {@link #retire()} (the backend's
 * close) tells every user, which stops taking new I/O on it, deregisters once the I/O it has in flight is done and
 * then {@link #detach}es; the memory is freed when the last hold goes. A user whose deregistration failed never
 * detaches, so the memory is leaked on purpose: the device may still reach it (the order is always QP drained, MR
 * deregistered, memory freed).
 */
public final class MemoryMedium {
    /** What holds the memory besides the backend: told when the backend closes, detaches when it is done. */
    public interface User {
        /** The backend closed (any thread): take no new I/O on the medium, and detach once none is in flight. */
        void mediumRetired();
    }

    private static final User[] NONE = new User[0];

    private final Arena arena;
    private final MemorySegment memory;
    /** The users attached now: read on the I/O path (a transport finds its registration here), written rarely. */
    private volatile User[] users = NONE;
    private int holds = 1;
    private boolean retired;

    MemoryMedium(Arena arena, MemorySegment memory) {
        this.arena = arena;
        this.memory = memory;
    }

    /** The whole medium: offset 0 is byte 0 of the namespace. Valid while a hold is kept. */
    public MemorySegment segment() { return memory; }

    /** The users attached now (I/O path: one volatile read, no copy; do not modify the array). */
    public User[] users() { return users; }

    /** Whether the backend closed: no new user may attach. */
    public synchronized boolean retired() { return retired; }

    /** Attaches {@code user}, which holds the memory until it {@link #detach}es; false once retired. Control path. */
    public synchronized boolean attach(User user) {
        if (retired) return false;
        holds++;
        User[] u = Arrays.copyOf(users, users.length + 1);
        u[u.length - 1] = user;
        users = u;
        return true;
    }

    /**
     * {@code user} is done with the memory (nothing of it is on any device any more): its hold goes, and with the
     * last hold the memory. Any thread, once per successful {@link #attach}.
     */
    public void detach(User user) {
        synchronized (this) {
            User[] u = users;
            for (int i = 0; i < u.length; i++) {
                if (u[i] == user) {
                    User[] n = new User[u.length - 1];
                    System.arraycopy(u, 0, n, 0, i);
                    System.arraycopy(u, i + 1, n, i, u.length - i - 1);
                    users = n;
                    break;
                }
            }
        }
        release();
    }

    /** The backend closed: every user is told, and the backend's own hold goes. Idempotent. */
    void retire() {
        User[] told;
        synchronized (this) {
            if (retired) return;
            retired = true;
            told = users;
        }
        for (User u : told) u.mediumRetired();
        release();
    }

    /** Holds now: the backend's (until it closes) and one per attached user. */
    public synchronized int holds() { return holds; }

    /** Whether the memory was freed (every hold gone). */
    public synchronized boolean freed() { return holds == 0; }

    private void release() {
        boolean free;
        synchronized (this) {
            free = --holds == 0;
        }
        if (free) arena.close();
    }
}
