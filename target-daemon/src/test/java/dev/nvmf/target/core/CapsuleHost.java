package dev.nvmf.target.core;

import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.Status;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A capsule-level host on the {@link FakeTransport}: it drives the core through QueueAcceptor / CommandQueue with
 * no RDMA underneath, playing the transport's part for each command capsule: it binds the SQE and a response
 * buffer, maps data (host data in, a garbage-filled buffer of the SGL's length out), calls begin/execute and
 * captures the completion. Verbs-level hosts (with queue pairs, keys and RDMA READ/WRITE) live with the transport's
 * tests.
 */
final class CapsuleHost {
    /** CC value the Linux host writes to enable: EN, IOSQES 6, IOCQES 4. */
    static final int CC_ENABLE = Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);

    final NvmeTarget target;
    final String hostNqn;
    final byte[] hostId;
    int portId = 1;
    /** The local address the host reaches the target on, as the transport reports it (null: unknown). */
    InetAddress localAddress;
    Queue admin;
    int cntlid = -1;

    CapsuleHost(NvmeTarget target, String hostNqn) {
        this.target = target;
        this.hostNqn = hostNqn;
        this.hostId = Arrays.copyOf(hostNqn.getBytes(StandardCharsets.UTF_8), 16);
    }

    Queue open(int qid, int size) {
        FakeTransport t = new FakeTransport(hostNqn + "/q" + qid);
        t.localAddress = localAddress;
        return new Queue(target.openQueue(portId, qid, size, t), t);
    }

    Completion connectAdmin(String subnqn, int katoMillis) {
        admin = open(0, 32);
        Completion c = admin.submit(Cmd.connect(0, 31, katoMillis, hostId, 0xFFFF, subnqn, hostNqn));
        if (c.status() == 0) {
            cntlid = c.dw0() & 0xFFFF;
        }
        return c;
    }

    /** Connect, Property Get CAP, Property Set CC.EN, Property Get CSTS = RDY: what the Linux host does. */
    CapsuleHost connectAndEnable(String subnqn) {
        Completion c = connectAdmin(subnqn, 5000);
        assertEquals(0, c.status(), () -> "connect: " + c);
        assertEquals(0, admin.submit(Cmd.propertyGet(Properties.CAP, true)).status());
        assertEquals(0, admin.submit(Cmd.propertySet(Properties.CC, CC_ENABLE)).status());
        Completion csts = admin.submit(Cmd.propertyGet(Properties.CSTS, false));
        assertEquals(Properties.CSTS_RDY, csts.dw0());
        return this;
    }

    Queue connectIo(int qid, int size) {
        Queue q = open(qid, size);
        Completion c = q.submit(Cmd.connect(qid, size - 1, 0, hostId, cntlid, subnqnOf(), hostNqn));
        assertEquals(0, c.status(), () -> "I/O connect: " + c);
        assertEquals(cntlid, c.dw0() & 0xFFFF);
        return q;
    }

    private String subnqnOf() {
        for (var c : target.controllers()) {
            if (c.cntlid() == cntlid && c.hostNqn().equals(hostNqn)) {
                return c.subsystem().nqn();
            }
        }
        throw new AssertionError("no controller " + cntlid + " for " + hostNqn);
    }

    static final class Queue {
        final CommandQueue queue;
        final FakeTransport transport;
        private final Arena arena = Arena.ofAuto();
        private int tag;

        Queue(CommandQueue queue, FakeTransport transport) {
            this.queue = queue;
            this.transport = transport;
        }

        /** Submits and returns the request; its completion may come later (held AER, asynchronous backend). */
        NvmeRequest submitAsync(Cmd cmd) {
            NvmeRequest r = new NvmeRequest(tag++);
            MemorySegment response = arena.allocate(16);
            response.fill((byte) 0xFF); // the core must write all 16 bytes
            MemorySegment sqe = arena.allocate(64);
            sqe.copyFrom(cmd.sqe);
            r.bind(sqe, response);
            if (queue.begin(r)) {
                switch (r.dataDirection()) {
                    case NvmeRequest.DIRECTION_HOST_TO_CONTROLLER -> {
                        MemorySegment d = arena.allocate(Math.max(1, cmd.sglLength), 4096);
                        if (cmd.hostData != null) {
                            MemorySegment.copy(cmd.hostData, 0, d, ValueLayout.JAVA_BYTE, 0, cmd.hostData.length);
                        }
                        r.data(d, cmd.sglLength);
                    }
                    case NvmeRequest.DIRECTION_CONTROLLER_TO_HOST -> {
                        MemorySegment d = arena.allocate(Math.max(1, cmd.sglLength), 4096);
                        d.fill((byte) 0xA5); // stale bytes the core must not leak
                        r.data(d, cmd.sglLength);
                    }
                    default -> {
                    }
                }
                queue.execute(r);
            }
            return r;
        }

        Completion submit(Cmd cmd) {
            NvmeRequest r = submitAsync(cmd);
            assertTrue(transport.completed.remove(r), "command did not complete synchronously");
            Completion c = Completion.of(r);
            assertEquals(cmd.cid(), c.cid());
            return c;
        }

        /**
         * Submits and expects a failure with exactly {@code status}, plus the More bit when the queue is bound to a
         * controller (every failure there is in the error log).
         */
        Completion expect(int status, Cmd cmd) {
            Completion c = submit(cmd);
            assertEquals(Status.describe(logged(status)), Status.describe(c.status()), () -> c.toString());
            return c;
        }

        /** The status field a failure carries on this queue: with M once the queue is bound to a controller. */
        int logged(int status) {
            return status != 0 && ((NvmeQueue) queue).controller() != null ? status | Status.MORE : status;
        }

        Completion completionOf(NvmeRequest r) {
            assertNotNull(r);
            assertTrue(transport.completed.remove(r), "not completed");
            return Completion.of(r);
        }

        boolean isCompleted(NvmeRequest r) {
            return transport.completed.contains(r);
        }
    }
}
