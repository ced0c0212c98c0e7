package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Java verbs conformance scenario ({@code dev.nvmf.verbs.selftest.VerbsScenario}) against real rdma_rxe
 * devices in the lab guest, on this build's classes. It prints {@code VERBS-SCENARIO: PASS} on success.
 */
@Tag("lab")
class VerbsScenarioLabTest {
    static final String MAIN_CLASS = "dev.nvmf.verbs.selftest.VerbsScenario";

    @Test
    void verbsScenarioPassesOnSoftRoce() {
        assertTrue(onClassPath(MAIN_CLASS), MAIN_CLASS + " is not on the test class path: the verbs scenario"
                + " has not been built (verbs-ffm/src/main/java/dev/nvmf/verbs/selftest/)");
        LabRun r = LabVm.run("verbs-scenario.sh", Map.of("VERBS_MAIN", MAIN_CLASS), Duration.ofMinutes(8));
        String log = r.log("verbs-scenario").orElse("");
        assertTrue(log.lines().anyMatch(l -> l.strip().equals("VERBS-SCENARIO: PASS")), r::describe);
        assertEquals("1", r.results().get("verbs_pass"), r::describe);
        System.out.printf("lab: verbs scenario passed; Java run %s s, VM wall %s s%n",
                r.results().get("verbs_java_s"), r.results().get("host_vm_wall_s"));
    }

    static boolean onClassPath(String name) {
        try {
            Class.forName(name, false, VerbsScenarioLabTest.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
