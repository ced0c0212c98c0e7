package dev.nvmf.target.core.controller;

import dev.nvmf.target.nvme.Properties;

/**
 * A controller's properties and the CC/CSTS state machine (NVMe Base 2.0, 3.1.3 and 3.5 "Controller
 * Initialization", "Shutdown"; kernel: {@code nvmet_update_cc}, {@code nvmet_start_ctrl}, {@code nvmet_clear_ctrl}).
 *
 * <p>Written on the admin queue's poller (Property Set) and by the control plane (fatal status), read anywhere.
 */
public final class ControllerProperties {
    /** Outcomes of a CC write the controller must act on. */
    public static final int CC_NO_CHANGE = 0;
    public static final int CC_ENABLED = 1;
    public static final int CC_ENABLE_FAILED = 2;
    public static final int CC_RESET = 3;
    public static final int CC_SHUTDOWN = 4;

    private static final int IOSQES_NVM = 6;
    private static final int IOCQES_NVM = 4;

    private final long cap;
    private final int vs;
    private final boolean discovery;
    private int cc;
    private int csts;
    /**
     * CC and CSTS as of the last change, {@code cc << 32 | csts}, published for lock-free reads: every I/O command asks
     * {@link #ready()}, from the pollers of all the controller's queues at once, and must not queue on the lock a
     * CC write holds. One field, so a reader sees both registers from the same moment.
     */
    private volatile long published;
    /** Counts shutdowns, so that a flush finishing after the host cleared SHN (or reset) reports nothing. */
    private long shutdowns;

    /**
     * @param maxQueueEntries largest queue a host may create (CAP.MQES + 1)
     * @param timeout         CAP.TO in 500 ms units
     * @param version         VS
     * @param discovery       a discovery controller (it has no I/O queues, so CC.IOSQES/IOCQES are not checked)
     */
    public ControllerProperties(int maxQueueEntries, int timeout, int version, boolean discovery) {
        this.discovery = discovery;
        this.cap = ((maxQueueEntries - 1) & Properties.CAP_MQES_MASK)
                | Properties.CAP_CQR // fabrics queues are always physically contiguous
                | ((long) (timeout & 0xFF) << Properties.CAP_TO_SHIFT)
                | Properties.CAP_CSS_NVM; // MPSMIN = MPSMAX = 0: 4 KiB pages
        this.vs = version;
    }

    public long cap() { return cap; }
    public int vs() { return vs; }
    public int cc() { return (int) (published >>> 32); }
    public int csts() { return (int) published; }

    /** CC.EN = 1 and CSTS.RDY = 1: the controller takes commands other than Fabrics. Lock-free (any thread). */
    public boolean ready() {
        long p = published;
        return ((int) (p >>> 32) & Properties.CC_EN) != 0 && ((int) p & Properties.CSTS_RDY) != 0;
    }

    public boolean fatal() {
        return (csts() & Properties.CSTS_CFS) != 0;
    }

    /** Controller Fatal Status (keep-alive expiry, transport error): the host must reset or reconnect. */
    public synchronized void markFatal() {
        csts |= Properties.CSTS_CFS;
        publish();
    }

    /** Under the lock, after a change. */
    private void publish() {
        published = ((long) cc << 32) | (csts & 0xFFFF_FFFFL);
    }

    /**
     * Applies a Property Set of CC and returns what changed: enabling checks the I/O queue entry sizes (64/16 bytes;
     * not for a discovery controller, which has no I/O queues: kernel core.c, nvmet_start_ctrl, checks them only for
     * I/O controllers and non-Linux hosts enable discovery controllers with IOSQES = IOCQES = 0), the page size
     * (4 KiB), arbitration (round robin) and the command set (NVM); a bad combination sets CSTS.CFS instead of RDY,
     * as the kernel target does. Clearing EN resets. Setting SHN starts a shutdown: CSTS.SHST = 01b (processing)
     * until the controller has flushed its namespaces and calls {@link #shutdownComplete} (NVMe Base 2.0, 3.6.2).
     */
    public synchronized int writeCc(int value) {
        int old = cc;
        cc = value;
        int action = CC_NO_CHANGE;
        boolean enNew = (value & Properties.CC_EN) != 0;
        boolean enOld = (old & Properties.CC_EN) != 0;
        if (enNew && !enOld) {
            int iosqes = (value >>> Properties.CC_IOSQES_SHIFT) & Properties.CC_QES_MASK;
            int iocqes = (value >>> Properties.CC_IOCQES_SHIFT) & Properties.CC_QES_MASK;
            int mps = (value >>> Properties.CC_MPS_SHIFT) & Properties.CC_MPS_MASK;
            int ams = (value >>> Properties.CC_AMS_SHIFT) & Properties.CC_AMS_MASK;
            int css = (value >>> Properties.CC_CSS_SHIFT) & Properties.CC_CSS_MASK;
            boolean entrySizesWrong = !discovery && (iosqes != IOSQES_NVM || iocqes != IOCQES_NVM);
            if (entrySizesWrong || mps != 0 || ams != 0 || css != 0) {
                csts = Properties.CSTS_CFS;
                action = CC_ENABLE_FAILED;
            } else {
                csts = Properties.CSTS_RDY;
                action = CC_ENABLED;
            }
        }
        if (!enNew && enOld) {
            // Controller reset: RDY and CFS clear (the reset is how a host recovers from CFS).
            csts = 0;
            action = CC_RESET;
        }
        int shnNew = (value >>> Properties.CC_SHN_SHIFT) & Properties.CC_SHN_MASK;
        int shnOld = (old >>> Properties.CC_SHN_SHIFT) & Properties.CC_SHN_MASK;
        if (shnNew != 0 && shnOld == 0) {
            csts = (csts & ~(Properties.CSTS_RDY | Properties.CSTS_SHST_MASK)) | Properties.CSTS_SHST_PROCESSING;
            cc = value & ~Properties.CC_EN;
            shutdowns++;
            action = CC_SHUTDOWN;
        }
        if (shnNew == 0 && shnOld != 0) {
            csts &= ~Properties.CSTS_SHST_MASK;
            shutdowns++;
        }
        publish();
        return action;
    }

    /** The shutdown {@link #writeCc} started last; pass it to {@link #shutdownComplete}. */
    public synchronized long shutdown() {
        return shutdowns;
    }

    /**
     * The namespaces are flushed: CSTS.SHST = 10b (complete), unless the host has since cleared SHN or started
     * another shutdown.
     */
    public synchronized void shutdownComplete(long shutdown) {
        if (shutdown == shutdowns && (csts & Properties.CSTS_SHST_MASK) == Properties.CSTS_SHST_PROCESSING) {
            csts = (csts & ~Properties.CSTS_SHST_MASK) | Properties.CSTS_SHST_COMPLETE;
            publish();
        }
    }
}
