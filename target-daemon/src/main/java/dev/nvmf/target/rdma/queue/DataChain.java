package dev.nvmf.target.rdma.queue;

import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.WrOpcode;

import java.lang.foreign.MemorySegment;


/**
 * The RDMA READ and WRITE work requests of the requests a poller's pass chains on one queue, one per Keyed SGL Data
 * Block descriptor, each request's built over its one registered data buffer (or the RAM namespace's memory), split
 * over the descriptors in order (descriptor {@code i} covers the buffer from the lengths of descriptors 0..i-1 added
 * up). One per queue, handed out in order from the start of each chain and reused once it is posted
 * ({@link #reset}): a provider reads the work requests during the post call and keeps nothing of them (verbs.h,
 * {@code ibv_post_send}), so their memory is free again when the call returns. A chain never holds more work
 * requests than the send budget has slots, each being reserved before it is chained, so {@code capacity} = the
 * budget's is always enough. Poller thread only; allocation-free once built.
 */
final class DataChain {
    private final SendWorkRequest[] wrs;
    private final ScatterGatherEntry[] sges;
    /** Work requests handed out to the chain being built. */
    private int used;

    private static final long EACH = SendWorkRequest.SIZE + ScatterGatherEntry.SIZE;

    /** Bytes of native memory (8-byte aligned) a chain of up to {@code capacity} data work requests is built in. */
    static long memory(int capacity) { return EACH * capacity; }

    /**
     * @param memory {@link #memory} bytes of plain native memory (not registered), owned by the queue like its
     *               contexts' prebuilt work requests: freed when the queue is released, never left to the collector
     */
    DataChain(MemorySegment memory, int capacity) {
        wrs = new SendWorkRequest[capacity];
        sges = new ScatterGatherEntry[capacity];
        long each = EACH;
        for (int i = 0; i < wrs.length; i++) {
            wrs[i] = new SendWorkRequest(memory.asSlice(i * each, SendWorkRequest.SIZE));
            sges[i] = new ScatterGatherEntry(memory.asSlice(i * each + SendWorkRequest.SIZE, ScatterGatherEntry.SIZE));
            wrs[i].sgList(sges[i], 1);
        }
    }

    /** The chain was posted (or dropped): its work requests are free for the next one. */
    void reset() { used = 0; }

    /** The last work request handed out (the tail of the request just built). */
    SendWorkRequest last() { return wrs[used - 1]; }

    private int take(int count) {
        if (count > wrs.length - used) {
            throw new IllegalStateException("data chain overrun: " + count + " more than " + (wrs.length - used));
        }
        int first = used;
        used += count;
        return first;
    }

    /**
     * The READs of descriptors {@code r.descriptorsRead} .. + {@code count} - 1 of {@code r} into the registered
     * memory at native address {@code buffer} (a pool buffer, or a RAM namespace at the command's offset):
     * unsignaled but for the last, whose completion (RC: in order, IBA chapter 10) says the whole part is in.
     *
     * @return the first work request, to post
     */
    SendWorkRequest reads(RdmaRequest r, int slot, long buffer, int lkey, int count) {
        int at = take(count);
        int first = r.descriptorsRead;
        long offset = 0;
        for (int i = 0; i < first; i++) offset += r.descriptor(i).keyedLength();
        for (int k = 0; k < count; k++) {
            SglDescriptor d = r.descriptor(first + k);
            int length = d.keyedLength();
            boolean last = k == count - 1;
            sges[at + k].set(buffer + offset, length, lkey);
            wrs[at + k].wrId(WrId.of(slot, last ? WrId.READ : WrId.READ_UNSIGNALED, r.index))
                    .opcode(WrOpcode.RDMA_READ).sendFlags(last ? SendFlags.SIGNALED : 0)
                    .remote(d.address(), d.key()).next(last ? null : wrs[at + k + 1]);
            offset += length;
        }
        return wrs[at];
    }

    /** RDMA WRITEs needed to carry {@code length} bytes of data back over {@code r}'s descriptors, in order. */
    static int writesFor(RdmaRequest r, int length) {
        int n = 0;
        long offset = 0;
        for (int i = 0; i < r.descriptorCount && offset < length; i++) {
            offset += r.descriptor(i).keyedLength();
            n++;
        }
        return n;
    }

    /**
     * The unsignaled WRITEs of the first {@code length} bytes at native address {@code buffer} over {@code r}'s descriptors in
     * order ({@link #writesFor} of them), chained to {@code send}, whose signaled completion implies theirs.
     *
     * @return the first work request, to post
     */
    SendWorkRequest writes(RdmaRequest r, int slot, long buffer, int lkey, int length, SendWorkRequest send) {
        int count = writesFor(r, length);
        int at = take(count);
        long offset = 0;
        for (int k = 0; k < count; k++) {
            SglDescriptor d = r.descriptor(k);
            int piece = (int) Math.min(d.keyedLength(), length - offset);
            sges[at + k].set(buffer + offset, piece, lkey);
            wrs[at + k].wrId(WrId.of(slot, WrId.WRITE, r.index)).opcode(WrOpcode.RDMA_WRITE).sendFlags(0)
                    .remote(d.address(), d.key()).next(k == count - 1 ? send : wrs[at + k + 1]);
            offset += piece;
        }
        return wrs[at];
    }
}
