package dev.nvmf.target.backend.rbd;

import dev.nvmf.target.backend.BackendCallback;

/**
 * One pooled operation slot of an {@link RbdBackend}: what was asked and where it stands. The slot's index is the
 * {@code cb_arg} given to librbd with each completion, so the completion upcall finds the slot without a lookup
 * table or an allocation.
 *
 * <p>The submitting thread fills the fields, then writes {@link #phase} (volatile) just before the librbd call; the
 * completion upcall reads {@link #phase} first. That release/acquire pair is what publishes the plain fields to
 * librbd's callback thread.
 */
final class RbdOperation {
    static final int READ = 1;
    static final int WRITE = 2;
    /** A Force Unit Access write: the write, then a flush, before the callback. */
    static final int WRITE_FUA = 3;
    static final int FLUSH = 4;
    static final int WRITE_ZEROES = 5;
    static final int DISCARD = 6;

    /** The librbd call in flight: the operation itself, or the flush that follows a FUA write. */
    static final int PHASE_IDLE = 0;
    static final int PHASE_MAIN = 1;
    static final int PHASE_FUA_FLUSH = 2;

    final int index;

    int opcode;
    long offset;
    /** The buffer's native address (reads, writes). */
    long address;
    long length;
    Object attachment;
    BackendCallback callback;
    volatile int phase;

    RbdOperation(int index) {
        this.index = index;
    }

    void set(int opcode, long offset, long address, long length, Object attachment, BackendCallback callback) {
        this.opcode = opcode;
        this.offset = offset;
        this.address = address;
        this.length = length;
        this.attachment = attachment;
        this.callback = callback;
    }

    void clear() {
        attachment = null;
        callback = null;
        address = 0;
        phase = PHASE_IDLE;
    }
}
