package dev.nvmf.tests.verbs;

import dev.nvmf.verbs.RdmaProvider;
import dev.nvmf.verbs.soft.SoftFabric;
import dev.nvmf.verbs.selftest.VerbsScenario;
import dev.nvmf.verbs.soft.SoftResources;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The provider-neutral verbs scenario, unchanged, on the soft provider in automatic mode. */
class SoftVerbsScenarioTest {

    @Test
    void scenarioPassesOnTheSoftFabricAndReleasesEverything() {
        try (SoftFabric fabric = SoftFabric.automatic()) {
            fabric.addDevice("soft0", "10.77.0.1");
            fabric.addDevice("soft1", "10.77.0.2");
            VerbsScenario.Result r = VerbsScenario.run(fabric, new VerbsScenario.Config(
                    new InetSocketAddress("10.77.0.1", 4791), new InetSocketAddress("10.77.0.2", 0), 10_000));
            assertTrue(r.complete(), r.summary() + "\n" + String.join("\n", r.lines()));
            SoftResources left = fabric.resources();
            assertTrue(left.nothingLeaked(), "leaked: " + left);
            assertEquals(0, left.undrainedQpDestroys(), "a QP was destroyed before its drain");
        }
    }

    @Test
    void scenarioPassesOnTheReflectivelyCreatedProvider() {
        // What `VerbsScenario soft 10.77.0.1 10.77.0.2 4791` does: the no-argument fabric has the lab's two devices.
        try (RdmaProvider provider = VerbsScenario.provider("soft")) {
            VerbsScenario.Result r = VerbsScenario.run(provider, new VerbsScenario.Config(
                    new InetSocketAddress("10.77.0.1", 4791), new InetSocketAddress("10.77.0.2", 0), 10_000));
            assertTrue(r.complete(), r.summary());
        }
    }
}
