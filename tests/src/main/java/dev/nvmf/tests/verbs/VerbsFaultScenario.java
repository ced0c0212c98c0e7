package dev.nvmf.tests.verbs;

import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.AsyncEvent;
import dev.nvmf.verbs.CmEvent;
import dev.nvmf.verbs.CmEventChannel;
import dev.nvmf.verbs.CmEventType;
import dev.nvmf.verbs.CmId;
import dev.nvmf.verbs.CompletionChannel;
import dev.nvmf.verbs.CompletionQueue;
import dev.nvmf.verbs.ConnectionParameters;
import dev.nvmf.verbs.Device;
import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.EventWaiter;
import dev.nvmf.verbs.MemoryRegion;
import dev.nvmf.verbs.ProtectionDomain;
import dev.nvmf.verbs.QpCapabilities;
import dev.nvmf.verbs.QpInitAttributes;
import dev.nvmf.verbs.QpState;
import dev.nvmf.verbs.QueuePair;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.RecvWorkRequest;
import dev.nvmf.verbs.ScatterGatherEntry;
import dev.nvmf.verbs.SendFlags;
import dev.nvmf.verbs.SendWorkRequest;
import dev.nvmf.verbs.VerbsException;
import dev.nvmf.verbs.WcOpcode;
import dev.nvmf.verbs.WcStatus;
import dev.nvmf.verbs.WorkCompletion;
import dev.nvmf.verbs.WrOpcode;
import dev.nvmf.verbs.selftest.VerbsScenario;

import java.io.File;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;

/**
 * Provider-neutral scenario of the verbs fault paths, on one process's two ends of RC connections through the CM
 * (server: the target's role, client: the host's). What the transport's teardown relies on, checked against a real
 * provider in the lab (rxe) and against the soft provider in the unit tests:
 * <ol>
 *   <li>{@code post-poll}: a SEND wakes the server's control thread through an {@link EventWaiter} on its
 *       completion channel; {@code nextEvent} names the CQ; the payload arrives;</li>
 *   <li>{@code bad-wr-send}: a chain of signaled RDMA WRITEs longer than the send queue fails part way;
 *       {@code postedBeforeFailure()} WRITEs complete, exactly, and no more;</li>
 *   <li>{@code bad-wr-recv}: the same for a receive chain; the receives it posted are counted in the flush below;</li>
 *   <li>{@code error-completion}: a WRITE through a wrong rkey completes with REM_ACCESS_ERR (vendor_err is read);
 *       both QPs go to error and every receive still posted flushes, in order, on both sides;</li>
 *   <li>{@code post-after-error}: a SEND and a RECV posted to the QP in error are accepted (no synchronous failure);
 *       whether they ever complete is recorded;</li>
 *   <li>{@code post-after-move-to-error}: the same on a new connection whose QP the consumer moved to error;</li>
 *   <li>{@code disconnect}: DISCONNECTED wakes the waiter on the CM channel;</li>
 *   <li>{@code hot-remove} (with a {@link DeviceControl}): the server's device goes away under a live connection:
 *       DEVICE_REMOVAL names the listener and the connection's id; what the CQ, the channel, a post and the async
 *       events then report is recorded; everything on the device is destroyed, and only then does the removal
 *       finish;</li>
 *   <li>{@code return}: the device comes back; a listener binds again, a new connection arrives on a new Device
 *       object and carries a SEND;</li>
 *   <li>{@code port-event}: a port event (a GID change on RoCE) wakes the waiter on the device and names port 1.</li>
 * </ol>
 * Facts that differ between providers are printed as {@code FACT key=value} lines (and kept in the result); the
 * run ends {@code VERBS-FAULTS: PASS} or {@code VERBS-FAULTS: FAIL <step>: <why>}. Every wait is bounded by the step
 * timeout; nothing sleeps except the bounded polls of the device list while a device comes back.
 */
public final class VerbsFaultScenario {
    private static final int RECVS = 8;
    private static final int SLOT = 1024;
    private static final int SLAB = 64 * 1024;
    private static final long SEND_AREA = 16 * 1024;
    private static final long REMOTE_AREA = 32 * 1024;
    private static final int CQ_SIZE = 512;
    private static final int RESOLVE_TIMEOUT_MS = 2000;
    private static final int TOKEN_CM = 1;
    private static final int TOKEN_ASYNC = 2;
    private static final int TOKEN_CQ = 3;

    /** What the scenario does to the server's device: provider-specific (commands in the lab, fabric calls in tests). */
    public interface DeviceControl {
        /** Starts removing {@code device}; returns at once (a removal may wait for its users to let go). */
        void startRemoval(String device) throws Exception;

        /** Waits up to {@code timeoutMillis} for the removal to finish; whether it did. */
        boolean removalFinished(long timeoutMillis) throws Exception;

        /** The device comes back under its name. */
        void restore(String device) throws Exception;

        /** Causes an asynchronous port event on port 1 of {@code device}. */
        void causePortEvent(String device) throws Exception;

        /** Undoes {@link #causePortEvent}. */
        void undoPortEvent(String device) throws Exception;
    }

    /**
     * @param quietMillis how long to watch for completions that should not (or may not) come
     * @param control     hot-remove and port events, or null to skip those steps
     */
    public record Config(InetSocketAddress serverBind, InetSocketAddress clientSource, long stepTimeoutMillis,
                         long quietMillis, PrintStream out, DeviceControl control) {
        public Config {
            if (out == null) out = System.out;
        }
    }

    public record Result(boolean passed, String failedStep, String reason, List<String> lines, Map<String, String> facts) {
        public String summary() {
            return passed ? "VERBS-FAULTS: PASS" : "VERBS-FAULTS: FAIL " + failedStep + ": " + reason;
        }
    }

    /** A completion copied to the heap. */
    record Wc(long wrId, int status, int opcode, int byteLen, int vendorErr) {
        @Override
        public String toString() { return "wc{" + wrId + " " + WcStatus.name(status) + " op " + opcode + "}"; }
    }

    private static final class StepFailure extends RuntimeException {
        StepFailure(String why) { super(why); }
    }

    /** One end: PD, completion channel, CQ, registered slab, QP, and its work-request flyweights. */
    private static final class End implements AutoCloseable {
        final String name;
        final Arena arena = Arena.ofShared();
        final MemorySegment slab = arena.allocate(SLAB, 4096);
        final WorkCompletion wc = WorkCompletion.allocate(arena, 32);
        final ScatterGatherEntry sges = ScatterGatherEntry.allocate(arena, 64);
        Device device;
        ProtectionDomain pd;
        CompletionChannel channel;
        CompletionQueue cq;
        MemoryRegion mr;
        QueuePair qp;

        End(String name) { this.name = name; }

        void create(Device d, CmId id) {
            device = d;
            pd = d.allocProtectionDomain();
            channel = d.createCompletionChannel();
            cq = d.createCompletionQueue(CQ_SIZE, channel);
            mr = pd.register(slab, Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ);
            qp = id.createQueuePair(new QpInitAttributes(pd, cq, cq, new QpCapabilities(16, 16, 1, 1, 0), false));
        }

        /** A chain of {@code n} receives of one slot each, wr_id base + i, each from its own flyweight. */
        RecvWorkRequest receives(long base, int n) {
            RecvWorkRequest first = null;
            RecvWorkRequest prev = null;
            for (int i = 0; i < n; i++) {
                ScatterGatherEntry s = ScatterGatherEntry.allocate(arena, 1);
                s.set(mr.address() + (long) (i % 16) * SLOT, SLOT, mr.lkey());
                RecvWorkRequest r = RecvWorkRequest.allocate(arena).wrId(base + i).sgList(s, 1).next(null);
                if (prev == null) first = r;
                else prev.next(r);
                prev = r;
            }
            return first;
        }

        SendWorkRequest send(long wrId, long offset, int length) {
            ScatterGatherEntry s = ScatterGatherEntry.allocate(arena, 1);
            s.set(mr.address() + offset, length, mr.lkey());
            return SendWorkRequest.allocate(arena).wrId(wrId).next(null).sgList(s, 1).opcode(WrOpcode.SEND)
                    .sendFlags(SendFlags.SIGNALED);
        }

        /** Releases in order (the QP, on its id, goes first); idempotent. */
        @Override
        public void close() {
            quietly(mr);
            mr = null;
            quietly(cq);
            cq = null;
            quietly(channel);
            channel = null;
            quietly(pd);
            pd = null;
            if (arena.scope().isAlive()) arena.close();
        }
    }

    /** One connection: both ids and both ends. */
    private static final class Conn implements AutoCloseable {
        final End server = new End("server");
        final End client = new End("client");
        CmId serverId;
        CmId clientId;

        @Override
        public void close() {
            quietly(clientId);
            quietly(serverId);
            client.close();
            server.close();
        }
    }

    private final RdmaProvider provider;
    private final Config config;
    private final List<String> lines = new ArrayList<>();
    private final Map<String, String> facts = new LinkedHashMap<>();
    private String step = "init";
    private CmEventChannel serverEvents;
    private CmEventChannel clientEvents;
    private EventWaiter waiter;
    private CmId listener;

    private VerbsFaultScenario(RdmaProvider provider, Config config) {
        this.provider = provider;
        this.config = config;
    }

    /** Runs the scenario; never throws for a scenario failure. */
    public static Result run(RdmaProvider provider, Config config) {
        return new VerbsFaultScenario(provider, config).execute();
    }

    private void ok(String detail) {
        String line = "STEP " + step + ": ok" + (detail.isEmpty() ? "" : " (" + detail + ")");
        lines.add(line);
        config.out().println(line);
        config.out().flush();
    }

    private void fact(String key, Object value) {
        facts.put(key, String.valueOf(value));
        String line = "FACT " + key + "=" + value;
        lines.add(line);
        config.out().println(line);
        config.out().flush();
    }

    private void check(boolean condition, String why) {
        if (!condition) throw new StepFailure(why);
    }

    private long deadline() { return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.stepTimeoutMillis()); }

    private static long leftMillis(long deadline) {
        return Math.max(0, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
    }

    private Result execute() {
        List<Conn> open = new ArrayList<>();
        try {
            step = "setup";
            serverEvents = provider.createEventChannel();
            clientEvents = provider.createEventChannel();
            waiter = provider.createEventWaiter();
            waiter.add(serverEvents, TOKEN_CM);
            listener = listen();
            Conn c = connect();
            open.add(c);
            Device serverDevice = c.server.device;
            waiter.add(serverDevice, TOKEN_ASYNC);
            waiter.add(c.server.channel, TOKEN_CQ);
            // QP numbers are per device: two devices may well hand out the same one (rxe does).
            fact("qp_numbers", serverDevice.name() + " " + c.server.qp.qpNum() + ", " + c.client.device.name() + " "
                    + c.client.qp.qpNum());
            ok("server " + serverDevice.name() + " qp " + c.server.qp.qpNum() + ", client " + c.client.device.name()
                    + " qp " + c.client.qp.qpNum() + ", granted " + c.server.qp.capabilities());

            step = "post-poll";
            check(c.server.cq.poll(c.server.wc) == 0, "server CQ not empty");
            check(c.server.cq.requestNotify(false) == 0, "req_notify_cq failed");
            fillPattern(c.client.slab.asSlice(SEND_AREA, 512), 3);
            check(c.client.qp.postSend(c.client.send(1, SEND_AREA, 512)) == 0, "client post_send failed");
            long before = waiter.wakeups();
            awaitToken(TOKEN_CQ);
            check(c.server.channel.nextEvent(0) == CompletionChannel.EVENT, "nextEvent after the waiter woke");
            check(c.server.channel.eventQueue() == c.server.cq, "the event names another CQ");
            Wc recv = completions(c.server, 1).getFirst();
            expect(recv, 200, WcStatus.SUCCESS);
            check(recv.byteLen() == 512, "received " + recv.byteLen() + " bytes");
            check(c.server.slab.asSlice(0, 512).mismatch(c.client.slab.asSlice(SEND_AREA, 512)) == -1, "payload differs");
            expect(completions(c.client, 1).getFirst(), 1, WcStatus.SUCCESS);
            ok("waiter woke " + (waiter.wakeups() - before) + " time(s) for the completion event");

            step = "bad-wr-send";
            // A provider's real queue may hold more than the max_send_wr it reports (rxe rounds its ring up), so
            // the chain is made long enough to overflow any rounding; the budget of a consumer must be its own.
            int sendCap = c.server.qp.capabilities().maxSendWr();
            int chain = 8 * sendCap + 4;
            SendWorkRequest first = null;
            SendWorkRequest prev = null;
            for (int i = 0; i < chain; i++) {
                SendWorkRequest w = c.server.send(1000 + i, SEND_AREA + 64L * (i % 64), 64).opcode(WrOpcode.RDMA_WRITE)
                        .remote(c.client.mr.address() + REMOTE_AREA + 64L * (i % 64), c.client.mr.rkey());
                if (prev == null) first = w;
                else prev.next(w);
                prev = w;
            }
            int rc = c.server.qp.postSend(first);
            int posted = c.server.qp.postedBeforeFailure();
            fact("bad_wr_send_errno", rc);
            fact("bad_wr_send_posted", posted + "/" + chain + " (max_send_wr " + sendCap + ")");
            check(rc != 0, "a chain of " + chain + " WRs on a send queue of " + sendCap + " was accepted whole");
            check(posted > 0 && posted < chain, "postedBeforeFailure " + posted + " of " + chain);
            List<Wc> writes = completions(c.server, posted);
            for (int i = 0; i < posted; i++) expect(writes.get(i), 1000 + i, WcStatus.SUCCESS);
            check(quiet(c.server).isEmpty(), "more completions than WRs posted before bad_wr");
            ok(posted + " of " + chain + " posted and completed, errno " + rc);

            step = "bad-wr-recv";
            int recvCap = c.client.qp.capabilities().maxRecvWr();
            int outstanding = RECVS;   // the client received nothing yet: all its first receives are posted
            int recvChain = 8 * recvCap + 4;
            rc = c.client.qp.postRecv(c.client.receives(300, recvChain));
            int recvPosted = c.client.qp.postedBeforeFailure();
            fact("bad_wr_recv_errno", rc);
            fact("bad_wr_recv_posted", recvPosted + "/" + recvChain + " (max_recv_wr " + recvCap + ", " + outstanding
                    + " outstanding)");
            check(rc != 0, "a receive chain beyond the receive queue was accepted whole");
            check(recvPosted >= 0 && recvPosted < recvChain, "postedBeforeFailure " + recvPosted + " of " + recvChain);
            ok(recvPosted + " of " + recvChain + " posted, errno " + rc);

            step = "error-completion";
            int badRkey = c.client.mr.rkey() ^ 0x00ffff00;
            SendWorkRequest bad = c.server.send(2000, SEND_AREA, 64).opcode(WrOpcode.RDMA_WRITE)
                    .remote(c.client.mr.address() + REMOTE_AREA, badRkey);
            check(c.server.qp.postSend(bad) == 0, "post of the WRITE with a wrong rkey failed");
            // The WRITE's error and the receives' flushes: ordered within each queue only (IBA chapter 10).
            List<Wc> all = completions(c.server, 1 + (RECVS - 1));
            List<Wc> sflush = all.stream().filter(w -> w.wrId() != 2000).toList();
            Wc err = all.stream().filter(w -> w.wrId() == 2000).findFirst().orElse(null);
            check(err != null, "no completion for the WRITE with a wrong rkey: " + all);
            fact("error_status", WcStatus.name(err.status()));
            fact("error_vendor_err", "0x" + Integer.toHexString(err.vendorErr()));
            check(err.status() == WcStatus.REM_ACCESS_ERR, "expected REM_ACCESS_ERR, got " + err);
            for (int i = 0; i < sflush.size(); i++) expect(sflush.get(i), 201 + i, WcStatus.WR_FLUSH_ERR);
            int clientPosted = outstanding + recvPosted;
            List<Wc> cflush = completions(c.client, clientPosted);
            for (int i = 0; i < outstanding; i++) expect(cflush.get(i), 100 + i, WcStatus.WR_FLUSH_ERR);
            for (int i = 0; i < recvPosted; i++) expect(cflush.get(outstanding + i), 300 + i, WcStatus.WR_FLUSH_ERR);
            check(quiet(c.client).isEmpty(), "the client flushed more receives than were posted");
            check(c.server.qp.state() == QpState.ERR, "server QP " + c.server.qp.state() + " after the error");
            fact("error_async_server", drainAsync(c.server.device));
            fact("error_async_client", drainAsync(c.client.device));
            ok(WcStatus.name(err.status()) + " vendor_err 0x" + Integer.toHexString(err.vendorErr()) + "; flushed "
                    + sflush.size() + " server and " + cflush.size() + " client receives in order");

            step = "post-after-error";
            check(c.server.qp.postSend(c.server.send(3000, SEND_AREA, 64)) == 0,
                    "a SEND posted in the error state failed synchronously");
            check(c.server.qp.postRecv(c.server.receives(3001, 1)) == 0,
                    "a RECV posted in the error state failed synchronously");
            List<Wc> late = quiet(c.server);
            fact("send_after_error", late.stream().anyMatch(w -> w.wrId() == 3000) ? "flushed" : "never completed");
            fact("recv_after_error", late.stream().anyMatch(w -> w.wrId() == 3001) ? "flushed" : "never completed");
            for (Wc w : late) check(w.status() == WcStatus.WR_FLUSH_ERR, "a post in error completed with " + w);
            ok("accepted; " + late.size() + " of 2 completed within " + config.quietMillis() + " ms");

            step = "post-after-move-to-error";
            Conn m = connect();
            open.add(m);
            m.server.qp.moveToError();
            List<Wc> mflush = completions(m.server, RECVS);
            for (int i = 0; i < RECVS; i++) expect(mflush.get(i), 200 + i, WcStatus.WR_FLUSH_ERR);
            check(m.server.qp.postSend(m.server.send(3100, SEND_AREA, 64)) == 0,
                    "a SEND posted after moveToError failed synchronously");
            check(m.server.qp.postRecv(m.server.receives(3101, 1)) == 0,
                    "a RECV posted after moveToError failed synchronously");
            List<Wc> mlate = quiet(m.server);
            fact("send_after_move_to_error", mlate.stream().anyMatch(w -> w.wrId() == 3100) ? "flushed" : "never completed");
            fact("recv_after_move_to_error", mlate.stream().anyMatch(w -> w.wrId() == 3101) ? "flushed" : "never completed");
            // A disconnect from the target's side: the host sees DISCONNECTED and answers with its own
            // rdma_disconnect (the DREP, as the Linux host does); only then does the target see DISCONNECTED.
            m.serverId.disconnect();
            CmEvent hostSaw = clientEvent(m.clientId);
            check(hostSaw.type() == CmEventType.DISCONNECTED, "the host got " + hostSaw.type());
            hostSaw.ack();
            m.clientId.disconnect();
            awaitServerCm(m.serverId, CmEventType.DISCONNECTED).ack();
            m.close();
            open.remove(m);
            drainEvents(clientEvents);
            ok(RECVS + " receives flushed in order; " + mlate.size() + " of 2 later posts completed");

            step = "disconnect";
            c.clientId.disconnect();
            CmEvent d = awaitServerCm(c.serverId, CmEventType.DISCONNECTED);
            d.ack();
            waiter.remove(c.server.channel);
            waiter.remove(serverDevice);
            c.close();
            open.remove(c);
            drainEvents(clientEvents);
            ok("DISCONNECTED woke the waiter");

            if (config.control() != null) hotRemoveAndReturn(open);

            step = "teardown";
            quietly(listener);
            listener = null;
            waiter.close();
            waiter = null;
            serverEvents.close();
            serverEvents = null;
            clientEvents.close();
            clientEvents = null;
            ok("");
            return finish(new Result(true, null, null, List.copyOf(lines), Map.copyOf(facts)));
        } catch (StepFailure f) {
            return finish(new Result(false, step, f.getMessage(), List.copyOf(lines), Map.copyOf(facts)));
        } catch (Exception e) {
            return finish(new Result(false, step, e.toString(), List.copyOf(lines), Map.copyOf(facts)));
        } finally {
            for (Conn c : open) quietly(c);
            quietly(listener);
            quietly(waiter);
            quietly(serverEvents);
            quietly(clientEvents);
        }
    }

    private void hotRemoveAndReturn(List<Conn> open) throws Exception {
        step = "hot-remove";
        Conn c = connect();
        open.add(c);
        Device oldDevice = c.server.device;
        String name = oldDevice.name();
        waiter.add(oldDevice, TOKEN_ASYNC);
        check(c.server.cq.requestNotify(false) == 0, "req_notify_cq failed");
        long t0 = System.nanoTime();
        config.control().startRemoval(name);
        boolean listenerTold = false;
        boolean connectionTold = false;
        List<String> seen = new ArrayList<>();
        List<String> asyncSeen = new ArrayList<>();
        long deadline = deadline();
        while (!(listenerTold && connectionTold)) {
            check(System.nanoTime() < deadline, "DEVICE_REMOVAL within " + config.stepTimeoutMillis() + " ms: listener "
                    + listenerTold + ", connection " + connectionTold + "; saw " + seen);
            waiter.await(leftMillis(deadline));
            asyncSeen.addAll(drainAsync(oldDevice));
            CmEvent e;
            while ((e = serverEvents.pollEvent(0)) != null) {
                String who = e.id() == listener ? "listener" : e.id() == c.serverId ? "connection" : "other id";
                seen.add(e.type() + "(" + who + ")");
                if (e.type() == CmEventType.DEVICE_REMOVAL) {
                    listenerTold |= e.id() == listener;
                    connectionTold |= e.id() == c.serverId;
                }
                e.ack();
            }
        }
        fact("removal_cm_events", seen);
        asyncSeen.addAll(drainAsync(oldDevice));
        fact("removal_async", asyncSeen);
        fact("removal_poll_cq", c.server.cq.poll(c.server.wc));
        fact("removal_next_event", c.server.channel.nextEvent(0));
        fact("removal_post_send", c.server.qp.postSend(c.server.send(4000, SEND_AREA, 8)));
        String state;
        try {
            state = c.server.qp.state().name();
        } catch (VerbsException e) {
            state = e.call() + " errno " + e.errno();
        }
        fact("removal_qp_state", state);
        // Teardown as a target must do it: the QP first (it stops the hardware), then what it used, then the ids.
        waiter.remove(oldDevice);
        c.serverId.destroyQueuePair();
        c.server.close();
        c.serverId.close();
        c.serverId = null;
        listener.close();
        listener = null;
        // Waiting for the removal, like a target waiting for the device to come back, lists the devices: on the ffm
        // provider that is when librdmacm lets go of the removed device.
        boolean finished = false;
        deadline = deadline();
        while (!finished && System.nanoTime() < deadline) {
            provider.listDevices();
            finished = config.control().removalFinished(200);
        }
        fact("removal_finished_after_teardown", finished);
        check(finished, "the device removal did not finish after everything on it was destroyed");
        fact("removal_s", String.format("%.1f", (System.nanoTime() - t0) / 1e9));
        List<String> clientSaw = new ArrayList<>();
        CmEvent e;
        while ((e = clientEvents.pollEvent(0)) != null) {
            clientSaw.add(e.type().name());
            e.ack();
        }
        fact("removal_client_events", clientSaw);
        c.close();
        open.remove(c);
        ok(name + " removed: " + seen);

        step = "return";
        config.control().restore(name);
        deadline = deadline();
        while (!active(name)) {
            check(System.nanoTime() < deadline, name + " not back and ACTIVE within " + config.stepTimeoutMillis() + " ms");
            Thread.sleep(100);
        }
        listener = listen();
        Conn n = connect();
        open.add(n);
        check(n.server.device != oldDevice, "the returned device has the removed one's Device object");
        check(n.server.device.name().equals(name), "the new connection is on " + n.server.device.name());
        fillPattern(n.client.slab.asSlice(SEND_AREA, 256), 5);
        check(n.client.qp.postSend(n.client.send(5000, SEND_AREA, 256)) == 0, "post_send on the new device");
        expect(completions(n.server, 1).getFirst(), 200, WcStatus.SUCCESS);
        expect(completions(n.client, 1).getFirst(), 5000, WcStatus.SUCCESS);
        check(n.server.slab.asSlice(0, 256).mismatch(n.client.slab.asSlice(SEND_AREA, 256)) == -1, "payload differs");
        ok(name + " back; listening again; new connection carried a SEND");

        step = "port-event";
        waiter.add(n.server.device, TOKEN_ASYNC);
        drainAsync(n.server.device);
        config.control().causePortEvent(name);
        AsyncEvent port = null;
        deadline = deadline();
        while (port == null) {
            check(System.nanoTime() < deadline, "no port event within " + config.stepTimeoutMillis() + " ms");
            awaitToken(TOKEN_ASYNC);
            AsyncEvent a;
            while ((a = n.server.device.pollAsyncEvent(0)) != null) {
                if (a.type().affiliation() == AsyncEvent.Affiliation.PORT && port == null) port = a;
            }
        }
        fact("port_event", port.type() + " port " + port.portNum());
        check(port.portNum() == 1, "port event names port " + port.portNum());
        config.control().undoPortEvent(name);
        waiter.remove(n.server.device);
        drainAsync(n.server.device);
        n.clientId.disconnect();
        awaitServerCm(n.serverId, CmEventType.DISCONNECTED).ack();
        n.close();
        open.remove(n);
        drainEvents(clientEvents);
        ok(port.type() + " on port " + port.portNum());
    }

    private boolean active(String device) {
        for (DeviceInfo d : provider.listDevices()) {
            if (d.name().equals(device) && !d.ports().isEmpty() && d.ports().getFirst().stateName().equals("ACTIVE")) {
                return true;
            }
        }
        return false;
    }

    /** A listener on the server address; binding is retried while the address is not yet usable (a device coming back). */
    private CmId listen() throws InterruptedException {
        long deadline = deadline();
        while (true) {
            CmId id = serverEvents.createId("listener");
            try {
                id.bind(config.serverBind());
                id.listen(8);
                return id;
            } catch (VerbsException e) {
                id.close();
                check(System.nanoTime() < deadline, "cannot listen on " + config.serverBind() + ": " + e.getMessage());
                Thread.sleep(100);
            }
        }
    }

    /** A new connection to the listener, both sides ESTABLISHED, RECVS receives posted on each (100.., 200..). */
    private Conn connect() {
        Conn c = new Conn();
        boolean done = false;
        try {
            long deadline = deadline();
            while (true) {
                c.clientId = clientEvents.createId("client");
                c.clientId.resolveAddress(config.clientSource(), config.serverBind(), RESOLVE_TIMEOUT_MS);
                CmEvent e = clientEvent(c.clientId);
                if (e.type() == CmEventType.ADDR_RESOLVED) {
                    e.ack();
                    c.clientId.resolveRoute(RESOLVE_TIMEOUT_MS);
                    e = clientEvent(c.clientId);
                    if (e.type() == CmEventType.ROUTE_RESOLVED) {
                        e.ack();
                        break;
                    }
                }
                String why = e.type() + " status " + e.status();
                e.ack();
                c.clientId.close();
                c.clientId = null;
                check(System.nanoTime() < deadline, "resolution still fails: " + why);
            }
            c.client.create(c.clientId.device(), c.clientId);
            check(c.client.qp.postRecv(c.client.receives(100, RECVS)) == 0, "client post_recv");
            c.clientId.connect(new ConnectionParameters(new byte[0], 4, 4, 0, 7, 7, false, 0));
            CmEvent request = awaitServerCm(null, CmEventType.CONNECT_REQUEST);
            check(request.listenId() == listener, "CONNECT_REQUEST for another listener");
            c.serverId = request.id();
            request.ack();
            c.server.create(c.serverId.device(), c.serverId);
            check(c.server.qp.postRecv(c.server.receives(200, RECVS)) == 0, "server post_recv");
            c.serverId.accept(new ConnectionParameters(new byte[0], 4, 4, 0, 7, 7, false, 0));
            CmEvent est = clientEvent(c.clientId);
            check(est.type() == CmEventType.ESTABLISHED, "client got " + est.type() + " instead of ESTABLISHED");
            est.ack();
            awaitServerCm(c.serverId, CmEventType.ESTABLISHED).ack();
            done = true;
            return c;
        } finally {
            if (!done) quietly(c);
        }
    }

    /** The client's next event for {@code id}; late events of ids already torn down are acknowledged and skipped. */
    private CmEvent clientEvent(CmId id) {
        long deadline = deadline();
        while (true) {
            CmEvent e = clientEvents.pollEvent(leftMillis(deadline));
            check(e != null, "no CM event for the client within " + config.stepTimeoutMillis() + " ms");
            if (e.id() == id) return e;
            config.out().println("  (client: late " + e.type() + " of an earlier id)");
            e.ack();
        }
    }

    /** The next server CM event, waited for through the EventWaiter; it must be {@code type} (for {@code id}). */
    private CmEvent awaitServerCm(CmId id, CmEventType type) {
        long deadline = deadline();
        while (true) {
            CmEvent e = serverEvents.pollEvent(0);
            if (e != null) {
                if (e.type() != type || (id != null && e.id() != id)) {
                    String what = e.type() + " (status " + e.status() + ")";
                    e.ack();
                    throw new StepFailure("expected " + type + ", got " + what);
                }
                return e;
            }
            check(System.nanoTime() < deadline, "no " + type + " within " + config.stepTimeoutMillis() + " ms");
            waiter.await(leftMillis(deadline));
        }
    }

    /** Waits through the EventWaiter until {@code token} is reported. */
    private void awaitToken(int token) {
        long deadline = deadline();
        while (true) {
            int n = waiter.await(leftMillis(deadline));
            check(n >= 0, "epoll_wait failed: errno " + -n);
            for (int i = 0; i < n; i++) {
                if (waiter.ready(i) == token) return;
            }
            check(System.nanoTime() < deadline, "token " + token + " not ready within " + config.stepTimeoutMillis() + " ms");
        }
    }

    /**
     * Exactly {@code count} completions from the end's CQ, in order: poll, arm, poll again, then wait on the completion
     * channel with the return-code call. Never takes more than asked.
     */
    private List<Wc> completions(End end, int count) {
        List<Wc> out = new ArrayList<>();
        long deadline = deadline();
        while (out.size() < count) {
            WorkCompletion into = new WorkCompletion(end.wc.segment().asSlice(0,
                    (long) Math.min(count - out.size(), end.wc.capacity()) * WorkCompletion.SIZE));
            int n = end.cq.poll(into);
            check(n >= 0, end.name + " poll_cq returned " + n);
            if (n == 0) {
                check(end.cq.requestNotify(false) == 0, end.name + " req_notify_cq failed");
                n = end.cq.poll(into);
                check(n >= 0, end.name + " poll_cq returned " + n);
            }
            for (int i = 0; i < n; i++) out.add(copy(into, i));
            if (n > 0) continue;
            long left = leftMillis(deadline);
            check(left > 0, end.name + ": " + out.size() + " of " + count + " completions within "
                    + config.stepTimeoutMillis() + " ms " + out);
            int rc = end.channel.nextEvent(left);
            check(rc >= 0, end.name + " completion channel failed: errno " + -rc);
        }
        return out;
    }

    /** Whatever completes on the end's CQ within the quiet period (things that should not, or may not, come). */
    private List<Wc> quiet(End end) {
        List<Wc> out = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.quietMillis());
        while (true) {
            int n = end.cq.poll(end.wc);
            check(n >= 0, end.name + " poll_cq returned " + n);
            for (int i = 0; i < n; i++) out.add(copy(end.wc, i));
            if (n > 0) continue;
            long left = leftMillis(deadline);
            if (left == 0) return out;
            check(end.cq.requestNotify(false) == 0, end.name + " req_notify_cq failed");
            if (end.cq.poll(end.wc) == 0) {
                int rc = end.channel.nextEvent(left);
                check(rc >= 0, end.name + " completion channel failed: errno " + -rc);
            }
        }
    }

    private static List<String> drainAsync(Device device) {
        List<String> out = new ArrayList<>();
        AsyncEvent a;
        while ((a = device.pollAsyncEvent(0)) != null) {
            out.add(a.type() + (a.qpNum() >= 0 ? " qp " + a.qpNum() : "") + (a.portNum() >= 0 ? " port " + a.portNum() : ""));
        }
        return out;
    }

    private static void drainEvents(CmEventChannel ch) {
        CmEvent e;
        while ((e = ch.pollEvent(0)) != null) e.ack();
    }

    private void expect(Wc w, long wrId, int status) {
        check(w.wrId() == wrId && w.status() == status, "expected wr_id " + wrId + " " + WcStatus.name(status)
                + ", got " + w);
    }

    private static Wc copy(WorkCompletion wc, int i) {
        return new Wc(wc.wrId(i), wc.status(i), wc.opcode(i), wc.byteLen(i), wc.vendorErr(i));
    }

    private static void fillPattern(MemorySegment s, int seed) {
        for (long i = 0; i < s.byteSize(); i++) s.set(JAVA_BYTE, i, (byte) (seed * 17 + i * 3));
    }

    private Result finish(Result r) {
        config.out().println(r.summary());
        config.out().flush();
        return r;
    }

    private static void quietly(AutoCloseable c) {
        if (c == null) return;
        try {
            c.close();
        } catch (Exception ignored) {
            // teardown after a failure: the first failure is what is reported
        }
    }

    /**
     * The lab's device control: Soft-RoCE links through {@code rdma link} and a port event through a GID change
     * ({@code ip addr add/del} on the link's netdev: RoCE derives GIDs from the netdev's addresses).
     */
    static final class CommandDeviceControl implements DeviceControl {
        private final String netdev;
        private final String extraAddress;
        private final long timeoutMillis;
        private Process removal;

        CommandDeviceControl(String netdev, String extraAddress, long timeoutMillis) {
            this.netdev = netdev;
            this.extraAddress = extraAddress;
            this.timeoutMillis = timeoutMillis;
        }

        @Override
        public void startRemoval(String device) throws Exception {
            removal = new ProcessBuilder("rdma", "link", "delete", device).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        }

        @Override
        public boolean removalFinished(long timeout) throws Exception {
            if (!removal.waitFor(timeout, TimeUnit.MILLISECONDS)) return false;
            if (removal.exitValue() != 0) throw new StepFailure("rdma link delete exited " + removal.exitValue());
            return true;
        }

        @Override
        public void restore(String device) throws Exception {
            run("rdma", "link", "add", device, "type", "rxe", "netdev", netdev);
        }

        @Override
        public void causePortEvent(String device) throws Exception {
            run("ip", "addr", "add", extraAddress, "dev", netdev);
        }

        @Override
        public void undoPortEvent(String device) throws Exception {
            run("ip", "addr", "del", extraAddress, "dev", netdev);
        }

        private void run(String... command) throws Exception {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (!p.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new StepFailure(String.join(" ", command) + " did not finish");
            }
            if (p.exitValue() != 0) throw new StepFailure(String.join(" ", command) + " exited " + p.exitValue());
        }
    }

    /**
     * {@code main(provider serverAddress clientAddress port [stepTimeoutMillis] [--quiet MS]
     * [--hot-remove DEVICE:NETDEV:EXTRA_CIDR])}, e.g. in the lab {@code ffm 10.77.0.1 10.77.0.2 4792 60000
     * --hot-remove rxe0:va:10.77.0.99/24}. Exits 0 on PASS, 1 on FAIL.
     */
    public static void main(String[] args) {
        if (args.length < 4) {
            System.err.println("usage: VerbsFaultScenario PROVIDER SERVER_ADDRESS CLIENT_ADDRESS PORT [STEP_TIMEOUT_MS]"
                    + " [--quiet MS] [--hot-remove DEVICE:NETDEV:EXTRA_CIDR]");
            System.out.println("VERBS-FAULTS: FAIL usage");
            System.exit(2);
        }
        Result result;
        try (RdmaProvider provider = VerbsScenario.provider(args[0])) {
            long timeout = 20_000;
            long quiet = 3_000;
            DeviceControl control = null;
            for (int i = 4; i < args.length; i++) {
                switch (args[i]) {
                    case "--quiet" -> quiet = Long.parseLong(args[++i]);
                    case "--hot-remove" -> {
                        String[] p = args[++i].split(":");
                        control = new CommandDeviceControl(p[1], p[2], 60_000);
                    }
                    default -> timeout = Long.parseLong(args[i]);
                }
            }
            InetSocketAddress server = new InetSocketAddress(InetAddress.getByName(args[1]), Integer.parseInt(args[3]));
            InetSocketAddress client = new InetSocketAddress(InetAddress.getByName(args[2]), 0);
            System.out.println("VERBS-FAULTS: provider " + provider.name() + ", server " + server + ", client "
                    + client.getAddress().getHostAddress() + ", step timeout " + timeout + " ms, quiet " + quiet
                    + " ms, hot-remove " + (control != null) + ", rdma tool " + new File("/usr/bin/rdma").exists());
            result = run(provider, new Config(server, client, timeout, quiet, System.out, control));
        } catch (Exception e) {
            System.out.println("VERBS-FAULTS: FAIL setup: " + e);
            System.exit(1);
            return;
        }
        System.exit(result.passed() ? 0 : 1);
    }
}
