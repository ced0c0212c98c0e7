package dev.nvmf.target.rdma.support;

import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.soft.SoftFabric;

/** Device attributes for tests that need small limits. */
public final class Attrs {
    private Attrs() {}

    public static DeviceAttributes with(int maxQpWr, int maxQpInitRdAtom) {
        DeviceAttributes d = SoftFabric.defaultAttributes();
        return new DeviceAttributes(d.maxQp(), maxQpWr, d.maxSge(), d.maxCq(), d.maxCqe(), d.maxMr(), d.maxMrSize(),
                d.maxQpRdAtom(), maxQpInitRdAtom, d.deviceCapFlags(), d.physPortCnt());
    }
}
