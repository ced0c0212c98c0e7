package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.poller.Poller;
import dev.nvmf.target.rdma.poller.PollerDevice;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFaults.DeviceDeath;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Drains that cannot end (issue "Faults and teardown", defects 1 and 2): a device that completes nothing, not even
 * flushes, must not keep a queue forever. The drain is bounded; a dead device is noticed (fatal event, removal, a
 * failed CQ or completion channel); either way the QP is destroyed first, then the memory goes back, then the
 * controller is closed; a device that returns is used again.
 */
class DeadDeviceTest {

    /** The number of target QPs alive each time the core's controller queue was closed. */
    private static List<Long> qpsWhenClosed(SoftTarget t) {
        List<Long> out = new ArrayList<>();
        t.core.onClose = () -> out.add(t.targetQps());
        return out;
    }

    /**
     * The device dies silently (no event, no completion, no flush): the target learns nothing until the core asks the
     * queue to go (keep-alive). That drain never ends by itself; within the drain timeout it waits, after it the QP
     * is destroyed (counted), and only then is the queue released and its controller closed.
     */
    @Test
    void aDrainThatNeverEndsIsBoundedByDestroyingItsQpFirst() {
        try (SoftTarget t = new SoftTarget(c -> c.withDrainTimeoutMillis(30_000),
                dev.nvmf.verbs.soft.SoftFabric.defaultAttributes())) {
            t.connect(1, 8);
            List<Long> qps = qpsWhenClosed(t);
            t.fabric.faults().killDevice("t0", DeviceDeath.SILENT);
            t.core.queue(0).transport.requestDisconnect("keep-alive timeout");
            t.pump();
            t.fabric.advanceTime(Duration.ofSeconds(29));
            t.pump();
            assertEquals(1, t.transport.openQueues(), "still draining within the bound");
            assertEquals(0, t.transport.metrics().drainTimeouts.sum());
            assertEquals(1, t.targetQps());
            t.fabric.advanceTime(Duration.ofSeconds(2));
            t.pump();
            assertEquals(0, t.transport.openQueues(), "the drain ended at its bound");
            assertEquals(1, t.transport.metrics().drainTimeouts.sum());
            assertEquals(List.of(0L), qps, "the QP was destroyed before the controller was closed");
            assertTrue(t.core.queue(0).closed);
            t.assertEverythingReturned(1); // its completions never came: the device is dead
            t.expectedUndrainedQpDestroys = 1;
        }
    }

    /**
     * The device is hot-removed under a connected host with a command in the core: DEVICE_FATAL and DEVICE_REMOVAL
     * mark it dead, so its queues drain at once without waiting for the bound: the QP is destroyed right away, the
     * queue waits only for the core (which may still write the request's memory), and once it is released every
     * resource of the device goes (CQs, MRs, PD). The listener lost with the device listens again when the device
     * returns, and a host connects and is served.
     */
    @Test
    void aRemovedDeviceIsTornDownAtOnceAndItsPortListensAgainWhenItReturns() {
        try (SoftTarget t = new SoftTarget()) {
            List<Long> qps = qpsWhenClosed(t);
            t.connectWithACommandInTheCore();
            t.fabric.removeDevice("t0");
            t.pump();
            assertEquals(1, t.transport.metrics().deviceFailures.sum());
            assertEquals(0, t.targetQps(), "the QP is destroyed at once");
            assertEquals(1, t.transport.openQueues(), "the queue still waits for the core");
            t.core.deferred = false;
            t.core.releaseDeferred();
            t.pump();
            assertEquals(0, t.transport.openQueues());
            assertEquals(List.of(0L), qps, "the QP was destroyed before the controller was closed");
            assertEquals(0, t.transport.metrics().drainTimeouts.sum(), "a dead device does not wait for the bound");
            assertEquals(0, t.resourcesOn("t0"), "nothing left on the removed device: " + t.fabric.resources());
            assertTrue(t.transport.listenAddresses().isEmpty(), "the listener went with the device");

            t.fabric.advanceTime(Duration.ofSeconds(1));
            t.pump();
            assertTrue(t.transport.listenAddresses().isEmpty(), "the device is still gone");
            t.fabric.returnDevice("t0");
            t.fabric.advanceTime(Duration.ofSeconds(1));
            t.pump();
            assertEquals(1, t.transport.listenAddresses().size(), "listening again");
            ScriptedInitiator again = t.connect(1, 8);
            assertEquals(ScriptedInitiator.State.CONNECTED, again.state());
            assertEquals(0, Capsules.send(again, Capsules.command(FakeCore.OP_FLUSH, 2, 0), 0));
            t.pump();
            assertNotNull(Cqe.find(again, 2));
            assertEquals(0, Cqe.find(again, 2).status());
        }
    }

    /** A device that dies with IBV_EVENT_DEVICE_FATAL and then falls silent: torn down at once, not after the bound. */
    /**
     * librdmacm closes a removed device's context at the first rescan of the device list that finds the device gone
     * and no CM id on it, or when its last id goes after such a rescan: the CQs, completion channels, MRs and PD the
     * transport still had on it are stranded (EBADF), and a completion channel whose CQ could not be destroyed keeps
     * the device in use for ever, so that {@code rdma link delete} never returns. Seen in the lab: the controllers'
     * teardown waited for their keep-alive timeouts while the lost listener's relisten rescanned every second. The
     * transport rescans (and listens again) only once everything it had on the removed device is released.
     */
    @Test
    void theDeviceListIsRescannedOnlyOnceEverythingOnARemovedDeviceIsReleased() {
        try (SoftTarget t = new SoftTarget()) {
            t.connectWithACommandInTheCore();
            t.fabric.removeDevice("t0");
            t.pump();
            // The core keeps the queue for several relisten intervals (a controller's teardown can take seconds).
            for (int i = 0; i < 4; i++) {
                t.fabric.advanceTime(Duration.ofSeconds(1));
                t.pump();
            }
            assertEquals(1, t.transport.openQueues(), "the queue still waits for the core");
            t.core.deferred = false;
            t.core.releaseDeferred();
            t.pump();
            assertEquals(0, t.transport.openQueues());
            assertEquals(0, t.resourcesOn("t0"), "everything on the removed device released before librdmacm closed"
                    + " its context: " + t.fabric.resources());
            t.fabric.advanceTime(Duration.ofSeconds(1));
            t.pump();
            assertTrue(t.fabric.cmContextClosed("t0"), "a rescan after the release let librdmacm close the context");
        }
    }

    @Test
    void aFatalDeviceEventTearsItsQueuesDownAtOnce() {
        try (SoftTarget t = new SoftTarget()) {
            t.connect(1, 8);
            t.connect(2, 8);
            List<Long> qps = qpsWhenClosed(t);
            t.fabric.faults().killDevice("t0", DeviceDeath.FATAL_EVENT);
            t.pump();
            assertEquals(0, t.transport.openQueues());
            assertEquals(List.of(0L, 0L), qps, "the QPs were destroyed before the controllers were closed");
            assertEquals(1, t.transport.metrics().deviceFailures.sum());
            assertEquals(0, t.transport.metrics().drainTimeouts.sum());
            assertEquals(0, t.transport.poller(0).devices().length, "the poller let go of the device");
            assertEquals(2, t.fabric.resources().undrainedQpDestroys(), "both QPs were destroyed undrained, on purpose");
            t.expectedUndrainedQpDestroys = 2;
        }
    }

    /**
     * A completion channel whose read fails, or a CQ whose poll fails, delivers nothing more: the device is dead for
     * the transport (defect 1: before, the failed channel was only logged, or threw out of the poller). Its queues
     * are torn down; the device itself still works, so the next connection opens it again.
     */
    @Test
    void aFailedCompletionChannelOrQueueMarksTheDeviceDead() {
        for (boolean channel : new boolean[] {true, false}) {
            try (SoftTarget t = new SoftTarget()) {
                t.connect(1, 8);
                Poller p = t.transport.poller(0);
                PollerDevice d = p.devices()[0];
                if (channel) {
                    t.fabric.faults().failCompletionChannel(d.channel(), Errno.EIO);
                    assertTrue(p.prepareToBlock());
                    p.block(); // the failed channel is readable: the poller reads the failure
                } else {
                    t.fabric.faults().failCompletionQueue(d.cq(), Errno.EIO);
                }
                t.pump();
                assertEquals(1, t.transport.metrics().deviceFailures.sum(), channel ? "channel" : "CQ");
                assertEquals(0, t.transport.openQueues());
                assertEquals(0, p.devices().length);
                t.expectedUndrainedQpDestroys = 1; // destroyed at once: its flushes were not waited for
                ScriptedInitiator again = t.connect(1, 8);
                assertEquals(ScriptedInitiator.State.CONNECTED, again.state(), "the device is opened again");
                assertEquals(0, Capsules.send(again, Capsules.command(FakeCore.OP_FLUSH, 3, 0), 0));
                t.pump();
                assertEquals(0, Cqe.find(again, 3).status());
            }
        }
    }

    /**
     * stop() with a queue that cannot drain (its device died silently): before, it waited, then "released anyway":
     * the QP was never destroyed, its CQ was destroyed under it and the slabs freed while it could still write them,
     * and the controller was never closed. Now the QP is destroyed first, then the queue is released (controller
     * closed), then the CQs and the registered memory go: nothing is left on the device.
     */
    @Test
    void stopDestroysTheQpOfAQueueThatCannotDrainBeforeItsMemoryGoes() {
        SoftTarget t = new SoftTarget();
        t.connect(1, 8);
        List<Long> qps = qpsWhenClosed(t);
        t.fabric.faults().killDevice("t0", DeviceDeath.SILENT);
        t.transport.stop(50);
        assertEquals(0, t.targetQps(), "the QP was destroyed");
        assertEquals(List.of(0L), qps, "before the controller was closed");
        assertTrue(t.core.queue(0).closed);
        assertEquals(0, t.resourcesOn("t0"), "CQ, MRs and PD gone after it: " + t.fabric.resources());
        assertEquals(1, t.fabric.resources().undrainedQpDestroys(), "destroyed undrained, on purpose");
        t.expectedUndrainedQpDestroys = 1;
        t.close();
    }

    /** A port lost with its device that a reload removes meanwhile does not listen again when the device returns. */
    @Test
    void aLostPortRemovedByAReloadDoesNotListenAgain() {
        try (SoftTarget t = new SoftTarget()) {
            t.fabric.removeDevice("t0");
            t.pump();
            assertTrue(t.transport.listenAddresses().isEmpty());
            assertTrue(t.transport.removeListener(1), "the lost port counts as listening for the reload");
            t.fabric.returnDevice("t0");
            t.fabric.advanceTime(Duration.ofSeconds(2));
            t.pump();
            assertTrue(t.transport.listenAddresses().isEmpty(), "removed: not listening again");
            assertEquals(false, t.transport.removeListener(1));
        }
    }
}
