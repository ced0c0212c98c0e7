package dev.nvmf.verbs.soft;

import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WcStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A device that dies: nothing completes, not even a flush; a drain can only end by a bound. */
class DeadDeviceTest {
    private static final long MINUTE = 60_000_000_000L;

    @Test
    void aSilentlyDeadDeviceCompletesNothingRaisesNothingAndAcceptsPostsThatNeverComplete() {
        Pair p = Pair.connected();
        assertEquals(0, p.server.cq.requestNotify(false));
        p.fabric.faults().killDevice("soft0");
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8), "the host still sends");
        assertEquals(0, p.server.send(2, SendFlags.SIGNALED, 0, 8), "a post on the dead device is accepted");
        p.server.qp.moveToError();
        assertEquals(QpState.ERR, p.server.qp.state());
        assertEquals(0, p.server.send(3, SendFlags.SIGNALED, 0, 8), "and in error too");
        p.fabric.advanceTime(MINUTE);
        assertTrue(p.server.poll().isEmpty(), "no completion, no flush of the 4 receives or the 2 sends");
        assertEquals(2, p.server.softQp().outstandingSends(), "their slots never come back");
        assertEquals(0, p.server.channel.nextEvent(0), "no completion event");
        assertNull(p.server.device.pollAsyncEvent(0), "no asynchronous event");
        assertEquals(List.of(), Pair.drain(p.serverEvents), "no CM event");
        List<Pair.Wc> host = p.client.poll();
        assertEquals(WcStatus.RETRY_EXC_ERR, host.getFirst().status(), "the host's send found nobody: " + host);
        VerbsException e = assertThrows(VerbsException.class, () -> p.server.device.allocProtectionDomain());
        assertEquals(Errno.EIO, e.errno());
        // Teardown by destroying: the QP first, then everything under it.
        int undrained = p.fabric.resources().undrainedQpDestroys();
        p.close();
        assertEquals(undrained + 1, p.fabric.resources().undrainedQpDestroys(), "the server QP was destroyed undrained");
        assertTrue(p.fabric.resources().nothingLeaked(), p.fabric.resources().toString());
    }

    @Test
    void completionsPolledBeforeDeathStayPollableNoneAreAdded() {
        Pair p = Pair.connected();
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        p.fabric.faults().killDevice("soft0");
        assertEquals(0, p.client.send(2, SendFlags.SIGNALED, 0, 8));
        p.fabric.advanceTime(MINUTE);
        assertEquals(List.of(200L), p.server.poll().stream().map(Pair.Wc::wrId).toList());
        p.close();
    }

    @Test
    void anAnnouncedDeathRaisesOneDeviceFatalThenNothing() {
        Pair p = Pair.connected();
        p.fabric.faults().killDevice("soft0", SoftFaults.DeviceDeath.FATAL_EVENT);
        AsyncEvent fatal = p.server.device.pollAsyncEvent(0);
        assertEquals(AsyncEvent.Type.DEVICE_FATAL, fatal.type());
        assertEquals(AsyncEvent.Affiliation.DEVICE, fatal.type().affiliation());
        p.server.qp.moveToError();
        p.fabric.advanceTime(MINUTE);
        assertNull(p.server.device.pollAsyncEvent(0), "exactly one event");
        assertTrue(p.server.poll().isEmpty(), "still no flush");
        assertEquals(List.of(), Pair.drain(p.serverEvents));
        p.close();
    }

    @Test
    void aDeathAnnouncedByTheCmReachesEveryIdOnTheDeviceOnce() {
        Pair p = Pair.connected();
        p.fabric.faults().killDevice("soft0", SoftFaults.DeviceDeath.REMOVAL_EVENT);
        assertEquals(List.of(CmEventType.DEVICE_REMOVAL, CmEventType.DEVICE_REMOVAL), Pair.drain(p.serverEvents),
                "the listener and the connection's id");
        p.server.qp.moveToError();
        p.server.id.disconnect();
        p.fabric.advanceTime(MINUTE);
        assertEquals(List.of(), Pair.drain(p.serverEvents), "no DISCONNECTED, no TIMEWAIT_EXIT");
        assertTrue(p.server.poll().isEmpty());
        assertNull(p.server.device.pollAsyncEvent(0));
        p.close();
    }

    @Test
    void aDeadDeviceThatIsThenRemovedStillReportsTheRemovalAndComesBack() {
        Pair p = Pair.connected();
        p.fabric.faults().killDevice("soft0");
        p.fabric.removeDevice("soft0");
        assertEquals(List.of(CmEventType.DEVICE_REMOVAL, CmEventType.DEVICE_REMOVAL), Pair.drain(p.serverEvents));
        assertTrue(p.server.poll().isEmpty(), "removing a dead device flushes nothing either");
        p.close();
        SoftDevice back = p.fabric.returnDevice("soft0");
        assertTrue(back.attributes() != null && p.fabric.listDevices().stream().anyMatch(d -> d.name().equals("soft0")));
        back.allocProtectionDomain().close();
        assertTrue(p.fabric.resources().nothingLeaked(), p.fabric.resources().toString());
    }

    @Test
    void aPollerBlockedOnADeadDevicesChannelWaitsUntilItsBound() {
        Pair p = Pair.connected();
        CompletionChannel ch = p.server.channel;
        assertEquals(0, p.server.cq.requestNotify(false));
        p.fabric.faults().killDevice("soft0");
        assertEquals(0, p.client.send(1, SendFlags.SIGNALED, 0, 8));
        p.fabric.deliverAll();
        assertEquals(0, ch.nextEvent(0), "the message that would have woken it never lands");
        p.close();
    }
}
