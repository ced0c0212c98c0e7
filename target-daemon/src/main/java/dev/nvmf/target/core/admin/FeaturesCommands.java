package dev.nvmf.target.core.admin;

import dev.nvmf.target.core.CommandContext;
import dev.nvmf.target.core.controller.Controller;
import dev.nvmf.target.core.controller.Temperature;
import dev.nvmf.target.nvme.AsyncEvents;
import dev.nvmf.target.nvme.Features;
import dev.nvmf.target.nvme.Status;
import dev.nvmf.target.nvme.SubmissionQueueEntry;
import org.agrona.concurrent.NanoClock;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Set Features / Get Features (NVMe Base 2.0, 5.21 / 5.15, the features in 5.27.1; kernel:
 * {@code nvmet_execute_set_features}, {@code nvmet_execute_get_features}) for an I/O controller: the mandatory
 * Arbitration (01h), Power Management (02h) and Temperature Threshold (04h), Volatile Write Cache (06h), Number of
 * Queues (07h), Asynchronous Event Configuration (0Bh), Keep Alive Timer (0Fh) and Host Identifier (81h, read only
 * on fabrics). Nothing is saveable (SV: Feature Identifier Not Saveable); unknown features: Invalid Field.
 */
public final class FeaturesCommands {
    /**
     * Async event notices an I/O controller can send: the SMART / Health critical warnings (bits 4:0), namespace
     * attribute notices (bit 8) and ANA change notices (bit 11), as the kernel target accepts them (admin-cmd.c,
     * NVMET_AEN_CFG_ALL); SPDK's host sets exactly 11Fh and sends no Asynchronous Event Request at all when that is
     * refused (SPDK ctrlr.c); the Linux host sets bits 8 and 11, the notices Identify Controller OAES lists.
     */
    public static final int IO_AEC_SUPPORTED = AsyncEvents.CONFIG_SMART_CRITICAL_WARNINGS
            | AsyncEvents.CONFIG_NAMESPACE_ATTRIBUTE | AsyncEvents.CONFIG_ANA_CHANGE;

    private final NanoClock clock;

    /** @param clock a new keep-alive timeout runs from now */
    FeaturesCommands(NanoClock clock) {
        this.clock = clock;
    }

    void set(CommandContext ctx, Controller c) {
        int cdw10 = ctx.sqe.cdw10();
        int cdw11 = ctx.sqe.cdw11();
        if (Features.save(cdw10)) {
            ctx.fail(Status.FEATURE_NOT_SAVEABLE, SubmissionQueueEntry.CDW10 + 3);
            return;
        }
        switch (Features.fid(cdw10)) {
            case Features.FID_ARBITRATION -> c.arbitration(cdw11 & Features.ARBITRATION_FIELDS);
            case Features.FID_POWER_MANAGEMENT -> {
                // NPSS is 0: power state 0 is the only one (5.27.1.2: a state above NPSS is Invalid Field).
                if ((cdw11 & Features.POWER_STATE_MASK) != 0) {
                    ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11);
                    return;
                }
                c.powerManagement(cdw11 & Features.POWER_MANAGEMENT_FIELDS);
            }
            case Features.FID_TEMPERATURE_THRESHOLD -> {
                int tmpsel = (cdw11 >>> Features.TMPSEL_SHIFT) & Features.TMPSEL_MASK;
                if (!validThresholdSelect(ctx, cdw11, tmpsel == Features.TMPSEL_ALL)) {
                    return;
                }
                c.temperatureThreshold((cdw11 >>> Features.THSEL_SHIFT) & Features.THSEL_MASK,
                        cdw11 & Features.TMPTH_MASK);
            }
            case Features.FID_NUMBER_OF_QUEUES -> {
                if (c.hasIoQueues()) {
                    // Only before any I/O queue exists (NVMe Base 2.0, 5.27.1.5).
                    ctx.fail(Status.COMMAND_SEQUENCE_ERROR, SubmissionQueueEntry.CDW10);
                    return;
                }
                int nsqr = cdw11 & 0xFFFF;
                int ncqr = cdw11 >>> 16;
                if (nsqr == 0xFFFF || ncqr == 0xFFFF) {
                    ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11);
                    return;
                }
                // Submission and completion queues come in pairs on fabrics: grant the smaller request.
                int granted = c.requestIoQueues(Math.min(nsqr, ncqr) + 1);
                ctx.result0 = (granted - 1) | ((granted - 1) << 16);
            }
            case Features.FID_KEEP_ALIVE_TIMER -> setKeepAlive(ctx, c, cdw11);
            case Features.FID_ASYNC_EVENT_CONFIGURATION -> {
                if (!setAsyncEventConfig(ctx, c, cdw11, IO_AEC_SUPPORTED)) {
                    return;
                }
            }
            case Features.FID_VOLATILE_WRITE_CACHE -> c.volatileWriteCache((cdw11 & 1) != 0);
            case Features.FID_HOST_IDENTIFIER -> {
                // Set by Connect on fabrics and never changed (NVMe-oF 1.1, 3.3; as the kernel target).
                ctx.fail(Status.COMMAND_SEQUENCE_ERROR, SubmissionQueueEntry.CDW10);
                return;
            }
            default -> {
                ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW10);
                return;
            }
        }
        ctx.complete(Status.SUCCESS);
    }

    void get(CommandContext ctx, Controller c) {
        int cdw10 = ctx.sqe.cdw10();
        int cdw11 = ctx.sqe.cdw11();
        int sel = Features.select(cdw10);
        int fid = Features.fid(cdw10);
        if (sel > Features.SEL_SUPPORTED_CAPABILITIES) {
            ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW10 + 1);
            return;
        }
        boolean capabilities = sel == Features.SEL_SUPPORTED_CAPABILITIES;
        boolean current = sel == Features.SEL_CURRENT || sel == Features.SEL_SAVED; // not saveable: saved = current
        switch (fid) {
            case Features.FID_ARBITRATION -> ctx.result0 = capabilities ? Features.CAPABILITY_CHANGEABLE
                    : current ? c.arbitration() : 0;
            case Features.FID_POWER_MANAGEMENT -> ctx.result0 = capabilities ? Features.CAPABILITY_CHANGEABLE
                    : current ? c.powerManagement() : 0;
            case Features.FID_TEMPERATURE_THRESHOLD -> {
                if (capabilities) {
                    ctx.result0 = Features.CAPABILITY_CHANGEABLE;
                    break;
                }
                if (!validThresholdSelect(ctx, cdw11, false)) {
                    return;
                }
                int thsel = (cdw11 >>> Features.THSEL_SHIFT) & Features.THSEL_MASK;
                int kelvin = current ? c.temperature().threshold(thsel) : Temperature.defaultThreshold(thsel);
                // DW0 has the layout of CDW11: the threshold, and which one it is.
                ctx.result0 = kelvin | (Features.TMPSEL_COMPOSITE << Features.TMPSEL_SHIFT)
                        | (thsel << Features.THSEL_SHIFT);
            }
            case Features.FID_NUMBER_OF_QUEUES -> {
                int q = (current ? c.grantedIoQueues() : c.maxIoQueues()) - 1;
                ctx.result0 = capabilities ? Features.CAPABILITY_CHANGEABLE : q | (q << 16);
            }
            case Features.FID_KEEP_ALIVE_TIMER -> ctx.result0 = capabilities
                    ? Features.CAPABILITY_CHANGEABLE : current ? (int) c.keepAlive().timeoutMillis() : 0;
            case Features.FID_ASYNC_EVENT_CONFIGURATION -> ctx.result0 = capabilities
                    ? Features.CAPABILITY_CHANGEABLE : current ? c.asyncEventConfig() : 0;
            case Features.FID_VOLATILE_WRITE_CACHE -> ctx.result0 = capabilities
                    ? Features.CAPABILITY_CHANGEABLE : current ? (c.volatileWriteCache() ? 1 : 0) : 1;
            case Features.FID_HOST_IDENTIFIER -> {
                if (capabilities) {
                    ctx.result0 = 0;
                    break;
                }
                if ((cdw11 & Features.HOST_ID_EXHID) == 0) {
                    // Only the 128-bit host identifier exists on fabrics.
                    ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11);
                    return;
                }
                MemorySegment out = DataOut.prepare(ctx, Features.HOST_ID_SIZE);
                if (out == null) {
                    return;
                }
                MemorySegment.copy(c.hostId(), 0, out, ValueLayout.JAVA_BYTE, 0, Features.HOST_ID_SIZE);
            }
            default -> {
                ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW10);
                return;
            }
        }
        ctx.complete(Status.SUCCESS);
    }

    /**
     * TMPSEL names the composite temperature (or, for Set Features, Fh: every sensor, the same one here) and THSEL
     * the over or under threshold; a sensor that does not exist or a reserved THSEL is Invalid Field (5.27.1.4).
     */
    private static boolean validThresholdSelect(CommandContext ctx, int cdw11, boolean allSensors) {
        int tmpsel = (cdw11 >>> Features.TMPSEL_SHIFT) & Features.TMPSEL_MASK;
        int thsel = (cdw11 >>> Features.THSEL_SHIFT) & Features.THSEL_MASK;
        if ((tmpsel != Features.TMPSEL_COMPOSITE && !allSensors) || thsel > Features.THSEL_UNDER) {
            ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11 + 2);
            return false;
        }
        return true;
    }

    /** Keep Alive Timer: KATO in ms (0 disables); re-arms from now. */
    private void setKeepAlive(CommandContext ctx, Controller c, int cdw11) {
        c.keepAlive().timeoutMillis(cdw11 & 0xFFFF_FFFFL, clock.nanoTime());
    }

    /** Asynchronous Event Configuration: bits outside {@code supported} are Invalid Field (kernel does the same). */
    static boolean setAsyncEventConfig(CommandContext ctx, Controller c, int cdw11, int supported) {
        if ((cdw11 & ~supported) != 0) {
            ctx.fail(Status.INVALID_FIELD, SubmissionQueueEntry.CDW11);
            return false;
        }
        c.asyncEventConfig(cdw11);
        return true;
    }
}
