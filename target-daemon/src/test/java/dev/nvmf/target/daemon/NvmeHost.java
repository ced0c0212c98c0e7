package dev.nvmf.target.daemon;

import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.target.nvme.FabricsCommand;
import dev.nvmf.target.nvme.IdentifyNamespace;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.Opcodes;
import dev.nvmf.target.nvme.Properties;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.rdma.support.Capsules;
import dev.nvmf.target.rdma.support.Cqe;
import dev.nvmf.verbs.Access;
import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.initiator.ScriptedInitiator;

import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One NVMe/RDMA queue of a test host, at the NVMe level, on the verbs-level test host {@link ScriptedInitiator}
 * (reused, not copied): Fabrics Connect (Connect data by keyed SGL, as the Linux host does), Property Set, admin
 * and I/O commands with keyed or in-capsule data, responses by CID. For an automatic soft fabric and a target
 * running its own threads: waits poll the host with a bound.
 */
final class NvmeHost implements AutoCloseable {
    /** Dataset Management CDW11 bit 2, AD (NVM Command Set 1.0, 3.2.1). */
    static final int DSM_ATTRIBUTE_DEALLOCATE = 1 << 2;
    /** One Dataset Management range: context attributes, length, starting LBA. */
    static final int DSM_RANGE_BYTES = 16;
    static final int CC_ENABLE = Properties.CC_EN | (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);

    final ScriptedInitiator rdma;
    final String hostNqn;
    final byte[] hostId;
    final int qid;
    private int nextCid = 1;

    /** Connects the RDMA queue {@code qid} of {@code depth} entries; fails unless ESTABLISHED. */
    NvmeHost(RdmaProvider fabric, InetSocketAddress source, InetSocketAddress target, String hostNqn, int qid,
             int depth) {
        this.hostNqn = hostNqn;
        this.hostId = Arrays.copyOf(hostNqn.getBytes(StandardCharsets.UTF_8), 16);
        this.qid = qid;
        this.rdma = new ScriptedInitiator(fabric, Capsules.queueOptions(source, target, qid, depth, 16));
        assertEquals(ScriptedInitiator.State.CONNECTED, rdma.connect(20_000), () -> "CM: " + rdma.cmEvents());
    }

    static void await(BooleanSupplier condition, ScriptedInitiator h, String what) {
        await(condition, h, what, Duration.ofSeconds(20));
    }

    static void await(BooleanSupplier condition, ScriptedInitiator h, String what, Duration bound) {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!condition.getAsBoolean()) {
            if (h != null) {
                h.doWork();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.onSpinWait();
        }
    }

    /** A fresh command capsule in the next send slot: opcode, a new CID, NSID 0, a zero-length keyed SGL. */
    MemorySegment command(int opcode) {
        int cid = nextCid++;
        MemorySegment c = Capsules.command(opcode, cid, 0);
        Le.u32(c, 4, 0); // Capsules puts NSID 1 there; commands here set what they need
        return c;
    }

    static int cid(MemorySegment capsule) {
        return Le.u16(capsule, 2);
    }

    /** Sends a capsule without in-capsule data and waits for its response; returns the status (SC|SCT<<8|DNR). */
    int execute(MemorySegment capsule) {
        return execute(capsule, 0);
    }

    int execute(MemorySegment capsule, int inCapsuleBytes) {
        int cid = cid(capsule);
        assertEquals(0, Capsules.send(rdma, capsule, inCapsuleBytes), "post send");
        return awaitResponse(cid).status();
    }

    Cqe awaitResponse(int cid) {
        return awaitResponse(cid, Duration.ofSeconds(20));
    }

    Cqe awaitResponse(int cid, Duration bound) {
        await(() -> Cqe.find(rdma, cid) != null, rdma, "response to cid " + cid + " on qid " + qid, bound);
        return Cqe.take(rdma, cid);
    }

    /** Waits for the response to {@code cid} and returns its DW0 (an AER's event), failing unless it succeeded. */
    int awaitResponseDw0(int cid, Duration bound) {
        await(() -> Cqe.find(rdma, cid) != null, rdma, "response to cid " + cid + " on qid " + qid, bound);
        ScriptedInitiator.Response r = rdma.pollResponse(x -> Cqe.of(x).cid() == cid);
        assertEquals(0, Cqe.of(r).status(), () -> "status of cid " + cid + ": " + Status.describe(Cqe.of(r).status()));
        return new CompletionQueueEntry().wrap(MemorySegment.ofArray(r.data())).dw0();
    }

    /** Fabrics Connect for this queue (cntlid FFFFh on the admin queue); returns the status. */
    int connect(String subnqn, int cntlid, int sqsize, int katoMillis) {
        MemorySegment c = command(Opcodes.FABRICS);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_CONNECT);
        Le.u16(c, FabricsCommand.CONNECT_RECFMT, 0);
        Le.u16(c, FabricsCommand.CONNECT_QID, qid);
        Le.u16(c, FabricsCommand.CONNECT_SQSIZE, sqsize);
        Le.u32(c, FabricsCommand.CONNECT_KATO, katoMillis);
        ScriptedInitiator.HostBuffer data = rdma.exposeBuffer(FabricsCommand.CONNECT_DATA_SIZE,
                Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE, ScriptedInitiator.HostKey.REGION);
        MemorySegment d = data.memory();
        d.fill((byte) 0);
        MemorySegment.copy(MemorySegment.ofArray(hostId), 0, d, FabricsCommand.DATA_HOSTID, 16);
        Le.u16(d, FabricsCommand.DATA_CNTLID, cntlid);
        Le.utf8NulPadded(d, FabricsCommand.DATA_SUBNQN, FabricsCommand.NQN_FIELD_LENGTH, subnqn);
        Le.utf8NulPadded(d, FabricsCommand.DATA_HOSTNQN, FabricsCommand.NQN_FIELD_LENGTH, hostNqn);
        Capsules.keyed(c, data.address(), FabricsCommand.CONNECT_DATA_SIZE, data.rkey(), false);
        return execute(c);
    }

    /** Connect, then CC.EN = 1 (what the Linux host does first on an admin queue). */
    void connectAdminAndEnable(String subnqn, int katoMillis) {
        assertEquals(0, connect(subnqn, FabricsCommand.CNTLID_DYNAMIC, 31, katoMillis), "admin Connect");
        MemorySegment c = command(Opcodes.FABRICS);
        Le.u8(c, FabricsCommand.FCTYPE, Opcodes.FCTYPE_PROPERTY_SET);
        Le.u8(c, FabricsCommand.PROPERTY_ATTRIB, 0);
        Le.u32(c, FabricsCommand.PROPERTY_OFFSET, Properties.CC);
        Le.u64(c, FabricsCommand.PROPERTY_VALUE, CC_ENABLE);
        assertEquals(0, execute(c), "Property Set CC.EN");
    }

    /** A command whose data comes back into a fresh registered buffer of {@code bytes}: returns [status, data]. */
    Object[] readInto(MemorySegment capsule, int bytes) {
        // A type-2 window the target may invalidate (SEND_WITH_INV), as the Linux host's keys are.
        ScriptedInitiator.HostBuffer buf = rdma.exposeBuffer(bytes);
        buf.memory().fill((byte) 0x5A);
        Capsules.keyed(capsule, buf.address(), bytes, buf.rkey(), true);
        int status = execute(capsule);
        return new Object[] {status, buf.memory()};
    }

    MemorySegment identify(int cns, int nsid) {
        MemorySegment c = command(Opcodes.ADMIN_IDENTIFY);
        Le.u32(c, 4, nsid);
        Le.u32(c, 40, cns);
        Object[] r = readInto(c, 4096);
        assertEquals(0, (int) r[0], () -> "Identify CNS " + cns + ": " + Status.describe((int) r[0]));
        return (MemorySegment) r[1];
    }

    /** Identify CNS 02h: the active NSIDs (a zero-terminated list). */
    int[] activeNamespaces() {
        MemorySegment list = identify(0x02, 0);
        int n = 0;
        while (n < 1024 && Le.u32(list, n * 4L) != 0) {
            n++;
        }
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = Le.u32(list, i * 4L);
        }
        return out;
    }

    int setFeature(int fid, int cdw11) {
        MemorySegment c = command(Opcodes.ADMIN_SET_FEATURES);
        Le.u32(c, 40, fid);
        Le.u32(c, 44, cdw11);
        return execute(c);
    }

    /** Sends an Asynchronous Event Request (held by the controller); returns its CID. */
    int sendAsyncEventRequest() {
        MemorySegment c = command(Opcodes.ADMIN_ASYNC_EVENT_REQUEST);
        int cid = cid(c);
        assertEquals(0, Capsules.send(rdma, c, 0));
        return cid;
    }

    /** Get Log Page of {@code bytes} (RAE clear), into a fresh buffer. */
    MemorySegment logPage(int lid, int bytes) {
        MemorySegment c = command(Opcodes.ADMIN_GET_LOG_PAGE);
        Le.u32(c, 4, 0xFFFFFFFF);
        int numd = bytes / 4 - 1;
        Le.u32(c, 40, lid | ((numd & 0xFFFF) << 16));
        Object[] r = readInto(c, bytes);
        assertEquals(0, (int) r[0], "Get Log Page " + lid);
        return (MemorySegment) r[1];
    }

    /** Write with in-capsule data. */
    int write(int nsid, long slba, byte[] data, int blockSize) {
        MemorySegment c = command(Opcodes.IO_WRITE);
        Le.u32(c, 4, nsid);
        Le.u64(c, 40, slba);
        Le.u32(c, 48, data.length / blockSize - 1);
        Capsules.inCapsule(c, 0, data.length);
        MemorySegment.copy(MemorySegment.ofArray(data), 0, c, 64, data.length);
        return execute(c, data.length);
    }

    /** Flush of one namespace; returns the status. */
    int flush(int nsid) {
        MemorySegment c = command(Opcodes.IO_FLUSH);
        Le.u32(c, 4, nsid);
        return execute(c);
    }

    /** Write Zeroes of {@code blocks} blocks at {@code slba}; returns the status. */
    int writeZeroes(int nsid, long slba, int blocks) {
        MemorySegment c = command(Opcodes.IO_WRITE_ZEROES);
        Le.u32(c, 4, nsid);
        Le.u64(c, 40, slba);
        Le.u32(c, 48, blocks - 1);
        return execute(c);
    }

    /** Dataset Management with the Deallocate attribute over one range, sent in the capsule; returns the status. */
    int deallocate(int nsid, long slba, int blocks) {
        MemorySegment c = command(Opcodes.IO_DATASET_MANAGEMENT);
        Le.u32(c, 4, nsid);
        Le.u32(c, 40, 0); // NR: one range (0's based)
        Le.u32(c, 44, DSM_ATTRIBUTE_DEALLOCATE);
        Capsules.inCapsule(c, 0, DSM_RANGE_BYTES);
        Le.u32(c, 64, 0);          // context attributes
        Le.u32(c, 64 + 4, blocks); // length in logical blocks
        Le.u64(c, 64 + 8, slba);   // starting LBA
        return execute(c, DSM_RANGE_BYTES);
    }

    /** Identify Namespace: NSZE, the size in logical blocks. */
    long namespaceSize(int nsid) {
        return Le.u64(identify(0x00, nsid), IdentifyNamespace.NSZE);
    }

    /** Read by keyed SGL: [status, data]. */
    Object[] read(int nsid, long slba, int bytes, int blockSize) {
        MemorySegment c = command(Opcodes.IO_READ);
        Le.u32(c, 4, nsid);
        Le.u64(c, 40, slba);
        Le.u32(c, 48, bytes / blockSize - 1);
        return readInto(c, bytes);
    }

    @Override
    public void close() {
        rdma.close();
    }
}
