package dev.nvmf.target.nvme;

/**
 * NVMe status values in the form {@code NvmeRequest.transportStatus()} uses: the CQE status field shifted right by
 * one (no phase tag): SC in bits 7:0, SCT in bits 10:8, More bit 13, DNR bit 14. Write them into a CQE with
 * {@link CompletionQueueEntry#status(int)}.
 *
 * <p>Codes from NVMe Base 2.0 figures 100-104 (generic, command specific, media) and NVMe-oF 1.1 figure 31
 * (Connect). The constants include DNR where the same command can never succeed unchanged, as the kernel target
 * answers them.
 */
public final class Status {
    public static final int SUCCESS = 0;

    public static final int SCT_GENERIC = 0;
    public static final int SCT_COMMAND_SPECIFIC = 1;
    public static final int SCT_MEDIA = 2;
    public static final int SCT_PATH = 3;

    public static final int DNR = 1 << 14;
    public static final int MORE = 1 << 13;

    // --- Generic command status (SCT 0) ---
    public static final int SC_INVALID_OPCODE = 0x01;
    public static final int SC_INVALID_FIELD = 0x02;
    public static final int SC_COMMAND_ID_CONFLICT = 0x03;
    public static final int SC_DATA_TRANSFER_ERROR = 0x04;
    public static final int SC_ABORTED_POWER_LOSS = 0x05;
    public static final int SC_INTERNAL_ERROR = 0x06;
    public static final int SC_ABORT_REQUESTED = 0x07;
    public static final int SC_ABORTED_SQ_DELETION = 0x08;
    public static final int SC_ABORTED_FUSED_FAIL = 0x09;
    public static final int SC_ABORTED_FUSED_MISSING = 0x0A;
    public static final int SC_INVALID_NAMESPACE = 0x0B;
    public static final int SC_COMMAND_SEQUENCE_ERROR = 0x0C;
    public static final int SC_INVALID_SGL_SEGMENT_DESCRIPTOR = 0x0D;
    public static final int SC_INVALID_SGL_DESCRIPTOR_COUNT = 0x0E;
    public static final int SC_DATA_SGL_LENGTH_INVALID = 0x0F;
    public static final int SC_METADATA_SGL_LENGTH_INVALID = 0x10;
    public static final int SC_SGL_DESCRIPTOR_TYPE_INVALID = 0x11;
    public static final int SC_INVALID_CONTROLLER_MEMORY_BUFFER = 0x12;
    public static final int SC_PRP_OFFSET_INVALID = 0x13;
    public static final int SC_SGL_OFFSET_INVALID = 0x16;
    public static final int SC_HOST_ID_INCONSISTENT = 0x18;
    public static final int SC_KEEP_ALIVE_EXPIRED = 0x19;
    public static final int SC_KEEP_ALIVE_INVALID = 0x1A;
    public static final int SC_NAMESPACE_WRITE_PROTECTED = 0x20;
    public static final int SC_COMMAND_INTERRUPTED = 0x21;
    public static final int SC_TRANSIENT_TRANSPORT_ERROR = 0x22;
    // NVM command set generic status
    public static final int SC_LBA_OUT_OF_RANGE = 0x80;
    public static final int SC_CAPACITY_EXCEEDED = 0x81;
    public static final int SC_NAMESPACE_NOT_READY = 0x82;

    // --- Command specific status (SCT 1) ---
    public static final int SC_INVALID_QUEUE_IDENTIFIER = 0x01;
    public static final int SC_INVALID_QUEUE_SIZE = 0x02;
    public static final int SC_ABORT_COMMAND_LIMIT_EXCEEDED = 0x03;
    public static final int SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED = 0x05;
    public static final int SC_INVALID_FIRMWARE_SLOT = 0x06;
    public static final int SC_INVALID_LOG_PAGE = 0x09;
    public static final int SC_FEATURE_NOT_SAVEABLE = 0x0D;
    public static final int SC_FEATURE_NOT_CHANGEABLE = 0x0E;
    public static final int SC_FEATURE_NOT_NAMESPACE_SPECIFIC = 0x0F;
    // Fabrics Connect (NVMe-oF 1.1 figure 31)
    public static final int SC_CONNECT_INCOMPATIBLE_FORMAT = 0x80;
    public static final int SC_CONNECT_CONTROLLER_BUSY = 0x81;
    public static final int SC_CONNECT_INVALID_PARAMETERS = 0x82;
    public static final int SC_CONNECT_RESTART_DISCOVERY = 0x83;
    public static final int SC_CONNECT_INVALID_HOST = 0x84;
    /** The command was submitted on a queue of a type that does not take it (Disconnect on the admin queue). */
    public static final int SC_INVALID_QUEUE_TYPE = 0x85;
    public static final int SC_DISCOVER_RESTART = 0x90;
    public static final int SC_AUTHENTICATION_REQUIRED = 0x91;
    // NVM command set specific
    public static final int SC_CONFLICTING_ATTRIBUTES = 0x80;
    public static final int SC_INVALID_PROTECTION_INFORMATION = 0x81;
    public static final int SC_WRITE_TO_READ_ONLY_RANGE = 0x82;

    // --- Media and data integrity errors (SCT 2) ---
    public static final int SC_WRITE_FAULT = 0x80;
    public static final int SC_UNRECOVERED_READ_ERROR = 0x81;
    public static final int SC_COMPARE_FAILURE = 0x85;
    public static final int SC_ACCESS_DENIED = 0x86;

    // --- Path related status (SCT 3; NVMe Base 2.0, figure "Path Related Status Values") ---
    public static final int SC_INTERNAL_PATH_ERROR = 0x00;
    public static final int SC_ANA_PERSISTENT_LOSS = 0x01;
    public static final int SC_ANA_INACCESSIBLE = 0x02;
    public static final int SC_ANA_TRANSITION = 0x03;

    // --- Ready-made values (with DNR where retrying cannot help) ---
    public static final int INVALID_OPCODE = SC_INVALID_OPCODE | DNR;
    public static final int INVALID_FIELD = SC_INVALID_FIELD | DNR;
    public static final int INTERNAL_ERROR = SC_INTERNAL_ERROR;
    public static final int ABORTED_SQ_DELETION = SC_ABORTED_SQ_DELETION;
    public static final int ABORT_REQUESTED = SC_ABORT_REQUESTED;
    public static final int INVALID_NAMESPACE = SC_INVALID_NAMESPACE | DNR;
    public static final int COMMAND_SEQUENCE_ERROR = SC_COMMAND_SEQUENCE_ERROR | DNR;
    /** Keep Alive on a controller whose KATO is 0; without DNR, as the kernel target answers it. */
    public static final int KEEP_ALIVE_TIMEOUT_INVALID = SC_KEEP_ALIVE_INVALID;
    public static final int DATA_SGL_LENGTH_INVALID = SC_DATA_SGL_LENGTH_INVALID | DNR;
    public static final int SGL_DESCRIPTOR_TYPE_INVALID = SC_SGL_DESCRIPTOR_TYPE_INVALID | DNR;
    public static final int SGL_OFFSET_INVALID = SC_SGL_OFFSET_INVALID | DNR;
    public static final int INVALID_SGL_SEGMENT_DESCRIPTOR = SC_INVALID_SGL_SEGMENT_DESCRIPTOR | DNR;
    public static final int INVALID_NUMBER_OF_SGL_DESCRIPTORS = SC_INVALID_SGL_DESCRIPTOR_COUNT | DNR;
    public static final int NAMESPACE_WRITE_PROTECTED = SC_NAMESPACE_WRITE_PROTECTED | DNR;
    public static final int LBA_OUT_OF_RANGE = SC_LBA_OUT_OF_RANGE | DNR;
    public static final int CAPACITY_EXCEEDED = SC_CAPACITY_EXCEEDED | DNR;
    public static final int CONNECT_INCOMPATIBLE_FORMAT = sct(SCT_COMMAND_SPECIFIC, SC_CONNECT_INCOMPATIBLE_FORMAT) | DNR;
    public static final int CONNECT_CONTROLLER_BUSY = sct(SCT_COMMAND_SPECIFIC, SC_CONNECT_CONTROLLER_BUSY) | DNR;
    public static final int CONNECT_INVALID_PARAMETERS = sct(SCT_COMMAND_SPECIFIC, SC_CONNECT_INVALID_PARAMETERS) | DNR;
    public static final int CONNECT_INVALID_HOST = sct(SCT_COMMAND_SPECIFIC, SC_CONNECT_INVALID_HOST) | DNR;
    public static final int INVALID_QUEUE_TYPE = sct(SCT_COMMAND_SPECIFIC, SC_INVALID_QUEUE_TYPE) | DNR;
    public static final int AUTHENTICATION_REQUIRED = sct(SCT_COMMAND_SPECIFIC, SC_AUTHENTICATION_REQUIRED) | DNR;
    public static final int ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED =
            sct(SCT_COMMAND_SPECIFIC, SC_ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED) | DNR;
    public static final int INVALID_LOG_PAGE = sct(SCT_COMMAND_SPECIFIC, SC_INVALID_LOG_PAGE) | DNR;
    public static final int FEATURE_NOT_SAVEABLE = sct(SCT_COMMAND_SPECIFIC, SC_FEATURE_NOT_SAVEABLE) | DNR;
    public static final int FEATURE_NOT_CHANGEABLE = sct(SCT_COMMAND_SPECIFIC, SC_FEATURE_NOT_CHANGEABLE) | DNR;
    public static final int WRITE_FAULT = sct(SCT_MEDIA, SC_WRITE_FAULT);
    public static final int UNRECOVERED_READ_ERROR = sct(SCT_MEDIA, SC_UNRECOVERED_READ_ERROR);
    public static final int COMPARE_FAILURE = sct(SCT_MEDIA, SC_COMPARE_FAILURE) | DNR;
    /**
     * The ANA statuses, without DNR as the kernel target answers them (core.c, {@code nvmet_check_ana_state}): the
     * Linux host fails such a command over to another path and re-reads the ANA log (kernel host multipath.c,
     * {@code nvme_failover_req}); with DNR it would end the command with an error instead.
     */
    public static final int ANA_PERSISTENT_LOSS = sct(SCT_PATH, SC_ANA_PERSISTENT_LOSS);
    public static final int ANA_INACCESSIBLE = sct(SCT_PATH, SC_ANA_INACCESSIBLE);
    public static final int ANA_TRANSITION = sct(SCT_PATH, SC_ANA_TRANSITION);

    private Status() {
    }

    /** Combines a status code type and a status code. */
    public static int sct(int sct, int sc) {
        return ((sct & 0x7) << 8) | (sc & 0xFF);
    }

    public static int codeOf(int status) { return status & 0xFF; }

    public static int typeOf(int status) { return (status >>> 8) & 0x7; }

    public static boolean dnr(int status) { return (status & DNR) != 0; }

    /** "SCT 1 SC 0x82 DNR" for logs and test messages. */
    public static String describe(int status) {
        return "SCT " + typeOf(status) + " SC 0x" + Integer.toHexString(codeOf(status))
                + (dnr(status) ? " DNR" : "") + ((status & MORE) != 0 ? " MORE" : "");
    }
}
