package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.ffm.EventFd;

/**
 * A real eventfd (through FFM) that a soft channel keeps readable exactly while it has events to hand out, so its
 * consumer can wait on it with epoll together with the ffm provider's fds (see {@code EventSource}). Created on
 * first use: a channel nobody waits on with epoll costs no file descriptor. Guarded by the fabric lock.
 */
final class Readiness {
    private final SoftFabric fabric;
    private final String what;
    private EventFd fd;
    private boolean signalled;

    Readiness(SoftFabric fabric, String what) {
        this.fabric = fabric;
        this.what = what;
    }

    /** {@code EventSource.readinessFd()} of the channel: takes the fabric lock and runs due work first. */
    int readinessFd(java.util.function.BooleanSupplier pending) {
        fabric.lock.lock();
        try {
            fabric.pumpIfAutomatic();
            return fd(pending.getAsBoolean());
        } finally {
            fabric.lock.unlock();
        }
    }

    /** The fd, created now if needed, readable iff {@code pending}. */
    int fd(boolean pending) {
        if (fd == null) {
            fd = new EventFd(what);
            fabric.readinessFds.add(this);
        }
        update(pending);
        return fd.fd();
    }

    /** Follows the channel's state: call after every change to what it holds. */
    void update(boolean pending) {
        if (fd == null || pending == signalled) return;
        if (pending) fd.signal();
        else fd.clear();
        signalled = pending;
    }

    void close() {
        if (fd == null) return;
        fd.close();
        fd = null;
        signalled = false;
        fabric.readinessFds.remove(this);
    }
}
