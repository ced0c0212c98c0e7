package dev.nvmf.target.core.admin;

import dev.nvmf.target.backend.BlockBackend;
import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.TargetOptions;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.controller.Temperature;
import dev.nvmf.target.core.subsystem.Namespace;
import dev.nvmf.target.core.subsystem.NamespaceConfig;
import dev.nvmf.target.core.subsystem.Port;
import dev.nvmf.target.core.subsystem.Subsystem;
import dev.nvmf.target.nvme.AnaLog;
import dev.nvmf.target.nvme.AnaState;
import dev.nvmf.target.nvme.Identify;
import dev.nvmf.target.nvme.IdentifyController;
import dev.nvmf.target.nvme.IdentifyNamespace;
import dev.nvmf.target.nvme.Le;
import dev.nvmf.target.nvme.SglDescriptor;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.UUID;

/**
 * Identify (admin 06h; NVMe Base 2.0, 5.17; kernel: {@code nvmet_execute_identify*}): where every Identify data
 * structure is built. CNS 00h namespace, 01h controller, 02h active namespace list, 03h namespace identification
 * descriptors, and what a Linux host with VER 2.0 also asks: 05h/06h/07h for the NVM command set (CSI 0) and 08h
 * the command-set-independent namespace. Other CNS values, or another CSI: Invalid Field.
 */
public final class IdentifyCommand {
    private final TargetOptions options;

    IdentifyCommand(TargetOptions options) {
        this.options = options;
    }

    void execute(CommandContext ctx, Controller c) {
        int cdw10 = ctx.sqe.cdw10();
        int cns = Identify.cns(cdw10);
        int csi = Identify.csi(ctx.sqe.cdw11());
        int nsid = ctx.nsid;
        Subsystem s = c.subsystem();
        switch (cns) {
            case Identify.CNS_NAMESPACE, Identify.CNS_CS_INDEPENDENT_NAMESPACE -> {
                if (!validNsid(ctx, nsid)) {
                    return;
                }
                MemorySegment out = DataOut.prepare(ctx, Identify.DATA_SIZE);
                if (out == null) {
                    return;
                }
                Namespace ns = s.namespace(nsid);
                if (ns != null) { // an inactive NSID answers zeroes (NVMe Base 2.0, 3.2.1.4)
                    if (cns == Identify.CNS_NAMESPACE) {
                        // A host that rescans sees a resized medium at once, and every controller hears of it
                        // (kernel admin-cmd.c, nvmet_execute_identify_ns, revalidates the same way).
                        s.revalidateNamespace(nsid);
                        namespace(out, ns, c.anaStates().state(ns.anaGroupId()));
                    } else {
                        independentNamespace(out, ns);
                    }
                }
            }
            case Identify.CNS_CONTROLLER -> {
                MemorySegment out = DataOut.prepare(ctx, Identify.DATA_SIZE);
                if (out == null) {
                    return;
                }
                controller(out, c, options);
            }
            case Identify.CNS_ACTIVE_NAMESPACE_LIST, Identify.CNS_CS_ACTIVE_NAMESPACE_LIST -> {
                if (cns == Identify.CNS_CS_ACTIVE_NAMESPACE_LIST && csi != IdentifyNamespace.CSI_NVM) {
                    ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11 + 3);
                    return;
                }
                if (Integer.compareUnsigned(nsid, 0xFFFF_FFFE) >= 0) {
                    ctx.fail(Status.INVALID_NAMESPACE, SubmissionQueueEntry.NSID);
                    return;
                }
                MemorySegment out = DataOut.prepare(ctx, Identify.DATA_SIZE);
                if (out == null) {
                    return;
                }
                activeNamespaceList(out, s, nsid);
            }
            case Identify.CNS_NAMESPACE_DESCRIPTORS -> {
                Namespace ns = s.namespace(nsid);
                if (ns == null) {
                    ctx.fail(Status.INVALID_NAMESPACE, SubmissionQueueEntry.NSID);
                    return;
                }
                MemorySegment out = DataOut.prepare(ctx, Identify.DATA_SIZE);
                if (out == null) {
                    return;
                }
                descriptors(out, ns);
            }
            case Identify.CNS_CS_NAMESPACE -> {
                if (csi != IdentifyNamespace.CSI_NVM) {
                    ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11 + 3);
                    return;
                }
                if (!validNsid(ctx, nsid)) {
                    return;
                }
                // The NVM command set specific namespace data: no protection information, no extended formats.
                if (DataOut.prepare(ctx, Identify.DATA_SIZE) == null) {
                    return;
                }
            }
            case Identify.CNS_CS_CONTROLLER -> {
                if (csi != IdentifyNamespace.CSI_NVM) {
                    ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11 + 3);
                    return;
                }
                // NVM command set controller data: VSL, WZSL, WUSL, DMRL, DMRSL, DMSL all 0 = no limit beyond MDTS.
                if (DataOut.prepare(ctx, Identify.DATA_SIZE) == null) {
                    return;
                }
            }
            default -> {
                ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW10);
                return;
            }
        }
        ctx.complete(Status.SUCCESS);
    }

    /** NSID 0, FFFFFFFFh and NSIDs above NN are invalid for namespace data (no namespace management here). */
    private static boolean validNsid(CommandContext ctx, int nsid) {
        if (nsid == 0 || Integer.compareUnsigned(nsid, NamespaceConfig.MAX_NSID) > 0) {
            ctx.fail(Status.INVALID_NAMESPACE, SubmissionQueueEntry.NSID);
            return false;
        }
        return true;
    }

    /** Identify Controller of an I/O controller (fabrics fields per NVMe-oF 1.1, 4.1). */
    public static void controller(MemorySegment out, Controller c, TargetOptions options) {
        Subsystem s = c.subsystem();
        Port port = c.port();
        Le.asciiSpacePadded(out, IdentifyController.SN, IdentifyController.SN_LENGTH, s.config().serialNumber());
        Le.asciiSpacePadded(out, IdentifyController.MN, IdentifyController.MN_LENGTH, s.config().modelNumber());
        Le.asciiSpacePadded(out, IdentifyController.FR, IdentifyController.FR_LENGTH, s.config().firmware());
        Le.u8(out, IdentifyController.RAB, 6);
        // IEEE OUI, least significant byte first (NVMe Base 2.0 figure 275; kernel attr_ieee_oui, 0 unless set).
        int oui = s.config().ieeeOui();
        Le.u8(out, IdentifyController.IEEE, oui);
        Le.u8(out, IdentifyController.IEEE + 1, oui >>> 8);
        Le.u8(out, IdentifyController.IEEE + 2, oui >>> 16);
        Le.u8(out, IdentifyController.CMIC, CMIC);
        Le.u8(out, IdentifyController.MDTS, options.mdts());
        Le.u16(out, IdentifyController.CNTLID, c.cntlid());
        Le.u32(out, IdentifyController.VER, s.config().version());
        Le.u32(out, IdentifyController.OAES,
                IdentifyController.OAES_NAMESPACE_ATTRIBUTE | IdentifyController.OAES_ANA_CHANGE);
        Le.u32(out, IdentifyController.CTRATT, IdentifyController.CTRATT_HOST_ID_128 | IdentifyController.CTRATT_TBKAS);
        Le.u8(out, IdentifyController.CNTRLTYPE, IdentifyController.CNTRLTYPE_IO);
        Le.u8(out, IdentifyController.ACL, 3);
        Le.u8(out, IdentifyController.AERL, options.asyncEventLimit() - 1);
        Le.u8(out, IdentifyController.FRMW, IdentifyController.FRMW_SLOT1_READ_ONLY_ONE_SLOT);
        Le.u8(out, IdentifyController.LPA, IdentifyController.LPA_SMART_PER_NAMESPACE
                | IdentifyController.LPA_COMMAND_EFFECTS | IdentifyController.LPA_EXTENDED_DATA);
        Le.u8(out, IdentifyController.ELPE, options.errorLogEntries() - 1);
        // Above the temperature SMART reports, so a host sees no warning (NVMe Base 2.0 figure 275: both mandatory).
        Le.u16(out, IdentifyController.WCTEMP, Temperature.WARNING_KELVIN);
        Le.u16(out, IdentifyController.CCTEMP, Temperature.CRITICAL_KELVIN);
        Le.u16(out, IdentifyController.KAS, options.keepAliveGranularity());
        // ANA reporting (kernel admin-cmd.c, nvmet_execute_identify_ctrl reports the same): every state, groups 1..128.
        Le.u8(out, IdentifyController.ANATT, AnaLog.TRANSITION_TIME_SECONDS);
        Le.u8(out, IdentifyController.ANACAP, AnaLog.CAPABILITIES);
        Le.u32(out, IdentifyController.ANAGRPMAX, AnaLog.MAX_GROUP_ID);
        Le.u32(out, IdentifyController.NANAGRPID, AnaLog.MAX_GROUP_ID);
        Le.u8(out, IdentifyController.SQES, IdentifyController.SQES_64);
        Le.u8(out, IdentifyController.CQES, IdentifyController.CQES_16);
        Le.u16(out, IdentifyController.MAXCMD, port.maxQueueSize());
        Le.u32(out, IdentifyController.NN, NamespaceConfig.MAX_NSID);
        Le.u16(out, IdentifyController.ONCS, IdentifyController.ONCS_COMPARE
                | IdentifyController.ONCS_DATASET_MANAGEMENT | IdentifyController.ONCS_WRITE_ZEROES);
        Le.u8(out, IdentifyController.VWC, IdentifyController.VWC_PRESENT);
        Le.u32(out, IdentifyController.SGLS, sgls(port));
        Le.u32(out, IdentifyController.MNAN, NamespaceConfig.MAX_NSID);
        Le.utf8NulPadded(out, IdentifyController.SUBNQN, IdentifyController.SUBNQN_LENGTH, s.nqn());
        fabricsFields(out, port);
        // Power state 0: 25 W maximum, 16 us entry, 4 us exit latency (as the kernel target reports).
        Le.u16(out, IdentifyController.PSD0, 2500);
        Le.u32(out, IdentifyController.PSD0 + 4, 16);
        Le.u32(out, IdentifyController.PSD0 + 8, 4);
    }

    /**
     * CMIC: the subsystem may have several ports (MPORTS) and several controllers (dynamic model, several hosts), and
     * the controller reports ANA, as the kernel target sets all three (admin-cmd.c,
     * {@code nvmet_execute_identify_ctrl}). MPORTS is set even for a subsystem this daemon exposes on one port: the
     * same subsystem may be served by other daemons on their ports (docs/scale-out.md), which this one cannot see,
     * and every controller of a subsystem must report the same. The Linux host joins controllers into one multipath
     * subsystem only with bit 1, and reads the ANA log only with bit 3 (kernel host multipath.c,
     * {@code nvme_mpath_init_identify}).
     */
    static final int CMIC = IdentifyController.CMIC_MULTI_PORT | IdentifyController.CMIC_MULTI_CONTROLLER
            | IdentifyController.CMIC_ANA;

    /**
     * SGL support: SGLs supported (byte aligned), Keyed SGL Data Block (RDMA; the Linux host refuses a controller
     * without it), and the Offset address type for in-capsule data when the port carries any.
     */
    public static int sgls(Port port) {
        int sgls = IdentifyController.SGLS_SUPPORTED | IdentifyController.SGLS_KEYED;
        if (port.inCapsuleDataSize() > 0) {
            sgls |= IdentifyController.SGLS_OFFSET;
        }
        return sgls;
    }

    /**
     * MSDBD (NVMe-oF 1.1 figure 34): the SGL data block descriptors a host may place in a capsule. SGL1 holds one;
     * more come as a Last Segment list in the in-capsule data (SPDK's host sends up to 16), so a port takes as many
     * 16-byte keyed descriptors as its in-capsule data holds, at most {@link SglDescriptor#MAX_DATA_DESCRIPTORS};
     * without in-capsule data, one. MDTS does not change: the descriptors' lengths together must fit the max I/O
     * size, as one descriptor's must.
     */
    public static int msdbd(Port port) {
        return Math.max(1, Math.min(SglDescriptor.MAX_DATA_DESCRIPTORS, port.inCapsuleDataSize() / SglDescriptor.SIZE));
    }

    /** IOCCSZ, IORCSZ, ICDOFF, FCATT, MSDBD, OFCS (NVMe-oF 1.1 figure 34) of an I/O controller. */
    public static void fabricsFields(MemorySegment out, Port port) {
        Le.u32(out, IdentifyController.IOCCSZ, (64 + port.inCapsuleDataSize()) / 16);
        Le.u32(out, IdentifyController.IORCSZ, 16 / 16);
        Le.u16(out, IdentifyController.ICDOFF, 0);
        Le.u8(out, IdentifyController.FCATT, 0); // dynamic controller model
        Le.u8(out, IdentifyController.MSDBD, msdbd(port));
        // Disconnect is supported (on I/O queues, NVMe-oF 1.1, 3.4).
        Le.u16(out, IdentifyController.OFCS, IdentifyController.OFCS_DISCONNECT);
    }

    /**
     * Identify Namespace for the NVM command set: one LBA format, shared, thin provisioning not reported; what a read
     * of a deallocated block returns and the preferred granularities are the backend's (see {@link #limits}); the ANA
     * group, and NUSE 0 while the group is inaccessible or lost on the asking controller's port ({@code ana}), as the
     * kernel target reports (admin-cmd.c, {@code nvmet_execute_identify_ns}).
     */
    public static void namespace(MemorySegment out, Namespace ns, AnaState ana) {
        long blocks = ns.sizeBlocks();
        Le.u64(out, IdentifyNamespace.NSZE, blocks);
        Le.u64(out, IdentifyNamespace.NCAP, blocks);
        boolean unreachable = ana == AnaState.INACCESSIBLE || ana == AnaState.PERSISTENT_LOSS;
        Le.u64(out, IdentifyNamespace.NUSE, unreachable ? 0 : blocks);
        Le.u32(out, IdentifyNamespace.ANAGRPID, ns.anaGroupId());
        Le.u8(out, IdentifyNamespace.NLBAF, 0); // 0's based: one format
        Le.u8(out, IdentifyNamespace.FLBAS, 0);
        Le.u8(out, IdentifyNamespace.NMIC, IdentifyNamespace.NMIC_SHARED);
        limits(out, ns);
        Le.u8(out, IdentifyNamespace.NSATTR, ns.readOnly() ? IdentifyNamespace.NSATTR_WRITE_PROTECTED : 0);
        byte[] nguid = ns.nguid();
        if (nguid != null) {
            MemorySegment.copy(nguid, 0, out, ValueLayout.JAVA_BYTE, IdentifyNamespace.NGUID, 16);
        }
        if (ns.eui64() != 0) {
            writeBigEndian64(out, IdentifyNamespace.EUI64, ns.eui64());
        }
        Le.u32(out, IdentifyNamespace.LBAF0, ns.blockShift() << IdentifyNamespace.LBAF_LBADS_SHIFT);
    }

    /**
     * What the backend guarantees and prefers, in the namespace's blocks:
     * <ul>
     *   <li>DLFEAT bits 2:0: 001b (deallocated blocks read zeroes) only where the backend guarantees it (a RAM
     *       namespace; a file on a file system that punches holes; a device whose discards read back zeroes), else
     *       000b (not reported: the old data may come back); bit 3 (WZDS) always: Write Zeroes with DEAC deallocates
     *       only in ways that still read back zeroes. NSFEAT.DAE stays 0: such reads never fail.</li>
     *   <li>Where the backend knows its physical block size (a block device; kernel io-cmd-bdev.c,
     *       {@code nvmet_bdev_set_limits}): NSFEAT.OPTPERF with NPWG = NPWA = physical blocks, NPDG = NPDA = the
     *       discard granularity, NOWS = the optimal I/O size (or the physical block), and NSFEAT.NSABP with NAWUN =
     *       NAWUPF = NACWU = one physical block, which a disk writes atomically: the Linux host takes its physical
     *       block size as the smaller of NPWG and NAWUPF, so without them a 512e disk would look 512-native. All 0's
     *       based, at least one block.</li>
     * </ul>
     */
    static void limits(MemorySegment out, Namespace ns) {
        BlockBackend backend = ns.backend();
        int dlfeat = IdentifyNamespace.DLFEAT_WRITE_ZEROES_DEALLOCATE | (backend.deallocatedReadsZeroes()
                ? IdentifyNamespace.DLFEAT_READ_ZEROES : IdentifyNamespace.DLFEAT_READ_NOT_REPORTED);
        Le.u8(out, IdentifyNamespace.DLFEAT, dlfeat);
        int physical = backend.physicalBlockSize();
        if (physical <= 0) {
            return;
        }
        int block = ns.blockSize();
        int perPhysical = blocksOf(physical, block);
        int granularity = backend.deallocateGranularity();
        int optimal = Math.max(backend.optimalIoSize(), physical);
        Le.u8(out, IdentifyNamespace.NSFEAT,
                IdentifyNamespace.NSFEAT_ATOMICS | IdentifyNamespace.NSFEAT_OPTIMAL_PERFORMANCE);
        Le.u16(out, IdentifyNamespace.NAWUN, perPhysical - 1);
        Le.u16(out, IdentifyNamespace.NAWUPF, perPhysical - 1);
        Le.u16(out, IdentifyNamespace.NACWU, perPhysical - 1);
        Le.u16(out, IdentifyNamespace.NPWG, perPhysical - 1);
        Le.u16(out, IdentifyNamespace.NPWA, perPhysical - 1);
        int perDeallocate = granularity > 0 ? blocksOf(granularity, block) : perPhysical;
        Le.u16(out, IdentifyNamespace.NPDG, perDeallocate - 1);
        Le.u16(out, IdentifyNamespace.NPDA, perDeallocate - 1);
        Le.u16(out, IdentifyNamespace.NOWS, blocksOf(optimal, block) - 1);
    }

    /** How many namespace blocks {@code bytes} is: at least 1, at most 65536 (the fields are 16-bit, 0's based). */
    private static int blocksOf(long bytes, int blockSize) {
        return (int) Math.max(1, Math.min(1 << 16, bytes / blockSize));
    }

    /** The I/O command set independent Identify Namespace (CNS 08h): shared, ANA group, write protection, ready. */
    public static void independentNamespace(MemorySegment out, Namespace ns) {
        Le.u8(out, IdentifyNamespace.INDEP_NMIC, IdentifyNamespace.NMIC_SHARED);
        Le.u32(out, IdentifyNamespace.INDEP_ANAGRPID, ns.anaGroupId());
        Le.u8(out, IdentifyNamespace.INDEP_NSATTR, ns.readOnly() ? IdentifyNamespace.NSATTR_WRITE_PROTECTED : 0);
        Le.u8(out, IdentifyNamespace.INDEP_NSTAT, IdentifyNamespace.NSTAT_READY);
    }

    /** Active namespace list: NSIDs greater than {@code after}, ascending, at most 1024. */
    public static void activeNamespaceList(MemorySegment out, Subsystem s, int after) {
        int i = 0;
        for (Namespace ns : s.namespaces()) {
            if (Integer.compareUnsigned(ns.nsid(), after) > 0 && i < Identify.DATA_SIZE / 4) {
                Le.u32(out, i * 4L, ns.nsid());
                i++;
            }
        }
    }

    /** Namespace identification descriptors: EUI-64, NGUID, UUID when set, and the command set identifier. */
    public static void descriptors(MemorySegment out, Namespace ns) {
        long off = 0;
        if (ns.eui64() != 0) {
            off = descriptorHeader(out, off, IdentifyNamespace.NIDT_EUI64, IdentifyNamespace.NIDL_EUI64);
            writeBigEndian64(out, off, ns.eui64());
            off += IdentifyNamespace.NIDL_EUI64;
        }
        byte[] nguid = ns.nguid();
        if (nguid != null) {
            off = descriptorHeader(out, off, IdentifyNamespace.NIDT_NGUID, IdentifyNamespace.NIDL_NGUID);
            MemorySegment.copy(nguid, 0, out, ValueLayout.JAVA_BYTE, off, 16);
            off += IdentifyNamespace.NIDL_NGUID;
        }
        UUID uuid = ns.uuid();
        if (uuid != null) {
            off = descriptorHeader(out, off, IdentifyNamespace.NIDT_UUID, IdentifyNamespace.NIDL_UUID);
            writeBigEndian64(out, off, uuid.getMostSignificantBits());
            writeBigEndian64(out, off + 8, uuid.getLeastSignificantBits());
            off += IdentifyNamespace.NIDL_UUID;
        }
        off = descriptorHeader(out, off, IdentifyNamespace.NIDT_CSI, IdentifyNamespace.NIDL_CSI);
        Le.u8(out, off, IdentifyNamespace.CSI_NVM);
    }

    private static long descriptorHeader(MemorySegment out, long off, int type, int length) {
        Le.u8(out, off + IdentifyNamespace.DESC_NIDT, type);
        Le.u8(out, off + IdentifyNamespace.DESC_NIDL, length);
        return off + IdentifyNamespace.DESC_HEADER_SIZE;
    }

    /** EUI-64 and UUID are byte strings, most significant byte first. */
    private static void writeBigEndian64(MemorySegment out, long off, long value) {
        for (int i = 0; i < 8; i++) {
            Le.u8(out, off + i, (int) (value >>> (56 - 8 * i)));
        }
    }
}
