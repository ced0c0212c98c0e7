package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.DeviceAttributes;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

/** One physical device of the fabric: its address, attributes, key space, and everything created on it. */
final class DeviceNode {
    final SoftFabric fabric;
    final String name;
    final InetAddress ip;
    final DeviceAttributes attributes;
    final long guid;
    final SoftDevice cmContext;
    final List<SoftDevice> contexts = new ArrayList<>();
    /** Regions by key index (key >>> 8): lkeys at even, rkeys at odd indexes. No boxing on the data path. */
    private SoftMemoryRegion[] keyTable = new SoftMemoryRegion[64];
    /** Memory windows by key index (rkey >>> 8, odd like region rkeys, from the same index space). */
    private SoftMemoryWindow[] windowTable = new SoftMemoryWindow[64];
    final List<SoftQueuePair> qps = new ArrayList<>();
    final List<SoftCmId> cmIds = new ArrayList<>();
    /** The next QP number this device hands out (24 bits; unique on the device, not across devices). */
    int nextQpNum;
    private int nextMrIndex = 1;
    private int keyByte = 0x5a;
    boolean removed;
    /** Died (a fault): executes nothing, completes nothing, raises no asynchronous events. */
    boolean dead;
    /** The CM reports nothing for ids on this device (a dead device, until it is removed). */
    boolean cmSilent;
    /** The link is down (a fault): packets to and from the device are lost. */
    boolean linkDown;

    DeviceNode(SoftFabric fabric, String name, InetAddress ip, DeviceAttributes attributes, long guid, int qpBase) {
        this.fabric = fabric;
        this.nextQpNum = qpBase;
        this.name = name;
        this.ip = ip;
        this.attributes = attributes;
        this.guid = guid;
        this.cmContext = new SoftDevice(this, true);
    }

    /** A QP number not in use on this device (IBA chapter 10: a QP number names a QP within its channel adapter only). */
    int allocateQpNum() {
        while (true) {
            int n = nextQpNum;
            nextQpNum = (n + 1) & 0xffffff;
            if (nextQpNum == 0) nextQpNum = 1;
            boolean used = false;
            for (SoftQueuePair q : qps) {
                if (q.qpNum() == n) { used = true; break; }
            }
            if (!used) return n;
        }
    }

    /**
     * Allocates an lkey and a distinct rkey (index in the upper 24 bits, a changing key byte in the low 8), so code
     * that sends an lkey where an rkey belongs, or reuses a stale key, fails as it would on hardware.
     */
    int[] allocateKeys() {
        int index = nextMrIndex++;
        keyByte = (keyByte + 0x11) & 0xff;
        int lkey = ((index * 2) << 8) | keyByte;
        int rkey = ((index * 2 + 1) << 8) | keyByte;
        return new int[] {lkey, rkey};
    }

    /** A window's first rkey: an index of its own (never a region's) and the changing key byte. */
    int allocateWindowKey() {
        int index = nextMrIndex++;
        keyByte = (keyByte + 0x11) & 0xff;
        return ((index * 2 + 1) << 8) | keyByte;
    }

    void addWindow(SoftMemoryWindow mw) {
        int i = mw.index;
        if (i >= windowTable.length) windowTable = java.util.Arrays.copyOf(windowTable, Math.max(i + 1, windowTable.length * 2));
        windowTable[i] = mw;
    }

    void removeWindow(SoftMemoryWindow mw) {
        if (mw.index < windowTable.length && windowTable[mw.index] == mw) windowTable[mw.index] = null;
    }

    /** The window a BIND_MW names (its handle is the key index), or null. */
    SoftMemoryWindow windowByHandle(long handle) {
        if (handle <= 0 || handle >= windowTable.length) return null;
        return windowTable[(int) handle];
    }

    /** The window whose current device key is {@code key}, or null. */
    SoftMemoryWindow windowByRkey(int key) {
        int i = key >>> 8;
        SoftMemoryWindow mw = i < windowTable.length ? windowTable[i] : null;
        return mw != null && mw.deviceRkey == key ? mw : null;
    }

    void addRegion(SoftMemoryRegion mr) {
        int hi = Math.max(mr.lkey() >>> 8, mr.rkey() >>> 8);
        if (hi >= keyTable.length) keyTable = java.util.Arrays.copyOf(keyTable, Math.max(hi + 1, keyTable.length * 2));
        keyTable[mr.lkey() >>> 8] = mr;
        keyTable[mr.rkey() >>> 8] = mr;
    }

    void removeRegion(SoftMemoryRegion mr) {
        if (keyTable[mr.lkey() >>> 8] == mr) keyTable[mr.lkey() >>> 8] = null;
        if (keyTable[mr.rkey() >>> 8] == mr) keyTable[mr.rkey() >>> 8] = null;
    }

    SoftMemoryRegion byLkey(int key) {
        int i = key >>> 8;
        SoftMemoryRegion mr = i < keyTable.length ? keyTable[i] : null;
        return mr != null && mr.lkey() == key ? mr : null;
    }

    SoftMemoryRegion byRkey(int key) {
        int i = key >>> 8;
        SoftMemoryRegion mr = i < keyTable.length ? keyTable[i] : null;
        return mr != null && mr.rkey() == key ? mr : null;
    }

    void postAsync(AsyncEvent event) {
        for (SoftDevice c : new ArrayList<>(contexts)) c.postAsync(event);
    }

    /** Nothing reaches the device or leaves it: removed, dead, or its link is down. */
    boolean offTheWire() {
        return removed || dead || linkDown;
    }

    /**
     * Hot-remove: every QP goes to error (flushing, unless the device is dead), every context gets
     * IBV_EVENT_DEVICE_FATAL and every CM id on the device DEVICE_REMOVAL; the kernel's CM reports the removal even
     * for a device that died silently before.
     */
    void remove() {
        removed = true;
        cmSilent = false;
        for (SoftQueuePair qp : new ArrayList<>(qps)) qp.enterError(false);
        postAsync(AsyncEvent.ofDevice(AsyncEvent.Type.DEVICE_FATAL));
        for (SoftCmId id : new ArrayList<>(cmIds)) id.deviceRemoved();
    }

    /**
     * A rescan of the device list (librdmacm's sync_devices_list) found this removed device gone: its CM context
     * closes now if no CM id uses it any more, else when the last one goes ({@link SoftDevice#closedByLibrary}).
     */
    void rescannedAfterRemoval() {
        if (cmContext.closedByLibrary) return;
        cmContext.closeWhenUnused = true;
        cmContextUnused();
    }

    /** A CM id on this device was destroyed: a removed device's marked context closes with the last one. */
    void cmContextUnused() {
        if (removed && cmContext.closeWhenUnused && cmIds.isEmpty()) cmContext.closedByLibrary = true;
    }

    /** The device dies: see {@link SoftFaults#killDevice}. */
    void kill(SoftFaults.DeviceDeath how) {
        if (how == SoftFaults.DeviceDeath.FATAL_EVENT) postAsync(AsyncEvent.ofDevice(AsyncEvent.Type.DEVICE_FATAL));
        if (how == SoftFaults.DeviceDeath.REMOVAL_EVENT) {
            for (SoftCmId id : new ArrayList<>(cmIds)) id.deviceRemoved();
        }
        dead = true;
        cmSilent = true;
    }

    /** Link down or up: PORT_ERR or PORT_ACTIVE on port 1 of every context. */
    void link(boolean up) {
        if (linkDown == !up) return;
        linkDown = !up;
        postAsync(AsyncEvent.ofPort(up ? AsyncEvent.Type.PORT_ACTIVE : AsyncEvent.Type.PORT_ERR, 1));
    }
}
