package dev.nvmf.target.backend;

import java.lang.foreign.MemorySegment;

/**
 * One preallocated operation descriptor of an {@link AsyncFdBackend}: what a worker needs to do one operation and
 * report it. Descriptors are created once, with the backend, and go round free pool, submission queue, worker and
 * back; a descriptor is never touched by two threads at once (the queues' hand-offs order the accesses).
 */
final class IoOperation {
    static final int READ = 1;
    static final int WRITE = 2;
    static final int FLUSH = 3;
    static final int WRITE_ZEROES = 4;
    static final int DEALLOCATE = 5;
    /** Write Zeroes the host allowed to deallocate (DEAC). */
    static final int WRITE_ZEROES_MAY_DEALLOCATE = 6;

    int opcode;
    long offset;
    /** Native address of the caller's buffer (READ, WRITE); 0 otherwise. */
    long address;
    long length;
    boolean forceUnitAccess;
    /** Held only so that the caller's buffer stays reachable until the callback; never dereferenced. */
    MemorySegment segment;
    Object attachment;
    BackendCallback callback;

    void set(int opcode, long offset, MemorySegment segment, long length, boolean forceUnitAccess, Object attachment,
             BackendCallback callback) {
        this.opcode = opcode;
        this.offset = offset;
        this.segment = segment;
        this.address = segment == null ? 0 : segment.address();
        this.length = length;
        this.forceUnitAccess = forceUnitAccess;
        this.attachment = attachment;
        this.callback = callback;
    }

    /** Drops every reference so that a pooled descriptor keeps no request or buffer alive. */
    void clear() {
        opcode = 0;
        segment = null;
        attachment = null;
        callback = null;
        address = 0;
    }
}
