package dev.nvmf.verbs.soft;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Live objects of a fabric at one moment, like {@code rdma resource show}: what a test asserts is empty after
 * teardown. {@link #undrainedQpDestroys()} counts QPs destroyed while work was still outstanding or completions
 * of theirs were still unpolled (a teardown that skipped the drain).
 */
public record SoftResources(Map<Kind, Integer> counts, List<String> live, int undrainedQpDestroys) {
    public enum Kind { CONTEXT, PD, MR, MW, COMP_CHANNEL, CQ, SRQ, QP, EVENT_CHANNEL, CM_ID }

    public int count(Kind kind) { return counts.getOrDefault(kind, 0); }

    public int qps() { return count(Kind.QP); }

    public int mrs() { return count(Kind.MR); }

    public int mws() { return count(Kind.MW); }

    public int cqs() { return count(Kind.CQ); }

    public int cmIds() { return count(Kind.CM_ID); }

    public int pds() { return count(Kind.PD); }

    /** True when no QP, MR, MW, CQ, PD, completion channel, opened context or CM id is alive. */
    public boolean nothingLeaked() {
        for (Kind k : Kind.values()) {
            if (k != Kind.EVENT_CHANNEL && count(k) != 0) return false;
        }
        return true;
    }

    @Override
    public String toString() { return counts + " " + live; }

    static final class Tracker {
        private final Map<Kind, Map<Object, String>> live = new EnumMap<>(Kind.class);
        int undrainedQpDestroys;

        void add(Kind kind, Object o, String description) {
            live.computeIfAbsent(kind, k -> new IdentityHashMap<>()).put(o, description);
        }

        void remove(Kind kind, Object o) {
            Map<Object, String> m = live.get(kind);
            if (m != null) m.remove(o);
        }

        SoftResources snapshot() {
            Map<Kind, Integer> counts = new EnumMap<>(Kind.class);
            List<String> names = new ArrayList<>();
            for (Map.Entry<Kind, Map<Object, String>> e : live.entrySet()) {
                counts.put(e.getKey(), e.getValue().size());
                for (String d : e.getValue().values()) names.add(e.getKey().name().toLowerCase() + " " + d);
            }
            for (Kind k : Kind.values()) counts.putIfAbsent(k, 0);
            return new SoftResources(Map.copyOf(counts), List.copyOf(names), undrainedQpDestroys);
        }
    }
}
