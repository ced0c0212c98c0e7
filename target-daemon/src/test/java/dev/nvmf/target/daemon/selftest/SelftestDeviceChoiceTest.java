package dev.nvmf.target.daemon.selftest;

import dev.nvmf.verbs.DeviceInfo;
import dev.nvmf.verbs.PortAttributes;
import dev.nvmf.verbs.soft.SoftFabric;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Which device and address the selftest runs on, from what ibv_query_port/ibv_query_gid report. */
class SelftestDeviceChoiceTest {
    static DeviceInfo device(String name, int state, String... gids) {
        return new DeviceInfo(name, 1, SoftFabric.defaultAttributes(),
                List.of(new PortAttributes(1, state, 5, 3, 2, List.of(gids))));
    }

    @Test
    void roceGidsGiveTheIpv4AddressFirstThenGlobalIpv6AndNeverLinkLocal() throws Exception {
        // As the ffm provider formats them (RFC 5952): RoCE v1 and v2 entries for each address, a link-local GID.
        DeviceInfo d = device("mlx5_0", 4, "fe80::5054:ff:fe12:3456", "fe80::5054:ff:fe12:3456", "::ffff:a4d:1",
                "::ffff:a4d:1", "2001:db8::5");
        assertEquals(List.of(InetAddress.ofLiteral("10.77.0.1"), InetAddress.ofLiteral("2001:db8::5")),
                Selftest.addresses(d));
    }

    @Test
    void anInfinibandPortHasNoAddressInItsGids() {
        assertEquals(List.of(), Selftest.addresses(device("mlx5_1", 4, "fe80::248a:703:49:d4f0")));
    }

    @Test
    void withoutANameTheFirstDeviceWithAnActivePortIsChosen() {
        List<DeviceInfo> devices = List.of(device("mlx5_0", 1, "::ffff:a00:1"), device("mlx5_1", 4, "::ffff:a00:2"));
        assertEquals("mlx5_1", Selftest.choose(devices, null).name());
        assertEquals("mlx5_0", Selftest.choose(devices, "mlx5_0").name(), "a named device even with its port down");
        assertNull(Selftest.choose(devices, "rxe0"));
        assertNull(Selftest.choose(List.of(device("mlx5_0", 1)), null));
    }
}
