package dev.nvmf.target.rdma.support;

import dev.nvmf.target.nvme.CompletionQueueEntry;
import dev.nvmf.verbs.initiator.ScriptedInitiator;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * A response capsule as a test host received it, read through the {@code nvme} CQE flyweight: status in
 * {@link dev.nvmf.target.nvme.Status} form, and whether its SEND invalidated an rkey.
 */
public record Cqe(int cid, int status, int sqhd, int sqid, boolean withInvalidate, int invalidatedRkey) {
    public static Cqe of(ScriptedInitiator.Response r) {
        CompletionQueueEntry e = new CompletionQueueEntry().wrap(MemorySegment.ofArray(r.data()));
        return new Cqe(e.cid(), e.status(), e.sqhd(), e.sqid(), r.withInvalidate(), r.invalidatedRkey());
    }

    /** Every response {@code host} received and has not taken, in arrival order. */
    public static List<Cqe> received(ScriptedInitiator host) {
        List<Cqe> out = new ArrayList<>();
        for (ScriptedInitiator.Response r : host.responses()) out.add(of(r));
        return out;
    }

    /** The CIDs of {@link #received}, in arrival order. */
    public static List<Integer> cids(ScriptedInitiator host) {
        List<Integer> out = new ArrayList<>();
        for (Cqe c : received(host)) out.add(c.cid());
        return out;
    }

    /** The response to {@code cid} among those received and not taken, or null. */
    public static Cqe find(ScriptedInitiator host, int cid) {
        for (Cqe c : received(host)) if (c.cid() == cid) return c;
        return null;
    }

    /** Takes the response to {@code cid} from those received, or null. */
    public static Cqe take(ScriptedInitiator host, int cid) {
        ScriptedInitiator.Response r = host.pollResponse(x -> of(x).cid() == cid);
        return r == null ? null : of(r);
    }
}
