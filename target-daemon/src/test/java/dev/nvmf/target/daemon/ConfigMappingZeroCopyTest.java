package dev.nvmf.target.daemon;

import dev.nvmf.target.config.ConfigLoader;
import dev.nvmf.target.config.TargetConfig;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code transport.zero_copy} reaches the RDMA transport's configuration, and is on without it. */
class ConfigMappingZeroCopyTest {
    private static final String YAML = """
            subsystems:
              - nqn: nqn.2024-01.dev.nvmf:zc
                allow_any_host: true
                namespaces:
                  - nsid: 1
                    ram_size: 16MiB
            ports:
              - traddr: 192.168.1.10
                subsystems: [nqn.2024-01.dev.nvmf:zc]
            """;

    private static TargetConfig parse(String yaml) throws Exception {
        return ConfigLoader.parse(yaml, "t.yaml", ConfigLoader.Options.NO_DEVICE_CHECK).config();
    }

    @Test
    void zeroCopyReachesTheTransport() throws Exception {
        assertTrue(ConfigMapping.transport(parse(YAML), true).zeroCopyRam());
        assertFalse(ConfigMapping.transport(parse(YAML + "transport:\n  zero_copy: false\n"), true).zeroCopyRam());
    }
}
