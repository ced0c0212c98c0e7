package dev.nvmf.target.core;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.spi.ToolProvider;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The core's class dependencies, read from the compiled classes with jdeps: the target is the root of the core and
 * nothing else in it knows the target; the command sets (admin, fabrics, discovery, io) are leaves that only the
 * target builds; and neither the target nor a command set lies on a dependency cycle. (Before issue 9 the target
 * was every handler's locator, and it and the handlers formed one import circle with the queue and the context.)
 */
class CoreDependenciesTest {
    private static final String CORE = "dev.nvmf.target.core.";
    private static final String TARGET = CORE + "NvmeTarget";
    private static final List<String> COMMAND_SETS =
            List.of(CORE + "admin.", CORE + "fabrics.", CORE + "discovery.", CORE + "io.");
    /** a -> b between two classes of the core (nested classes count as their top-level class). */
    private static final Pattern EDGE = Pattern.compile("^\\s*(\\S+)\\s+->\\s+(\\S+)\\s");

    /** Every core class and the core classes it depends on. */
    private static Map<String, Set<String>> graph;

    @BeforeAll
    static void readDependencies() throws Exception {
        Path classes = Path.of(NvmeTarget.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ToolProvider jdeps = ToolProvider.findFirst("jdeps")
                .orElseThrow(() -> new AssertionError("jdeps is not in this JDK (module jdk.jdeps)"));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = jdeps.run(new PrintWriter(out), new PrintWriter(err), "-verbose:class", "-filter:none",
                classes.toString());
        assertEquals(0, rc, () -> "jdeps failed: " + err);
        graph = new TreeMap<>();
        for (String line : out.toString().split("\n")) {
            Matcher m = EDGE.matcher(line);
            if (!m.find()) {
                continue;
            }
            String from = topLevel(m.group(1));
            String to = topLevel(m.group(2));
            if (from.startsWith(CORE)) {
                Set<String> deps = graph.computeIfAbsent(from, k -> new TreeSet<>());
                if (to.startsWith(CORE) && !to.equals(from)) {
                    deps.add(to);
                }
            }
        }
        assertTrue(graph.containsKey(TARGET) && graph.size() > 30, () -> "jdeps saw the core classes: " + graph.keySet());
    }

    @Test
    void nothingInTheCoreDependsOnTheTarget() {
        List<String> users = new ArrayList<>();
        graph.forEach((from, deps) -> {
            if (deps.contains(TARGET)) {
                users.add(from);
            }
        });
        assertEquals(List.of(), users, "classes that use NvmeTarget as a locator");
    }

    @Test
    void commandSetsAreLeavesThatOnlyTheTargetBuilds() {
        List<String> users = new ArrayList<>();
        graph.forEach((from, deps) -> {
            if (from.equals(TARGET) || isCommandSet(from)) {
                return;
            }
            for (String to : deps) {
                if (isCommandSet(to)) {
                    users.add(from + " -> " + to);
                }
            }
        });
        assertEquals(List.of(), users, "core classes outside the command sets that know a command set");
    }

    @Test
    void neitherTheTargetNorACommandSetIsOnACycle() {
        List<Set<String>> cycles = cycles();
        for (Set<String> cycle : cycles) {
            assertFalse(cycle.contains(TARGET), () -> "NvmeTarget is on the cycle " + cycle);
            for (String c : cycle) {
                assertFalse(isCommandSet(c), () -> c + " is on the cycle " + cycle);
            }
        }
    }

    private static boolean isCommandSet(String className) {
        for (String p : COMMAND_SETS) {
            if (className.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    private static String topLevel(String className) {
        int nested = className.indexOf('$');
        return nested < 0 ? className : className.substring(0, nested);
    }

    /** The strongly connected components of more than one class (Tarjan's algorithm, iterative). */
    private static List<Set<String>> cycles() {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<Set<String>> result = new ArrayList<>();
        int[] next = {0};
        for (String root : graph.keySet()) {
            if (index.containsKey(root)) {
                continue;
            }
            Deque<Object[]> work = new ArrayDeque<>(); // {node, iterator over its successors}
            visit(root, index, low, stack, onStack, next);
            work.push(new Object[] {root, successors(root).iterator()});
            while (!work.isEmpty()) {
                Object[] frame = work.peek();
                String v = (String) frame[0];
                @SuppressWarnings("unchecked")
                java.util.Iterator<String> it = (java.util.Iterator<String>) frame[1];
                if (it.hasNext()) {
                    String w = it.next();
                    if (!index.containsKey(w)) {
                        visit(w, index, low, stack, onStack, next);
                        work.push(new Object[] {w, successors(w).iterator()});
                    } else if (onStack.contains(w)) {
                        low.put(v, Math.min(low.get(v), index.get(w)));
                    }
                    continue;
                }
                work.pop();
                if (!work.isEmpty()) {
                    String parent = (String) work.peek()[0];
                    low.put(parent, Math.min(low.get(parent), low.get(v)));
                }
                if (low.get(v).equals(index.get(v))) {
                    Set<String> component = new TreeSet<>();
                    String w;
                    do {
                        w = stack.pop();
                        onStack.remove(w);
                        component.add(w);
                    } while (!w.equals(v));
                    if (component.size() > 1) {
                        result.add(component);
                    }
                }
            }
        }
        return result;
    }

    private static void visit(String v, Map<String, Integer> index, Map<String, Integer> low, Deque<String> stack,
                              Set<String> onStack, int[] next) {
        index.put(v, next[0]);
        low.put(v, next[0]);
        next[0]++;
        stack.push(v);
        onStack.add(v);
    }

    private static Set<String> successors(String v) {
        return graph.getOrDefault(v, Set.of());
    }
}
