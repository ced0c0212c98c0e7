package dev.nvmf.tests.lab;

/**
 * A tiny program the harness self-test runs inside the guest with {@code run_java} and the test class path:
 * proves that this build's classes (this module's and verbs-ffm's) and the JDK are reachable from the guest at
 * the host's paths, and that the program's output and exit status come back.
 */
public final class LabGuestProbe {
    private LabGuestProbe() {
    }

    public static void main(String[] args) throws Exception {
        // A class of the verbs-ffm module: the sibling module's build output is on the guest's class path too.
        Class<?> verbs = Class.forName("dev.nvmf.verbs.WcStatus");
        System.out.println("LAB-PROBE: java " + Runtime.version().feature() + " sees " + verbs.getName()
                + " arg=" + (args.length > 0 ? args[0] : ""));
        System.exit(args.length > 1 ? Integer.parseInt(args[1]) : 0);
    }
}
