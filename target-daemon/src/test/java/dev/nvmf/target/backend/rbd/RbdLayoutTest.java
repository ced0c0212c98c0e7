package dev.nvmf.target.backend.rbd;

import dev.nvmf.verbs.Errno;
import dev.nvmf.verbs.ffm.CExpr;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Compiles a C program against the installed librbd/librados headers (Debian: librbd-dev, librados-dev) and libc's
 * errno.h, runs it, and compares every constant of {@link RbdLayout} (each names its C expression with
 * {@link CExpr}; one without fails too) and every errno of {@link Errno}, which the RBD backend reports and
 * {@link RbdOpenException} names. Outside CI the test is skipped when the headers are missing; with
 * {@code CI=true} it fails.
 */
class RbdLayoutTest {
    private static final List<String> HEADERS = List.of("/usr/include/rbd/librbd.h", "/usr/include/rados/librados.h");

    private final Map<String, String> expected = new LinkedHashMap<>();
    private final Map<String, Long> javaValues = new LinkedHashMap<>();
    private final List<String> unmapped = new ArrayList<>();

    @Test
    void everyConstantMatchesTheInstalledHeaders(@TempDir Path dir) throws Exception {
        for (String h : HEADERS) {
            if (!Files.exists(Path.of(h))) {
                String why = h + " is missing: the Ceph client headers are not installed (scripts/setup.sh; Debian: "
                        + "apt-get install --no-install-recommends librbd-dev librados-dev)";
                if ("true".equals(System.getenv("CI"))) {
                    fail(why);
                }
                Assumptions.abort(why);
            }
        }
        for (Field f : RbdLayout.class.getDeclaredFields()) {
            if (!isConstant(f)) {
                continue;
            }
            CExpr expr = f.getAnnotation(CExpr.class);
            if (expr == null) {
                unmapped.add("RbdLayout." + f.getName());
                continue;
            }
            put("RbdLayout." + f.getName(), expr.value(), ((Number) f.get(null)).longValue());
        }
        for (Field f : Errno.class.getDeclaredFields()) {
            if (isConstant(f)) {
                put("Errno." + f.getName(), f.getName(), ((Number) f.get(null)).longValue());
            }
        }
        assertTrue(unmapped.isEmpty(), "constants without a C expression to check them against: " + unmapped);

        Map<String, Long> c = runProbe(dir);
        List<String> drift = new ArrayList<>();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            Long native_ = c.get(e.getKey());
            if (native_ == null) {
                drift.add(e.getKey() + ": probe printed nothing");
            } else if (native_.longValue() != javaValues.get(e.getKey())) {
                drift.add(e.getKey() + " = " + javaValues.get(e.getKey()) + " but " + e.getValue() + " = " + native_);
            }
        }
        assertTrue(drift.isEmpty(), "drift against the installed headers:\n  " + String.join("\n  ", drift));
        assertTrue(expected.size() > 40, "suspiciously few constants checked: " + expected.size());
    }

    private static boolean isConstant(Field f) {
        int m = f.getModifiers();
        return Modifier.isStatic(m) && Modifier.isFinal(m) && Modifier.isPublic(m)
                && (f.getType() == int.class || f.getType() == long.class);
    }

    private void put(String key, String expr, long value) {
        expected.put(key, expr);
        javaValues.put(key, value);
    }

    private Map<String, Long> runProbe(Path dir) throws IOException, InterruptedException {
        StringBuilder src = new StringBuilder("""
                #include <stdio.h>
                #include <stddef.h>
                #include <stdint.h>
                #include <errno.h>
                #include <rados/librados.h>
                #include <rbd/librbd.h>
                int main(void) {
                """);
        for (Map.Entry<String, String> e : expected.entrySet()) {
            src.append("    printf(\"%s %lld\\n\", \"").append(e.getKey()).append("\", (long long)(")
                    .append(e.getValue()).append("));\n");
        }
        src.append("    return 0;\n}\n");
        Path c = dir.resolve("rbd_layout_probe.c");
        Path exe = dir.resolve("rbd_layout_probe");
        Files.writeString(c, src);
        // Headers only: the probe links nothing from librbd, so the runtime libraries are not needed here.
        String out = exec(dir, "gcc", "-std=gnu11", "-Wall", "-o", exe.toString(), c.toString());
        String printed = exec(dir, exe.toString());
        Map<String, Long> values = new LinkedHashMap<>();
        for (String line : printed.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int sp = line.lastIndexOf(' ');
            values.put(line.substring(0, sp), Long.parseLong(line.substring(sp + 1).trim()));
        }
        assertEquals(expected.size(), values.size(), "probe output lines (compiler said: " + out + ")");
        return values;
    }

    private static String exec(Path dir, String... cmd) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new AssertionError(cmd[0] + " cannot run (" + e.getMessage() + "): the layout check needs gcc "
                    + "and the Ceph client headers; run scripts/setup.sh", e);
        }
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(String.join(" ", cmd) + " timed out");
        }
        String text = new String(out, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            fail(String.join(" ", cmd) + " failed (" + p.exitValue() + "):\n" + text);
        }
        return text;
    }
}
