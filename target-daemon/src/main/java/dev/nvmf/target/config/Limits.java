package dev.nvmf.target.config;

import dev.nvmf.target.backend.rbd.RbdSpec;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.SubsystemConfig;
import dev.nvmf.target.nvme.AnaLog;

/**
 * Every bound a configuration value is checked against, in one place. {@link ConfigLoader} (behind both
 * {@code check-config} and {@code serve}) checks values against these and nothing else; the daemon maps a loaded
 * configuration onto the core and the RDMA transport without checking again, and {@code LimitsAgreementTest}
 * generates a configuration at every bound (and one step beyond) to show that what {@code check-config} accepts the
 * daemon accepts. Where the core or the transport has a hard limit, the bound here is that limit (the core's constant
 * where it has one), so the two cannot drift apart. {@code docs/configuration.md} prints the same ranges.
 */
public final class Limits {
    private Limits() {}

    /** An inclusive integer range. */
    public record Range(long min, long max) {
        public boolean contains(long v) {
            return v >= min && v <= max;
        }

        /** "1..1024", as the documentation writes it. */
        public String text() {
            return min + ".." + max;
        }
    }

    /** An inclusive range of durations, in nanoseconds. */
    public record DurationRange(long minNanos, long maxNanos) {
        public boolean contains(long nanos) {
            return nanos >= minNanos && nanos <= maxNanos;
        }

        /** "0..100ms", as the documentation writes it. */
        public String text() {
            return Durations.format(minNanos) + ".." + Durations.format(maxNanos);
        }
    }

    /**
     * A byte size: an inclusive range, a required multiple, whether it must be a power of two, and why the
     * multiple or the power of two is required (for the message).
     */
    public record SizeRule(long min, long max, long multiple, boolean powerOfTwo, String why) {
        public SizeRule withMax(long newMax) {
            return new SizeRule(min, newMax, multiple, powerOfTwo, why);
        }

        public boolean accepts(long v) {
            return v >= min && v <= max && v % multiple == 0 && (!powerOfTwo || Long.bitCount(v) == 1);
        }

        /** "4KiB..16TiB, a multiple of 512 bytes", as the documentation writes it. */
        public String text() {
            return Sizes.format(min) + ".." + Sizes.format(max) + constraint();
        }

        /** ", a multiple of 512 bytes", ", a power of two" or nothing. */
        String constraint() {
            if (powerOfTwo) {
                return ", a power of two";
            }
            return multiple > 1 ? ", a multiple of " + multiple + " bytes" : "";
        }
    }

    // ------------------------------------------------------------------------------------------- transport

    /**
     * transport.max_queue_depth and ports[].max_queue_size: the kernel target's largest queue (NVMET_QUEUE_SIZE,
     * kernel nvmet.h), at least 2 (a queue of one entry is full when empty, NVMe Base 2.0 section 4.1).
     */
    public static final Range QUEUE_DEPTH = new Range(2, 1024);
    /** transport.max_io_qpairs_per_ctrlr: I/O queue ids the RDMA transport accepts in a connect request. */
    public static final Range IO_QPAIRS_PER_CTRLR = new Range(1, 65534);
    /**
     * transport.max_io_size: MDTS is a power of two times the 4 KiB minimum page size and 0 would mean "no limit"
     * (NVMe Base 2.0 section 5.17.2.1, Identify Controller MDTS), so 8 KiB is the smallest expressible limit; the
     * core's MDTS goes up to {@link TargetOptions#MAX_MDTS} (8 MiB): a keyed SGL's 24-bit length cannot carry 16 MiB.
     */
    public static final SizeRule MAX_IO_SIZE = new SizeRule(8 << 10, TargetOptions.MAX_TRANSFER_BYTES, 4096, true,
            "MDTS is a power of two times the 4 KiB memory page size");
    /**
     * transport.in_capsule_data_size and ports[].in_capsule_data_size: IOCCSZ counts 16-byte units (NVMe-oF 1.1,
     * Identify Controller fabrics fields); at most 1 MiB (the transport's receive buffers) and at most max_io_size.
     */
    public static final SizeRule IN_CAPSULE_DATA_SIZE = new SizeRule(0, 1 << 20, 16, false,
            "IOCCSZ is in 16-byte units");
    /** transport.max_aq_depth: the admin queue, up to AQA's 4096 entries (NVMe Base 2.0 section 3.1.3.8). */
    public static final Range ADMIN_QUEUE_DEPTH = new Range(2, 4096);
    /** transport.pollers: data-plane threads. */
    public static final Range POLLERS = new Range(1, 256);
    /** transport.poller_cpus: a CPU number, as sched_setaffinity(2)'s cpu_set_t holds them (glibc CPU_SETSIZE). */
    public static final Range POLLER_CPU = new Range(0, dev.nvmf.verbs.ffm.Libc.CPU_SETSIZE - 1);
    /**
     * transport.drain_timeout: seconds a queue's teardown waits for its work requests to come back before its QP is
     * destroyed; at least a second (a flush of a deep queue on a loaded host takes milliseconds), at most an hour.
     */
    public static final Range DRAIN_TIMEOUT_SECONDS = new Range(1, 3600);
    /**
     * transport.busy_poll: how long an idle poller keeps polling after its last work before it arms its completion
     * queues and blocks; 0 arms at once. At most 100 ms: a poller that should never sleep is not what this offers
     * (an idle daemon uses no CPU), and beyond that the spin only burns a core between rare I/Os.
     */
    public static final DurationRange BUSY_POLL = new DurationRange(0, 100_000_000L);
    /**
     * transport.srq_depth: receive buffers of a poller's shared receive queue on a device. At least 256, as the kernel
     * target requires of its srq_size (kernel rdma.c, srq_size_set); at most 65536, sixteen times SPDK's default
     * max_srq_depth (SPDK rdma.c, 4096). The device's max_srq_wr (32767 on ConnectX) caps it at run time.
     */
    public static final Range SRQ_DEPTH = new Range(256, 65536);

    // ------------------------------------------------------------------------------------------- ports

    /** ports[].id: PORTID of the discovery log (16 bits); 0xFFFF is kept free as the kernel's "any port". */
    public static final Range PORT_ID = new Range(1, 0xFFFE);
    /** ports[].trsvcid and referrals[].trsvcid: a port number. */
    public static final Range TRSVCID = new Range(1, 65535);
    /** ports[].referrals[].portid: the referral entry's PORTID (kernel configfs addr_portid, a u16). */
    public static final Range REFERRAL_PORT_ID = new Range(0, 0xFFFF);

    // ------------------------------------------------------------------------------------------- subsystems

    /** NQNs: at most 223 bytes of UTF-8 (NVMe Base 2.0 section 4.5; the kernel's NVMF_NQN_SIZE). */
    public static final int NQN_MAX_BYTES = SubsystemConfig.NQN_MAX_BYTES;
    /** serial: Identify Controller SN, 20 bytes of printable ASCII. */
    public static final int SERIAL_MAX_LENGTH = SubsystemConfig.SERIAL_NUMBER_MAX_LENGTH;
    /** model: Identify Controller MN, 40 bytes of printable ASCII. */
    public static final int MODEL_MAX_LENGTH = SubsystemConfig.MODEL_NUMBER_MAX_LENGTH;
    /** firmware: Identify Controller FR, 8 bytes of printable ASCII. */
    public static final int FIRMWARE_MAX_LENGTH = SubsystemConfig.FIRMWARE_MAX_LENGTH;
    /** cntlid_min, cntlid_max: 0 and FFF0h..FFFFh are reserved (NVMe Base 2.0, Identify Controller CNTLID). */
    public static final Range CNTLID = new Range(SubsystemConfig.MIN_CNTLID, SubsystemConfig.MAX_CNTLID);
    /** ieee_oui: Identify Controller IEEE, 24 bits (kernel configfs attr_ieee_oui refuses 0x1000000 and above). */
    public static final Range IEEE_OUI = new Range(0, 0xFFFFFF);
    /** version: the major versions whose register layout the core implements (VS, NVMe Base 2.0 section 3.1.3.2). */
    public static final Range VERSION_MAJOR = new Range(1, 2);

    // ------------------------------------------------------------------------------------------- namespaces

    /**
     * nsid: the core serves NSIDs 1..1024 in each subsystem and reports NN = 1024, as the kernel target does
     * (NVMET_MAX_NAMESPACES); FFFFFFFFh is the broadcast value in any case (NVMe Base 2.0 section 3.2.1.2).
     */
    public static final Range NSID = new Range(1, NamespaceConfig.MAX_NSID);
    /**
     * ram_size: whole 512-byte logical blocks (the smallest LBA size), at least one 4 KiB page; at most 16 TiB, far
     * above the memory of any server it runs on (the memory is allocated at start).
     */
    public static final SizeRule RAM_SIZE = new SizeRule(4 << 10, 16L << 40, 512, false,
            "a namespace holds whole 512-byte blocks");

    /**
     * rbd.connect_timeout, rbd.osd_op_timeout, rbd.mon_op_timeout: whole seconds (librados takes no fraction), never
     * 0 (which Ceph reads as "wait forever"), at most an hour ({@link RbdSpec#MAX_TIMEOUT}).
     */
    public static final Range RBD_TIMEOUT_SECONDS = new Range(1, RbdSpec.MAX_TIMEOUT.toSeconds());

    /**
     * namespaces[].ana_group and ports[].ana_groups[].grpid: the ANA group ids the core reports, 1 to ANAGRPMAX (128,
     * the kernel target's NVMET_MAX_ANAGRPS, kernel nvmet.h; 0 is not a group id, NVMe Base 2.0 section 8.1.2).
     */
    public static final Range ANA_GROUP = new Range(AnaLog.DEFAULT_GROUP_ID, AnaLog.MAX_GROUP_ID);

    // ------------------------------------------------------------------------------------------- metrics

    /** metrics.listen: the TCP port. */
    public static final Range METRICS_PORT = new Range(1, 65535);
}
