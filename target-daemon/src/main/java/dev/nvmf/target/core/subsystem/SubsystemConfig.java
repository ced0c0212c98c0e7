package dev.nvmf.target.core.subsystem;

import java.util.Objects;

/**
 * What identifies an NVM subsystem (kernel: {@code struct nvmet_subsys} attributes in configfs).
 *
 * @param nqn          the subsystem NQN (at most 223 bytes of UTF-8, NVMe Base 2.0 4.5)
 * @param serialNumber SN, at most 20 ASCII characters
 * @param modelNumber  MN, at most 40 ASCII characters
 * @param firmware     FR, at most 8 ASCII characters
 * @param allowAnyHost every host may connect; otherwise only the allowed host NQNs
 * @param minCntlid    lowest controller id handed out (1..0xFFEF)
 * @param maxCntlid    highest controller id handed out (minCntlid..0xFFEF)
 * @param maxIoQueues  I/O queues a controller may have (Number of Queues feature caps here)
 */
public record SubsystemConfig(String nqn, String serialNumber, String modelNumber, String firmware,
                              boolean allowAnyHost, int minCntlid, int maxCntlid, int maxIoQueues) {
    public static final int MIN_CNTLID = 1;
    /** 0xFFF0..0xFFFF are reserved (0xFFFF: dynamic model in Connect, 0xFFFE: static). */
    public static final int MAX_CNTLID = 0xFFEF;
    public static final int DEFAULT_MAX_IO_QUEUES = 128;
    public static final int NQN_MAX_BYTES = 223;

    public SubsystemConfig {
        Objects.requireNonNull(nqn, "nqn");
        Objects.requireNonNull(serialNumber, "serialNumber");
        Objects.requireNonNull(modelNumber, "modelNumber");
        Objects.requireNonNull(firmware, "firmware");
        if (nqn.isEmpty() || nqn.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > NQN_MAX_BYTES) {
            throw new IllegalArgumentException("NQN must be 1.." + NQN_MAX_BYTES + " bytes: " + nqn);
        }
        checkAscii("serial number", serialNumber, 20);
        checkAscii("model number", modelNumber, 40);
        checkAscii("firmware revision", firmware, 8);
        if (minCntlid < MIN_CNTLID || maxCntlid > MAX_CNTLID || minCntlid > maxCntlid) {
            throw new IllegalArgumentException("controller id range must lie in 1..0xFFEF: " + minCntlid + ".."
                    + maxCntlid);
        }
        if (maxIoQueues < 1 || maxIoQueues > 65535) {
            throw new IllegalArgumentException("max I/O queues must be 1..65535: " + maxIoQueues);
        }
    }

    /** A subsystem with the kernel target's defaults: model "Linux"-like text, firmware from the product. */
    public static SubsystemConfig of(String nqn, String serialNumber) {
        return new SubsystemConfig(nqn, serialNumber, "nvmf-target", "0.1.0", false, MIN_CNTLID, MAX_CNTLID,
                DEFAULT_MAX_IO_QUEUES);
    }

    public SubsystemConfig withAllowAnyHost(boolean allow) {
        return new SubsystemConfig(nqn, serialNumber, modelNumber, firmware, allow, minCntlid, maxCntlid, maxIoQueues);
    }

    public SubsystemConfig withCntlidRange(int min, int max) {
        return new SubsystemConfig(nqn, serialNumber, modelNumber, firmware, allowAnyHost, min, max, maxIoQueues);
    }

    public SubsystemConfig withMaxIoQueues(int queues) {
        return new SubsystemConfig(nqn, serialNumber, modelNumber, firmware, allowAnyHost, minCntlid, maxCntlid, queues);
    }

    private static void checkAscii(String what, String value, int max) {
        if (value.length() > max) {
            throw new IllegalArgumentException(what + " longer than " + max + " characters: " + value);
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7E) {
                throw new IllegalArgumentException(what + " must be printable ASCII: " + value);
            }
        }
    }
}
