package dev.nvmf.verbs;

/**
 * {@code struct rdma_conn_param}: what connect and accept carry, and what a CONNECT_REQUEST or ESTABLISHED
 * event reports. Private data is copied (the CM pads it to 56 bytes on IB/RoCE: rdma_connect(3)).
 *
 * @param privateData         private data bytes (never null; may be empty)
 * @param responderResources  RDMA READs the sender will accept as responder
 * @param initiatorDepth      RDMA READs the sender will issue as initiator
 * @param flowControl         1 = hardware flow control
 * @param retryCount          transport retries (connect only)
 * @param rnrRetryCount       receiver-not-ready retries (7 = infinite)
 * @param srq                 whether the QP uses an SRQ
 * @param qpNum               the QP number (events) or 0
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth,
                                   int flowControl, int retryCount, int rnrRetryCount, boolean srq, int qpNum) {
    public ConnectionParameters {
        privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    @Override
    public byte[] privateData() { return privateData.clone(); }

    /** Private data length as carried (on IB/RoCE this is the padded length). */
    public int privateDataLength() { return privateData.length; }
}
