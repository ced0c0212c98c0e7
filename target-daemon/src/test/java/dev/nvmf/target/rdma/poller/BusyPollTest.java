package dev.nvmf.target.rdma.poller;

import dev.nvmf.target.rdma.RdmaPortConfig;
import dev.nvmf.target.rdma.RdmaTransport;
import dev.nvmf.target.rdma.RdmaTransportConfig;
import dev.nvmf.target.rdma.VerbsCalls;
import dev.nvmf.target.rdma.VerbsCalls.Call;
import dev.nvmf.target.rdma.queue.RdmaQueue;
import dev.nvmf.target.rdma.queue.RequestState;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.target.rdma.support.FakeCore;
import dev.nvmf.target.rdma.support.SoftTarget;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.initiator.ScriptedInitiator;
import dev.nvmf.verbs.soft.SoftFabric;
import org.agrona.concurrent.IdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The poller's busy-poll period ({@code transport.busy_poll}): after its last completion or inbox item it keeps
 * polling for that long, then arms its CQ and blocks on the channel with no timeout. Driven deterministically: the
 * poller's duty cycle through its {@code AgentInvoker} and its production idle strategy, on the manual soft fabric's
 * virtual clock; what it did is read from its own count of verbs calls ({@link VerbsCalls}). Where the idle strategy
 * is about to block, the test first wakes the poller's waiter, so the block (a real epoll_wait with no timeout) returns
 * at once, as it would on the next event.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // a hang guard: a wrong block never returns
class BusyPollTest {
    private static final long US = 1_000;

    /** The soft fabric, recording the event waiters the transport creates (the pollers' first, in order). */
    private static final class RecordingProvider implements RdmaProvider {
        final SoftFabric fabric;
        final List<EventWaiter> waiters = new ArrayList<>();

        RecordingProvider(SoftFabric fabric) { this.fabric = fabric; }

        @Override public String name() { return fabric.name(); }
        @Override public List<DeviceInfo> listDevices() { return fabric.listDevices(); }
        @Override public Device openDevice(String name) { return fabric.openDevice(name); }
        @Override public CmEventChannel createEventChannel() { return fabric.createEventChannel(); }
        @Override public void close() { fabric.close(); }

        @Override
        public EventWaiter createEventWaiter() {
            EventWaiter w = fabric.createEventWaiter();
            waiters.add(w);
            return w;
        }
    }

    /** A target with one poller whose busy-poll period is {@code busyPollNanos}, and one connected host queue. */
    private static final class Rig implements AutoCloseable {
        final SoftFabric fabric = SoftFabric.manual();
        final RecordingProvider provider = new RecordingProvider(fabric);
        final FakeCore core = new FakeCore();
        final RdmaTransport transport;
        final Poller poller;
        final IdleStrategy idle;
        final List<ScriptedInitiator> hosts = new ArrayList<>();
        final ScriptedInitiator host;
        int cid;

        Rig(long busyPollNanos) {
            fabric.addDevice("t0", SoftTarget.TARGET_IP);
            fabric.addDevice("h0", SoftTarget.HOST_IP);
            transport = new RdmaTransport(provider, RdmaTransportConfig.of(List.of(
                    RdmaPortConfig.of(1, SoftTarget.TARGET_IP, SoftTarget.PORT))).withBusyPollNanos(busyPollNanos),
                    core, fabric::nanoTime);
            transport.open();
            poller = transport.poller(0);
            idle = poller.idleStrategy(); // what the poller's AgentRunner uses in the daemon
            host = new ScriptedInitiator(fabric, Capsules.queueOptions(new InetSocketAddress(SoftTarget.HOST_IP, 0),
                    new InetSocketAddress(SoftTarget.TARGET_IP, SoftTarget.PORT), 1, 8, 16));
            hosts.add(host);
            host.startConnect();
            pump();
            assertEquals(ScriptedInitiator.State.CONNECTED, host.state());
        }

        void pump() { SoftTarget.pump(fabric, transport, hosts); }

        /** One I/O (a Flush) through to its response, then the duty cycle that did work, as the runner sees it. */
        void io() {
            int c = ++cid;
            assertEquals(0, Capsules.send(host, Capsules.command(FakeCore.OP_FLUSH, c, 0), 0));
            pump();
            assertNotNull(Cqe.find(host, c), "response " + c);
            idle.idle(1);
        }

        /** One duty cycle of the poller and its idle step, as the AgentRunner runs them; returns the work done. */
        int dutyCycle() {
            int w = transport.pollerInvoker(0).invoke();
            idle.idle(w);
            return w;
        }

        /** The next block returns at once (the poller's waiter is the first the transport created). */
        void wakeTheNextBlock() { provider.waiters.get(0).wakeup(); }

        long calls(Call c) { return poller.verbsCalls().count(c); }

        @Override
        public void close() {
            transport.stop(5000);
            for (ScriptedInitiator h : hosts) h.close();
            fabric.deliverAll();
            assertTrue(fabric.resources().nothingLeaked(), "left after stop: " + fabric.resources());
        }
    }

    @Test
    void thePollerArmsOnlyAfterTheBusyPollPeriodOfEmptyPolls() {
        try (Rig r = new Rig(50 * US)) {
            r.io();
            long notify = r.calls(Call.REQ_NOTIFY_CQ);
            long empty = r.calls(Call.POLL_CQ_EMPTY);
            long waits = r.calls(Call.EPOLL_WAIT);
            // Empty duty cycles at 0, 10, 20, 30, 40 us after the last work: the poller polls and does not arm.
            for (int i = 0; i < 5; i++) {
                if (i > 0) r.fabric.advanceTime(10 * US);
                assertEquals(0, r.dutyCycle());
                assertEquals(notify, r.calls(Call.REQ_NOTIFY_CQ), "armed " + (i * 10) + " us after the last work");
            }
            assertEquals(empty + 5, r.calls(Call.POLL_CQ_EMPTY));
            assertEquals(waits, r.calls(Call.EPOLL_WAIT));
            r.fabric.advanceTime(9 * US);
            assertEquals(0, r.dutyCycle()); // 49 us: still polling
            assertEquals(notify, r.calls(Call.REQ_NOTIFY_CQ), "armed 1 ns before the period ended");
            r.fabric.advanceTime(1 * US);
            // 50 us: the period is over. The poller arms its CQ, polls once more (empty) and blocks with no timeout.
            r.wakeTheNextBlock();
            assertEquals(0, r.dutyCycle());
            assertEquals(notify + 1, r.calls(Call.REQ_NOTIFY_CQ), "armed once the period was over");
            assertEquals(empty + 7 + 1, r.calls(Call.POLL_CQ_EMPTY), "7 duty cycles and the look after arming");
            assertEquals(waits + 1, r.calls(Call.EPOLL_WAIT), "blocked once");
            assertEquals(0, r.calls(Call.GET_CQ_EVENT), "woken by the wakeup, not by a CQ event");
        }
    }

    @Test
    void aCompletionInsideThePeriodIsTakenWithoutArmingAndThePeriodStartsAgain() {
        try (Rig r = new Rig(50 * US)) {
            r.io();
            long notify = r.calls(Call.REQ_NOTIFY_CQ);
            for (int i = 0; i < 5; i++) {
                if (i > 0) r.fabric.advanceTime(10 * US);
                assertEquals(0, r.dutyCycle());
            }
            // 40 us after the last work the host's next command arrives; the poller takes it by polling.
            assertEquals(0, Capsules.send(r.host, Capsules.command(FakeCore.OP_FLUSH, 2, 0), 0));
            int work = 0;
            for (int i = 0; i < 10 && Cqe.find(r.host, 2) == null; i++) {
                r.fabric.deliverAll();
                work += r.dutyCycle();
                r.host.doWork();
            }
            assertEquals(0, Cqe.find(r.host, 2).status());
            assertTrue(work >= 2, "the RECV and the SEND completion were polled: " + work);
            assertEquals(notify, r.calls(Call.REQ_NOTIFY_CQ), "a completion inside the period needs no arming");
            assertEquals(0, r.calls(Call.GET_CQ_EVENT));
            // The period runs again from that work: 40 us later the poller still polls, at 50 us it arms.
            r.fabric.deliverAll();
            while (r.dutyCycle() > 0) r.fabric.deliverAll(); // anything the last exchange left
            for (int i = 0; i < 5; i++) {
                r.fabric.advanceTime(10 * US);
                if (i < 4) {
                    assertEquals(0, r.dutyCycle());
                    assertEquals(notify, r.calls(Call.REQ_NOTIFY_CQ), "armed " + (i + 1) * 10 + " us after the work");
                }
            }
            r.wakeTheNextBlock();
            assertEquals(0, r.dutyCycle());
            assertEquals(notify + 1, r.calls(Call.REQ_NOTIFY_CQ));
        }
    }

    @Test
    void aPeriodOfZeroArmsAtTheFirstEmptyPoll() {
        try (Rig r = new Rig(0)) {
            r.io();
            long notify = r.calls(Call.REQ_NOTIFY_CQ);
            long empty = r.calls(Call.POLL_CQ_EMPTY);
            long waits = r.calls(Call.EPOLL_WAIT);
            r.wakeTheNextBlock();
            assertEquals(0, r.dutyCycle()); // the clock does not move: no time is needed
            assertEquals(notify + 1, r.calls(Call.REQ_NOTIFY_CQ));
            assertEquals(empty + 2, r.calls(Call.POLL_CQ_EMPTY), "the duty cycle and the look after arming");
            assertEquals(waits + 1, r.calls(Call.EPOLL_WAIT));
        }
    }

    /**
     * A poller blocked with its CQ armed is woken by the CQ event of the next command (QD 1): the wake-up reads that one
     * event with one ibv_get_cq_event and acknowledges it. Before, it called ibv_get_cq_event again until the channel
     * said EAGAIN: two calls per wake-up. The poller blocks on its own thread here; the test delivers once it is in
     * its wait (or about to enter it: the wait is level-triggered, so the counts are the same).
     */
    @Test
    void aWakeUpByTheNextCommandReadsOneCqEvent() throws Exception {
        try (Rig r = new Rig(0)) {
            r.io(); // served, its SEND's completion polled: nothing is outstanding
            long[] before = r.poller.verbsCalls().snapshot();
            // The next duty cycle finds nothing: it arms, looks once more and blocks.
            Thread blocked = new Thread(r::dutyCycle, "measured-block");
            blocked.start();
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (r.calls(Call.EPOLL_WAIT) == before[Call.EPOLL_WAIT.ordinal()]) {
                if (System.nanoTime() > deadline) throw new AssertionError("the poller did not block");
                Thread.onSpinWait();
            }
            assertEquals(0, Capsules.send(r.host, Capsules.command(FakeCore.OP_FLUSH, ++r.cid, 0), 0));
            r.fabric.deliverAll(); // the RECV completes on the armed CQ: its event wakes the poller
            blocked.join(60_000);
            assertTrue(!blocked.isAlive(), "the CQ event woke the poller");
            long[] after = r.poller.verbsCalls().snapshot();
            assertEquals(1, after[Call.EPOLL_WAIT.ordinal()] - before[Call.EPOLL_WAIT.ordinal()], "one wait");
            assertEquals(1, after[Call.GET_CQ_EVENT.ordinal()] - before[Call.GET_CQ_EVENT.ordinal()],
                    "one ibv_get_cq_event for the one event");
            assertEquals(1, after[Call.ACK_CQ_EVENTS.ordinal()] - before[Call.ACK_CQ_EVENTS.ordinal()], "acknowledged");
            r.pump(); // the command the event announced is served
            assertEquals(0, Cqe.find(r.host, r.cid).status());
        }
    }

    /**
     * An arming whose look-once-more found work leaves its CQ event unread (the poller did not block on it). The next
     * block returns at once for it, level-triggered, and reads it with one call; the block after that waits again.
     * Nothing is lost and no wake-up makes an empty ibv_get_cq_event.
     */
    @Test
    void anEventLeftByAnArmingThatFoundWorkWakesTheNextBlockOnce() {
        try (Rig r = new Rig(0)) {
            r.io();
            r.wakeTheNextBlock();
            r.dutyCycle(); // armed; woken by the wakeup, not by an event
            // The next command completes on the armed CQ: an event, while the poller is awake.
            assertEquals(0, Capsules.send(r.host, Capsules.command(FakeCore.OP_FLUSH, ++r.cid, 0), 0));
            r.fabric.deliverAll();
            for (int i = 0; i < 10 && Cqe.find(r.host, r.cid) == null; i++) {
                assertTrue(r.dutyCycle() > 0, "the poller takes the command by polling");
                r.fabric.deliverAll();
                r.host.doWork();
            }
            assertEquals(0, Cqe.find(r.host, r.cid).status());
            while (r.transport.pollerInvoker(0).invoke() > 0) r.fabric.deliverAll(); // the SEND's completion
            long[] before = r.poller.verbsCalls().snapshot();
            // Empty: arms (the CQ is disarmed by its event), looks once more, blocks, and returns at once for the event.
            assertEquals(0, r.dutyCycle());
            long[] after = r.poller.verbsCalls().snapshot();
            assertEquals(1, after[Call.EPOLL_WAIT.ordinal()] - before[Call.EPOLL_WAIT.ordinal()]);
            assertEquals(1, after[Call.GET_CQ_EVENT.ordinal()] - before[Call.GET_CQ_EVENT.ordinal()]);
            assertEquals(1, after[Call.ACK_CQ_EVENTS.ordinal()] - before[Call.ACK_CQ_EVENTS.ordinal()]);
            // Nothing is left: the next block would wait (released by the wakeup, with no event to read).
            r.wakeTheNextBlock();
            assertEquals(0, r.dutyCycle());
            assertEquals(after[Call.GET_CQ_EVENT.ordinal()], r.calls(Call.GET_CQ_EVENT), "no event left to read");
        }
    }

    /**
     * The poller's poll_cq count, wake-ups and acknowledged CQ events, read while it is blocked: the epoll_wait it
     * counted (after its last poll) has not returned, before and after the reads. Read without that check, a late
     * completion could wake it between the test's look at "blocked" and its reads, and the wake-up would be in the
     * snapshot while the duty cycle after it was not: a duty cycle seemingly without a wake-up.
     */
    private static long[] blockedSnapshot(VerbsCalls calls, EventWaiter waiter) {
        long[] at = new long[3];
        awaitCondition(() -> {
            long epolls = calls.count(Call.EPOLL_WAIT);
            long wakeups = waiter.wakeups();
            at[0] = calls.count(Call.POLL_CQ);
            at[1] = wakeups;
            at[2] = calls.count(Call.ACK_CQ_EVENTS);
            return epolls == wakeups + 1 && waiter.wakeups() == wakeups && calls.count(Call.EPOLL_WAIT) == epolls;
        }, "a consistent look at the blocked poller");
        return at;
    }

    @Test
    void anIdlePollerBlocksAndMakesNoDutyCycles() throws Exception {
        SoftFabric fabric = SoftFabric.automatic();
        fabric.addDevice("t0", SoftTarget.TARGET_IP);
        fabric.addDevice("h0", SoftTarget.HOST_IP);
        RecordingProvider provider = new RecordingProvider(fabric);
        FakeCore core = new FakeCore();
        RdmaTransport t = new RdmaTransport(provider, RdmaTransportConfig.of(List.of(
                RdmaPortConfig.of(1, SoftTarget.TARGET_IP, SoftTarget.PORT))).withBusyPollNanos(50 * US), core);
        t.start();
        ScriptedInitiator h = new ScriptedInitiator(fabric, Capsules.queueOptions(
                new InetSocketAddress(SoftTarget.HOST_IP, 0),
                new InetSocketAddress(SoftTarget.TARGET_IP, SoftTarget.PORT), 1, 8, 16));
        try {
            assertEquals(ScriptedInitiator.State.CONNECTED, h.connect(10_000));
            VerbsCalls calls = t.poller(0).verbsCalls();
            EventWaiter waiter = provider.waiters.get(0);
            for (int io = 1; io <= 3; io++) {
                final int c = io;
                assertEquals(0, Capsules.send(h, Capsules.command(FakeCore.OP_FLUSH, c, 0), 0));
                awaitCondition(() -> { h.doWork(); return Cqe.find(h, c) != null; }, "response " + c);
                // The poller polls for 50 us, then arms and blocks: one epoll_wait entered that has not returned.
                // (It sent the response, so it had returned from its last wait; it may have blocked again already.)
                // The response's SEND completion too (it may come after the host saw the response): then nothing of
                // the queue is outstanding, and nothing can wake the poller.
                RdmaQueue q = t.cm().queues().get(0);
                awaitCondition(() -> calls.count(Call.EPOLL_WAIT) == waiter.wakeups() + 1
                        && q.count(RequestState.SENDING) == 0 && q.count(RequestState.EXECUTING) == 0,
                        () -> "the poller blocked after I/O " + c
                        + ": calls " + java.util.Arrays.toString(calls.snapshot()) + ", wakeups " + waiter.wakeups());
                long[] at = blockedSnapshot(calls, waiter);
                long polls = at[0];
                long wakeups = at[1];
                long events = at[2];
                // Nothing happens: no duty cycle and no wake-up, for as long as we look. The automatic fabric may
                // still hand over a completion late (its own thread, on a loaded host): a wake-up must then have read
                // a CQ event; one with no event (a timeout, a spurious return) fails.
                long end = System.nanoTime() + 200_000_000L;
                while (System.nanoTime() < end) {
                    if (calls.count(Call.POLL_CQ) != polls || waiter.wakeups() != wakeups) {
                        // A duty cycle only follows a return from the wait: it must have been for a CQ event.
                        awaitCondition(() -> calls.count(Call.EPOLL_WAIT) == waiter.wakeups() + 1, "blocked again");
                        long woke = waiter.wakeups() - wakeups;
                        assertTrue(woke >= 1, "a duty cycle without a wake-up");
                        assertTrue(calls.count(Call.ACK_CQ_EVENTS) - events >= woke,
                                "a wake-up while idle without a CQ event: " + java.util.Arrays.toString(calls.snapshot()));
                        at = blockedSnapshot(calls, waiter);
                        polls = at[0];
                        wakeups = at[1];
                        events = at[2];
                    }
                    Thread.onSpinWait();
                }
                boolean inEpoll = false;
                for (StackTraceElement e : t.poller(0).thread().getStackTrace()) {
                    inEpoll |= e.getMethodName().equals("await");
                }
                assertTrue(inEpoll, "the poller thread waits in its event waiter");
            }
        } finally {
            t.stop(5000);
            h.close();
        }
        assertTrue(fabric.resources().nothingLeaked(), fabric.resources().toString());
    }

    private static void awaitCondition(java.util.function.BooleanSupplier condition, String what) {
        awaitCondition(condition, () -> what);
    }

    private static void awaitCondition(java.util.function.BooleanSupplier condition,
                                       java.util.function.Supplier<String> what) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) throw new AssertionError("timed out waiting for " + what.get());
            Thread.onSpinWait();
        }
    }
}
