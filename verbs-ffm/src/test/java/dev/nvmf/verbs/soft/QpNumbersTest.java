package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** QP numbers are unique per device only, as on hardware. */
class QpNumbersTest {

    private static SoftFabric twoDevices() {
        SoftFabric f = SoftFabric.manual();
        f.addDevice("soft0", "10.0.0.1");
        f.addDevice("soft1", "10.0.0.2");
        return f;
    }

    @Test
    void twoDevicesCanHandOutTheSameQpNumberAndTheirEventsCarryOnlyThatNumber() {
        SoftFabric f = twoDevices();
        f.nextQpNumber("soft0", 0x77).nextQpNumber("soft1", 0x77);
        Pair p = Pair.connected(f, new Pair.Setup());
        assertEquals(0x77, p.server.qp.qpNum());
        assertEquals(0x77, p.client.qp.qpNum(), "the other device hands out the same number");
        f.faults().fatalError(p.server.qp).fatalError(p.client.qp);
        AsyncEvent onServer = p.server.device.pollAsyncEvent(0);
        AsyncEvent onClient = p.client.device.pollAsyncEvent(0);
        assertEquals(AsyncEvent.Type.QP_FATAL, onServer.type());
        assertEquals(onServer, onClient, "by QP number alone the two events are the same: only the device tells them apart");
        assertNotSame(p.server.device, p.client.device);
        p.close();
    }

    @Test
    void byDefaultDevicesCountFromDistinctBases() {
        SoftFabric f = twoDevices();
        Pair p = Pair.connected(f, new Pair.Setup());
        assertNotEquals(p.server.qp.qpNum(), p.client.qp.qpNum());
        p.close();
    }

    @Test
    void numbersOnOneDeviceStayUniqueAndFitIn24Bits() {
        SoftFabric f = twoDevices();
        Pair first = Pair.connected(f, new Pair.Setup());
        int taken = first.server.qp.qpNum();
        // Ask soft0 for a number its live QP holds: the next QP gets the one after it.
        f.nextQpNumber("soft0", taken);
        var ctx = f.device("soft0");
        var pd = ctx.allocProtectionDomain();
        var cq = ctx.createCompletionQueue(8, null);
        Set<Integer> seen = new HashSet<>();
        seen.add(taken);
        var events = f.createEventChannel();
        for (int i = 0; i < 3; i++) {
            var id = events.createId(null);
            id.bind(new java.net.InetSocketAddress("10.0.0.1", 0));
            var qp = id.createQueuePair(new dev.nvmf.verbs.QpInitAttributes(pd, cq, cq,
                    new dev.nvmf.verbs.QpCapabilities(4, 4, 1, 1, 0), false));
            assertTrue(seen.add(qp.qpNum()), "unique on the device: " + qp.qpNum());
            id.close();
        }
        assertThrows(IllegalArgumentException.class, () -> f.nextQpNumber("soft0", 1 << 24));
        cq.close();
        pd.close();
        events.close();
        first.close();
        assertTrue(f.resources().nothingLeaked(), f.resources().toString());
    }
}
