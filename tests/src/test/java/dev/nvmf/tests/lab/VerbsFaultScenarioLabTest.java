package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The verbs fault scenario ({@code dev.nvmf.tests.verbs.VerbsFaultScenario}) with the FFM provider on rxe in the lab
 * guest: posting and polling, bad_wr, error completions and flushes, posts after the error transition, hot-remove
 * and return of rxe0, a port event. Prints the provider facts it observed (what rxe does) as results.
 */
@Tag("lab")
class VerbsFaultScenarioLabTest {

    @Test
    void ffmProviderPostsPollsAndSurvivesHotRemoveOnSoftRoce() {
        LabRun r = LabVm.run("verbs-faults.sh", Map.of(), Duration.ofMinutes(9));
        String log = r.log("verbs-faults").orElse("");
        assertTrue(log.lines().anyMatch(l -> l.strip().equals("VERBS-FAULTS: PASS")), r::describe);
        Map<String, String> results = r.results();
        assertEquals("1", results.get("faults_pass"), r::describe);
        assertEquals("true", results.get("fault_removal_finished_after_teardown"), r::describe);
        assertEquals("2", results.get("rxe_links_after"), "rxe0 and rxe1 both there at the end\n" + r.describe());
        System.out.println("lab: verbs fault scenario passed; Java run " + results.get("faults_java_s")
                + " s, VM wall " + results.get("host_vm_wall_s") + " s");
        results.forEach((k, v) -> {
            if (k.startsWith("fault_")) System.out.println("  " + k + " = " + v);
        });
    }
}
