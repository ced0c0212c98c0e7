package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;

/**
 * A lab run of a scenario made of parts (tests/lab/guest/lib.sh, {@code lab_run_parts}): one boot, several faults,
 * each reported as {@code PART_ok=1} or {@code PART_failed=REASON}. A test class boots once and judges each part in
 * its own test, so one failing part does not hide the others' results.
 */
final class LabParts {
    private final LabRun run;

    /** Prints the whole diagnosis once when any part failed (the parts' tests then name the reason and the folder). */
    LabParts(LabRun run) {
        this.run = run;
        if (!run.succeeded()) {
            System.out.println(run.describe());
        }
    }

    LabRun run() { return run; }

    Map<String, String> results() { return run.results(); }

    String result(String key) { return run.results().getOrDefault(key, "?"); }

    /** Fails unless the part held; the message is the part's reason and where the run's logs are. */
    void assertPart(String part) {
        Map<String, String> res = run.results();
        assertEquals("1", res.get(part + "_ok"), () -> "lab part " + part + " of " + run.scenario() + " failed: "
                + res.getOrDefault(part + "_failed", "(no result: the scenario ended before this part)")
                + "\n  results: " + res + "\n  logs (console, daemon log, dmesg, rdma resources): " + run.outDir()
                + "\n  " + run.verdict());
    }
}
