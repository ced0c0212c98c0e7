package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceAttributes;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.VerbsException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ResourcesTest {

    @Test
    void liveObjectsAreTrackedAndReleasedByTeardown() {
        Pair p = Pair.connected();
        SoftResources live = p.fabric.resources();
        assertEquals(2, live.qps());
        assertEquals(2, live.mrs());
        assertEquals(2, live.cqs());
        assertEquals(3, live.cmIds(), "listener + both ends");
        assertFalse(live.nothingLeaked());
        assertTrue(live.live().stream().anyMatch(s -> s.startsWith("qp ")), live.toString());
        p.client.id.disconnect();
        p.fabric.deliverAll();
        p.server.id.disconnect();
        p.client.poll();
        p.server.poll();
        p.close();
        SoftResources after = p.fabric.resources();
        assertTrue(after.nothingLeaked(), after.toString());
        assertEquals(0, after.undrainedQpDestroys());
    }

    @Test
    void destroyingBeforeTheDrainIsCountedAndBusyObjectsRefuseToClose() {
        Pair p = Pair.connected();
        assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, () -> p.server.cq.close()).errno(),
                "a CQ with a QP on it is busy");
        assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, () -> p.server.pd.close()).errno());
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        p.close();   // completions never polled, receives still posted
        assertEquals(2, p.fabric.resources().undrainedQpDestroys());
    }

    @Test
    void deviceAttributesAreRealisticAndConfigurable() {
        SoftFabric f = SoftFabric.manual();
        f.addDevice("soft0", "10.0.0.1");
        f.addDevice("soft1", "10.0.0.2", SoftFabric.attributesWithoutMemoryManagementExtensions());
        List<DeviceInfo> infos = f.listDevices();
        assertEquals(List.of("soft0", "soft1"), infos.stream().map(DeviceInfo::name).toList());
        DeviceAttributes a = infos.get(0).attributes();
        assertEquals(16384, a.maxQpWr());
        assertEquals(32, a.maxSge());
        assertEquals(128, a.maxQpRdAtom());
        assertEquals(128, a.maxQpInitRdAtom());
        assertTrue(a.memoryManagementExtensions());
        assertFalse(infos.get(1).attributes().memoryManagementExtensions());
        assertEquals("ACTIVE", infos.get(0).ports().getFirst().stateName());
        assertEquals("Ethernet", infos.get(0).ports().getFirst().linkLayerName());
        // openDevice gives a separate context that must be closed; the CM's context ignores close().
        Device ctx = f.openDevice("soft0");
        assertNotSame(f.device("soft0"), ctx);
        var pd = ctx.allocProtectionDomain();
        assertEquals(Errno.EBUSY, assertThrows(VerbsException.class, ctx::close).errno());
        pd.close();
        ctx.close();
        f.device("soft0").close();
        assertTrue(f.resources().nothingLeaked());
        assertThrows(VerbsException.class, () -> f.openDevice("nope"));
    }
}
