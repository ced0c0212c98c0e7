package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every shell script of the repository parses ({@code bash -n}), without a VM (not tagged lab): a lab scenario is
 * otherwise read for the first time inside a guest, minutes into a boot, and a broken comment block in
 * perf-compare.sh once cost a whole boot that way.
 */
class ShellSyntaxTest {

    static List<Path> scripts() throws IOException {
        Path root = LabVm.repoRoot();
        List<Path> all = new ArrayList<>();
        for (String dir : new String[] {"tests/lab", "scripts"}) {
            try (Stream<Path> s = Files.walk(root.resolve(dir))) {
                s.filter(p -> p.toString().endsWith(".sh")).forEach(all::add);
            }
        }
        all.add(root.resolve("bin/nvmf-target"));
        all.add(root.resolve(".ci/run"));
        return all;
    }

    @Test
    void everyScriptParses() throws Exception {
        List<Path> scripts = scripts();
        assertTrue(scripts.size() > 20, "found only " + scripts);
        List<String> broken = new ArrayList<>();
        for (Path f : scripts) {
            Process p = new ProcessBuilder("bash", "-n", f.toString()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), f.toString());
            if (p.exitValue() != 0) {
                broken.add(f + ": " + out);
            }
        }
        assertEquals(List.of(), broken);
    }
}
