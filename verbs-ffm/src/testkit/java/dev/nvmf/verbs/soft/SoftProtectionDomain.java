package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.MemoryWindow;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.SharedReceiveQueue;
import dev.nvmf.verbs.VerbsException;

import java.lang.foreign.MemorySegment;

/** A protection domain: keys and QPs of one PD cannot reach memory registered in another. */
public final class SoftProtectionDomain implements ProtectionDomain {
    final SoftDevice context;
    final SoftFabric fabric;
    int users;
    boolean closed;

    SoftProtectionDomain(SoftDevice context) {
        this.context = context;
        this.fabric = context.fabric;
    }

    @Override
    public Device device() { return context; }

    @Override
    public MemoryRegion register(MemorySegment segment, int access) {
        fabric.lock.lock();
        try {
            if (closed) throw new VerbsException("ibv_reg_mr", Errno.EINVAL, "protection domain closed");
            context.checkUsable("ibv_reg_mr");
            if (!segment.isNative()) throw new VerbsException("ibv_reg_mr", Errno.EFAULT, "Bad address: heap segment");
            if (segment.byteSize() == 0) throw new VerbsException("ibv_reg_mr", Errno.EINVAL, "Invalid argument: length 0");
            // Remote write or atomic access needs local write (ibv_reg_mr returns EINVAL otherwise).
            if ((access & (Access.REMOTE_WRITE | Access.REMOTE_ATOMIC)) != 0 && (access & Access.LOCAL_WRITE) == 0) {
                throw new VerbsException("ibv_reg_mr", Errno.EINVAL, "Invalid argument: remote write without local write");
            }
            int[] keys = context.node.allocateKeys();
            SoftMemoryRegion mr = new SoftMemoryRegion(this, segment, access, keys[0], keys[1]);
            context.node.addRegion(mr);
            users++;
            fabric.resources.add(SoftResources.Kind.MR, mr, context.node.name + " len " + segment.byteSize()
                    + " lkey 0x" + Integer.toHexString(mr.lkey()) + " rkey 0x" + Integer.toHexString(mr.rkey()));
            return mr;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** A type-2 window with a fresh key of its own; it reaches nothing until a BIND_MW binds it. */
    @Override
    public MemoryWindow allocateMemoryWindow() {
        fabric.lock.lock();
        try {
            if (closed) throw new VerbsException("ibv_alloc_mw", Errno.EINVAL, "protection domain closed");
            context.checkUsable("ibv_alloc_mw");
            if (!context.node.attributes.memoryWindowsType2()) {
                throw new VerbsException("ibv_alloc_mw", Errno.EOPNOTSUPP, Errno.message(Errno.EOPNOTSUPP));
            }
            SoftMemoryWindow mw = new SoftMemoryWindow(this, context.node.allocateWindowKey());
            context.node.addWindow(mw);
            users++;
            fabric.resources.add(SoftResources.Kind.MW, mw, context.node.name + " rkey 0x" + Integer.toHexString(mw.rkey()));
            return mw;
        } finally {
            fabric.lock.unlock();
        }
    }

    /** ibv_create_srq within the device's max_srq, max_srq_wr and max_srq_sge (EINVAL beyond, ENOSYS when max_srq is 0). */
    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge) {
        fabric.lock.lock();
        try {
            if (closed) throw new VerbsException("ibv_create_srq", Errno.EINVAL, "protection domain closed");
            context.checkUsable("ibv_create_srq");
            var a = context.node.attributes;
            if (a.maxSrq() <= 0) throw new VerbsException("ibv_create_srq", Errno.ENOSYS, "Function not implemented");
            if (maxWr < 1 || maxWr > a.maxSrqWr() || maxSge < 1 || maxSge > a.maxSrqSge()) {
                throw new VerbsException("ibv_create_srq", Errno.EINVAL, "Invalid argument: max_wr " + maxWr
                        + ", max_sge " + maxSge + " (device: " + a.maxSrqWr() + ", " + a.maxSrqSge() + ")");
            }
            SoftSharedReceiveQueue srq = new SoftSharedReceiveQueue(this, maxWr, maxSge);
            users++;
            fabric.resources.add(SoftResources.Kind.SRQ, srq, context.node.name + " max_wr " + maxWr);
            return srq;
        } finally {
            fabric.lock.unlock();
        }
    }

    @Override
    public void close() {
        fabric.lock.lock();
        try {
            if (closed) return;
            context.checkOpen("ibv_dealloc_pd");
            if (users > 0) throw new VerbsException("ibv_dealloc_pd", Errno.EBUSY, "Device or resource busy");
            closed = true;
            context.children--;
            fabric.resources.remove(SoftResources.Kind.PD, this);
        } finally {
            fabric.lock.unlock();
        }
    }
}
