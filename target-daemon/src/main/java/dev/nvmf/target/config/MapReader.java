package dev.nvmf.target.config;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.NodeTuple;
import org.snakeyaml.engine.v2.nodes.ScalarNode;
import org.snakeyaml.engine.v2.nodes.SequenceNode;
import org.snakeyaml.engine.v2.nodes.Tag;

/**
 * Typed, positioned access to one YAML mapping. Every accessor reports a wrong type against the value's position
 * and key path and returns a fallback, so one pass finds every problem in a file.
 */
final class MapReader {
    private final Problems problems;
    private final Node node;
    private final String path;
    private final Map<String, NodeTuple> entries = new LinkedHashMap<>();
    private final Set<String> consumed = new java.util.HashSet<>();

    private MapReader(Problems problems, Node node, String path) {
        this.problems = problems;
        this.node = node;
        this.path = path;
        if (node instanceof MappingNode mapping) {
            for (NodeTuple tuple : mapping.getValue()) {
                Node key = tuple.getKeyNode();
                String name = key instanceof ScalarNode s ? s.getValue() : null;
                if (name == null) {
                    problems.error(key, path, "keys must be plain names, found " + describe(key));
                    continue;
                }
                NodeTuple first = entries.putIfAbsent(name, tuple);
                if (first != null) {
                    problems.error(key, join(path, name),
                            "duplicate key '" + name + "' (first at " + Problems.where(first.getKeyNode()) + ")");
                }
            }
        }
    }

    /** A reader over {@code node}, or null (after reporting) if it is not a mapping. */
    static MapReader of(Problems problems, Node node, String path) {
        if (!(node instanceof MappingNode)) {
            problems.error(node, path, "expected a mapping, found " + describe(node));
            return null;
        }
        return new MapReader(problems, node, path);
    }

    Node node() {
        return node;
    }

    String path() {
        return path;
    }

    String path(String key) {
        return join(path, key);
    }

    static String join(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    boolean has(String key) {
        NodeTuple t = entries.get(key);
        return t != null && !isNull(t.getValueNode());
    }

    /** The value node of {@code key} (marking it known), or null when absent or null-valued. */
    Node value(String key) {
        consumed.add(key);
        NodeTuple t = entries.get(key);
        return t == null || isNull(t.getValueNode()) ? null : t.getValueNode();
    }

    Node keyNode(String key) {
        NodeTuple t = entries.get(key);
        return t == null ? null : t.getKeyNode();
    }

    String string(String key, String fallback) {
        Node v = value(key);
        if (v == null) {
            return fallback;
        }
        if (v instanceof ScalarNode s && (s.getTag().equals(Tag.STR) || !s.isPlain())) {
            return s.getValue();
        }
        if (v instanceof ScalarNode s && (s.getTag().equals(Tag.INT) || s.getTag().equals(Tag.FLOAT))) {
            // A plain number where text is expected (serial: 1234) is what the operator meant.
            return s.getValue();
        }
        problems.error(v, path(key), "expected a string, found " + describe(v));
        return fallback;
    }

    String requiredString(String key) {
        if (!has(key)) {
            consumed.add(key);
            problems.error(node, path, "missing required key '" + key + "'");
            return null;
        }
        return string(key, null);
    }

    long integer(String key, long fallback, long min, long max) {
        Node v = value(key);
        if (v == null) {
            return fallback;
        }
        if (v instanceof ScalarNode s && s.isPlain() && s.getTag().equals(Tag.INT)) {
            try {
                long n = Long.decode(s.getValue().replace("0o", "0"));
                if (n < min || n > max) {
                    problems.error(v, path(key), "value " + s.getValue() + " is out of range, allowed " + min
                            + " to " + max);
                    return fallback;
                }
                return n;
            } catch (NumberFormatException e) {
                problems.error(v, path(key), "value " + s.getValue() + " is out of range, allowed " + min
                        + " to " + max);
                return fallback;
            }
        }
        problems.error(v, path(key), "expected an integer, found " + describe(v));
        return fallback;
    }

    boolean bool(String key, boolean fallback) {
        Node v = value(key);
        if (v == null) {
            return fallback;
        }
        if (v instanceof ScalarNode s && s.isPlain() && s.getTag().equals(Tag.BOOL)) {
            return Boolean.parseBoolean(s.getValue().toLowerCase(java.util.Locale.ROOT));
        }
        problems.error(v, path(key), "expected true or false, found " + describe(v));
        return fallback;
    }

    long integer(String key, long fallback, Limits.Range range) {
        return integer(key, fallback, range.min(), range.max());
    }

    /**
     * A byte size: an integer, or a string with a binary unit (8KiB, 1MiB, 64G), checked against {@code rule}; one
     * message says everything the rule requires (range in units, multiple or power of two, and why).
     */
    long size(String key, long fallback, Limits.SizeRule rule) {
        Node v = value(key);
        if (v == null) {
            return fallback;
        }
        if (v instanceof ScalarNode s && (s.getTag().equals(Tag.INT) || s.getTag().equals(Tag.STR))) {
            long n = Sizes.parse(s.getValue());
            if (n < 0) {
                problems.error(v, path(key), "expected a size such as 4096, 8KiB or 1GiB, found " + describe(v));
                return fallback;
            }
            String allowed = "allowed " + Sizes.format(rule.min()) + " to " + Sizes.format(rule.max())
                    + rule.constraint();
            if (n < rule.min() || n > rule.max()) {
                problems.error(v, path(key), "size " + s.getValue() + " is out of range, " + allowed);
                return fallback;
            }
            if (rule.powerOfTwo() && Long.bitCount(n) != 1) {
                problems.error(v, path(key), "size " + s.getValue() + " is not a power of two (" + rule.why()
                        + "), " + allowed);
                return fallback;
            }
            if (n % rule.multiple() != 0) {
                problems.error(v, path(key), "size " + s.getValue() + " is not a multiple of " + rule.multiple()
                        + " bytes (" + rule.why() + "), " + allowed);
                return fallback;
            }
            return n;
        }
        problems.error(v, path(key), "expected a size such as 4096, 8KiB or 1GiB, found " + describe(v));
        return fallback;
    }

    /** A duration with a unit (0, 200ns, 50us, 2ms, 1s), in nanoseconds, within {@code range}. */
    long duration(String key, long fallbackNanos, Limits.DurationRange range) {
        Node v = value(key);
        if (v == null) {
            return fallbackNanos;
        }
        if (v instanceof ScalarNode s && (s.getTag().equals(Tag.INT) || s.getTag().equals(Tag.STR))) {
            long n = Durations.parse(s.getValue());
            if (n < 0) {
                problems.error(v, path(key), "expected a duration with its unit such as 0, 10us, 2ms or 1s, found "
                        + describe(v));
                return fallbackNanos;
            }
            if (!range.contains(n)) {
                problems.error(v, path(key), "duration " + s.getValue() + " is out of range, allowed "
                        + Durations.format(range.minNanos()) + " to " + Durations.format(range.maxNanos()));
                return fallbackNanos;
            }
            return n;
        }
        problems.error(v, path(key), "expected a duration with its unit such as 0, 10us, 2ms or 1s, found "
                + describe(v));
        return fallbackNanos;
    }

    /** The items of a sequence (empty when absent or wrong). */
    List<Node> list(String key) {
        Node v = value(key);
        if (v == null) {
            return List.of();
        }
        if (v instanceof SequenceNode seq) {
            return seq.getValue();
        }
        problems.error(v, path(key), "expected a list, found " + describe(v));
        return List.of();
    }

    MapReader map(String key) {
        Node v = value(key);
        return v == null ? null : of(problems, v, path(key));
    }

    /** Reports every key not read so far, suggesting the nearest known key for typos. */
    void rejectUnknown() {
        for (var e : entries.entrySet()) {
            if (!consumed.contains(e.getKey())) {
                String hint = nearest(e.getKey(), consumed);
                problems.error(e.getValue().getKeyNode(), path(e.getKey()), "unknown key '" + e.getKey() + "'"
                        + (hint == null ? "" : " (did you mean '" + hint + "'?)")
                        + "; allowed here: " + String.join(", ", sorted(consumed)));
            }
        }
    }

    /** Keys present but not read, for lenient readers (the nvmetcli import) that warn instead. */
    List<String> unread() {
        List<String> out = new ArrayList<>();
        for (String k : entries.keySet()) {
            if (!consumed.contains(k)) {
                out.add(k);
            }
        }
        return out;
    }

    private static List<String> sorted(Set<String> keys) {
        List<String> l = new ArrayList<>(keys);
        l.sort(Comparator.naturalOrder());
        return l;
    }

    static boolean isNull(Node n) {
        return n instanceof ScalarNode s && s.isPlain() && s.getTag().equals(Tag.NULL);
    }

    static String describe(Node n) {
        if (n == null || isNull(n)) {
            return "nothing (null)";
        }
        if (n instanceof MappingNode) {
            return "a mapping";
        }
        if (n instanceof SequenceNode) {
            return "a list";
        }
        ScalarNode s = (ScalarNode) n;
        String kind;
        if (!s.isPlain() || s.getTag().equals(Tag.STR)) {
            kind = "string";
        } else if (s.getTag().equals(Tag.INT)) {
            kind = "integer";
        } else if (s.getTag().equals(Tag.BOOL)) {
            kind = "boolean";
        } else if (s.getTag().equals(Tag.FLOAT)) {
            kind = "number";
        } else {
            kind = "value";
        }
        return kind + " '" + s.getValue() + "'";
    }

    private static String nearest(String key, Set<String> known) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String k : known) {
            int d = distance(key, k);
            if (d < bestDistance) {
                bestDistance = d;
                best = k;
            }
        }
        return bestDistance <= Math.max(2, key.length() / 3) ? best : null;
    }

    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
