package dev.nvmf.verbs.soft;

/** The IB CM messages the soft CM exchanges; faults can drop or delay each kind. */
public enum CmMessage {
    /** Connect request (active to passive). */
    REQ,
    /** Connect reply (passive to active, sent by accept). */
    REP,
    /** Ready to use (active to passive): makes the passive side ESTABLISHED. */
    RTU,
    /** Reject (either way). */
    REJ,
    /** Disconnect request. */
    DREQ,
    /** Disconnect reply. */
    DREP
}
