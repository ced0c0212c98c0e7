package dev.nvmf.tests.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How tests/lab/hw.sh chooses the RDMA device and the addresses, and what it says when it cannot, without a VM or an
 * RDMA device (not tagged lab): a fake sysfs ({@code HW_SYSFS}) with devices whose port 1 is or is not ACTIVE and
 * whose GID table names {@code lo} as their interface (127.0.0.1 stands for the NIC's address). Each refusal is exit
 * 77 with a reason that names the device, the address or what is missing. Past the choice the script needs root,
 * kernel modules and tools this build machine may lack: those steps are covered in the guest (HwRunnerLabTest).
 */
class HwRunnerCheckTest {
    @TempDir
    Path sysfs;

    record Result(int status, String output) {}

    Result check(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", LabVm.repoRoot().resolve("tests/lab/hw.sh").toString(),
                "check"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("HW_SYSFS", sysfs.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), out);
        return new Result(p.exitValue(), out);
    }

    void device(String name, String state, String netdev) throws IOException {
        Path port = Files.createDirectories(sysfs.resolve("class/infiniband/" + name + "/ports/1/gid_attrs/ndevs"));
        Files.writeString(port.getParent().getParent().resolve("state"), state + "\n");
        Files.writeString(port.resolve("0"), netdev + "\n");
    }

    static boolean root() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("id", "-u").start();
        String uid = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor();
        return uid.equals("0");
    }

    @Test
    void refusesWithoutRootOrWithoutAnyDevice() throws Exception {
        Result r = check();
        assertEquals(77, r.status(), r.output());
        assertTrue(r.output().contains(root() ? "hw: cannot run here: no RDMA device: " + sysfs + "/class/infiniband"
                + " is empty or missing" : "hw: cannot run here: not root"), r.output());
    }

    @Test
    void choosesTheFirstActiveDeviceWithAnAddressAndNamesWhatItUses() throws Exception {
        assumeTrue(root(), "hw.sh checks for root first");
        device("dev0", "1: DOWN", "lo");
        device("dev1", "4: ACTIVE", "lo");
        Result r = check();
        // Whatever comes next on this machine (modules, tools), the choice is said first.
        assertTrue(r.output().contains("hw: device dev1 (lo), targets on 127.0.0.1, host from 127.0.0.1 (dev1):"
                + " loopback through the NIC"), r.output());
    }

    @Test
    void namesTheDeviceTheAddressOrThePortThatIsWrong() throws Exception {
        assumeTrue(root(), "hw.sh checks for root first");
        device("dev0", "1: DOWN", "lo");
        Result none = check();
        assertEquals(77, none.status(), none.output());
        assertTrue(none.output().contains("no RDMA device with an ACTIVE port 1 whose interface has an IPv4 address"
                + " (devices: dev0)"), none.output());
        Result down = check("--device", "dev0");
        assertEquals(77, down.status(), down.output());
        assertTrue(down.output().contains("port 1 of dev0 is not ACTIVE (1: DOWN)"), down.output());
        Result unknown = check("--device", "mlx5_0");
        assertEquals(77, unknown.status(), unknown.output());
        assertTrue(unknown.output().contains("no RDMA device mlx5_0 (devices: dev0)"), unknown.output());

        device("dev1", "4: ACTIVE", "lo");
        Result wrongAddr = check("--device", "dev1", "--addr", "192.0.2.7");
        assertEquals(77, wrongAddr.status(), wrongAddr.output());
        assertTrue(wrongAddr.output().contains("192.0.2.7 is not an address of lo (the interface of dev1)"),
                wrongAddr.output());
        Result noDevForAddr = check("--addr", "192.0.2.7");
        assertEquals(77, noDevForAddr.status(), noDevForAddr.output());
        assertTrue(noDevForAddr.output().contains("no RDMA device with an ACTIVE port has an interface with address 192.0.2.7"),
                noDevForAddr.output());
        Result wrongHost = check("--host-addr", "192.0.2.8");
        assertEquals(77, wrongHost.status(), wrongHost.output());
        assertTrue(wrongHost.output().contains("--host-addr 192.0.2.8 is not an address of an RDMA device's"
                + " interface with an ACTIVE port"), wrongHost.output());
    }
}
