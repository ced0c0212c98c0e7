package dev.nvmf.target.core.subsystem;

import java.util.Objects;

/**
 * What identifies an NVM subsystem (kernel: {@code struct nvmet_subsys} attributes in configfs).
 *
 * @param nqn          the subsystem NQN (at most 223 bytes of UTF-8, NVMe Base 2.0 4.5)
 * @param serialNumber SN, at most 20 ASCII characters
 * @param modelNumber  MN, at most 40 ASCII characters
 * @param firmware     FR, at most 8 ASCII characters (kernel attr_firmware)
 * @param allowAnyHost every host may connect; otherwise only the allowed host NQNs
 * @param minCntlid    lowest controller id handed out (1..0xFFEF, kernel attr_cntlid_min)
 * @param maxCntlid    highest controller id handed out (minCntlid..0xFFEF, kernel attr_cntlid_max)
 * @param maxIoQueues  I/O queues a controller may have: the highest I/O queue id a Connect may name and the cap of
 *                     the Number of Queues feature (kernel attr_qid_max)
 * @param version      VS / Identify Controller VER in the register encoding (major &lt;&lt; 16 | minor &lt;&lt; 8 |
 *                     tertiary, NVMe Base 2.0 section 3.1.3.2; kernel attr_version)
 * @param ieeeOui      Identify Controller IEEE, the 24-bit organizationally unique identifier (kernel
 *                     attr_ieee_oui)
 */
public record SubsystemConfig(String nqn, String serialNumber, String modelNumber, String firmware,
                              boolean allowAnyHost, int minCntlid, int maxCntlid, int maxIoQueues, int version,
                              int ieeeOui) {
    public static final int MIN_CNTLID = 1;
    /** 0xFFF0..0xFFFF are reserved (0xFFFF: dynamic model in Connect, 0xFFFE: static). */
    public static final int MAX_CNTLID = 0xFFEF;
    public static final int DEFAULT_MAX_IO_QUEUES = 128;
    public static final int NQN_MAX_BYTES = 223;
    /** Identify Controller field widths (NVMe Base 2.0 figure "Identify Controller Data Structure"). */
    public static final int SERIAL_NUMBER_MAX_LENGTH = 20;
    public static final int MODEL_NUMBER_MAX_LENGTH = 40;
    public static final int FIRMWARE_MAX_LENGTH = 8;
    /** The version a subsystem reports unless configured: the one the core implements. */
    public static final int DEFAULT_VERSION = dev.nvmf.target.nvme.Properties.VERSION_2_0;
    /** No IEEE OUI (the kernel target's default). */
    public static final int DEFAULT_IEEE_OUI = 0;

    public SubsystemConfig {
        Objects.requireNonNull(nqn, "nqn");
        Objects.requireNonNull(serialNumber, "serialNumber");
        Objects.requireNonNull(modelNumber, "modelNumber");
        Objects.requireNonNull(firmware, "firmware");
        if (nqn.isEmpty() || nqn.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > NQN_MAX_BYTES) {
            throw new IllegalArgumentException("NQN must be 1.." + NQN_MAX_BYTES + " bytes: " + nqn);
        }
        checkAscii("serial number", serialNumber, SERIAL_NUMBER_MAX_LENGTH);
        checkAscii("model number", modelNumber, MODEL_NUMBER_MAX_LENGTH);
        checkAscii("firmware revision", firmware, FIRMWARE_MAX_LENGTH);
        if (minCntlid < MIN_CNTLID || maxCntlid > MAX_CNTLID || minCntlid > maxCntlid) {
            throw new IllegalArgumentException("controller id range must lie in 1..0xFFEF: " + minCntlid + ".."
                    + maxCntlid);
        }
        if (maxIoQueues < 1 || maxIoQueues > 65535) {
            throw new IllegalArgumentException("max I/O queues must be 1..65535: " + maxIoQueues);
        }
        if ((version >>> 16) < 1) {
            throw new IllegalArgumentException("version must be 1.0 or later: 0x" + Integer.toHexString(version));
        }
        if (ieeeOui < 0 || ieeeOui > 0xFFFFFF) {
            throw new IllegalArgumentException("IEEE OUI must be 24 bits: 0x" + Integer.toHexString(ieeeOui));
        }
    }

    /** Without version and IEEE OUI: the core's version, no OUI. */
    public SubsystemConfig(String nqn, String serialNumber, String modelNumber, String firmware,
                           boolean allowAnyHost, int minCntlid, int maxCntlid, int maxIoQueues) {
        this(nqn, serialNumber, modelNumber, firmware, allowAnyHost, minCntlid, maxCntlid, maxIoQueues,
                DEFAULT_VERSION, DEFAULT_IEEE_OUI);
    }

    /** A subsystem with the kernel target's defaults: model "Linux"-like text, firmware from the product. */
    public static SubsystemConfig of(String nqn, String serialNumber) {
        return new SubsystemConfig(nqn, serialNumber, "nvmf-target", "0.1.0", false, MIN_CNTLID, MAX_CNTLID,
                DEFAULT_MAX_IO_QUEUES);
    }

    public SubsystemConfig withAllowAnyHost(boolean allow) {
        return new SubsystemConfig(nqn, serialNumber, modelNumber, firmware, allow, minCntlid, maxCntlid, maxIoQueues,
                version, ieeeOui);
    }

    public SubsystemConfig withCntlidRange(int min, int max) {
        return new SubsystemConfig(nqn, serialNumber, modelNumber, firmware, allowAnyHost, min, max, maxIoQueues,
                version, ieeeOui);
    }

    public SubsystemConfig withMaxIoQueues(int queues) {
        return new SubsystemConfig(nqn, serialNumber, modelNumber, firmware, allowAnyHost, minCntlid, maxCntlid,
                queues, version, ieeeOui);
    }

    public SubsystemConfig withVersion(int newVersion) {
        return new SubsystemConfig(nqn, serialNumber, modelNumber, firmware, allowAnyHost, minCntlid, maxCntlid,
                maxIoQueues, newVersion, ieeeOui);
    }

    public SubsystemConfig withIeeeOui(int oui) {
        return new SubsystemConfig(nqn, serialNumber, modelNumber, firmware, allowAnyHost, minCntlid, maxCntlid,
                maxIoQueues, version, oui);
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
