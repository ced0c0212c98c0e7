package dev.nvmf.target.core;

/**
 * Target-wide limits and defaults, as the Linux kernel target sets them unless noted.
 *
 * @param mdts                  Maximum Data Transfer Size as a power of two of 4 KiB pages (8 = 1 MiB), at most
 *                              {@link #MAX_MDTS}
 * @param adminQueueDepth       admin queue entries (32); the discovery log's ASQSZ
 * @param keepAliveGranularity  Identify Controller KAS, in 100 ms units (10 = 1 s, the kernel's NVMET_KAS)
 * @param discoveryKatoMillis   keep-alive timeout of a discovery controller whose host asked for none (120 s)
 * @param asyncEventLimit       Asynchronous Event Requests a controller holds (AERL + 1 = 4)
 * @param errorLogEntries       error log entries kept per controller (ELPE + 1 = 128)
 * @param capTimeout            CAP.TO, 500 ms units (15 = 7.5 s)
 * @param version               VS / VER of the discovery subsystem ({@code Properties.VERSION_2_0}); an NVM
 *                              subsystem reports its own ({@code SubsystemConfig.version})
 */
public record TargetOptions(int mdts, int adminQueueDepth, int keepAliveGranularity, long discoveryKatoMillis,
                            int asyncEventLimit, int errorLogEntries, int capTimeout, int version) {
    /**
     * The largest MDTS: 2^11 x 4 KiB = 8 MiB. The Linux host describes a transfer with one Keyed SGL Data Block
     * descriptor, whose length field is 24 bits (NVMe Base 2.0, figure "Keyed SGL Data Block descriptor"): at most
     * 16 MiB - 1 byte, so a 16 MiB MDTS would promise transfers it cannot describe (a host that sends several
     * descriptors, up to MSDBD, still moves at most the max I/O size in all).
     */
    public static final int MAX_MDTS = 11;
    /** The largest transfer {@link #MAX_MDTS} allows, in bytes (8 MiB): the most a configured max I/O size may be. */
    public static final int MAX_TRANSFER_BYTES = 4096 << MAX_MDTS;

    public TargetOptions {
        if (mdts < 1 || mdts > MAX_MDTS) {
            throw new IllegalArgumentException("MDTS must be 1.." + MAX_MDTS + " (8 KiB.." + (MAX_TRANSFER_BYTES >> 20)
                    + " MiB; a keyed SGL's 24-bit length cannot carry 16 MiB): " + mdts);
        }
        if (adminQueueDepth < 2 || adminQueueDepth > 4096) {
            throw new IllegalArgumentException("admin queue depth must be 2..4096: " + adminQueueDepth);
        }
        if (asyncEventLimit < 1 || asyncEventLimit > 256) {
            throw new IllegalArgumentException("async event limit must be 1..256: " + asyncEventLimit);
        }
        if (errorLogEntries < 1 || errorLogEntries > 256) {
            throw new IllegalArgumentException("error log entries must be 1..256: " + errorLogEntries);
        }
    }

    public static TargetOptions defaults() {
        return new TargetOptions(8, 32, 10, 120_000, 4, 128, 15, dev.nvmf.target.nvme.Properties.VERSION_2_0);
    }

    /** The largest transfer one command may describe, in bytes (4 KiB << MDTS). */
    public int maxTransferBytes() {
        return 4096 << mdts;
    }
}
