package dev.nvmf.target.rdma;

import dev.nvmf.target.rdma.RdmaMetrics.RejectReason;
import dev.nvmf.target.rdma.cm.ConnectRequestData;
import dev.nvmf.target.rdma.cm.RdmaCmStatus;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

class ConnectRequestDataTest {
    private final RdmaPortConfig port = RdmaPortConfig.of(1, "0.0.0.0", 4420);

    private static byte[] pd(int recfmt, int qid, int hrqsize, int hsqsize) {
        return new ConnectRequestData(recfmt, qid, hrqsize, hsqsize, 0xFFFF).encode();
    }

    @Test
    void parsesLittleEndianFieldsAtSpecOffsets() {
        byte[] b = new byte[56]; // IB/RoCE CM pads to 56 bytes
        b[2] = 5;                // qid 5
        b[4] = (byte) 0x80;      // hrqsize 128
        b[6] = 127;              // hsqsize 127
        b[8] = 0x34;
        b[9] = 0x12;             // cntlid 0x1234
        ConnectRequestData d = ConnectRequestData.parse(b);
        assertEquals(0, d.recfmt());
        assertEquals(5, d.qid());
        assertEquals(128, d.hrqsize());
        assertEquals(127, d.hsqsize());
        assertEquals(0x1234, d.cntlid());
        assertEquals(128, d.queueDepth());
    }

    @Test
    void shortPrivateDataIsInvalidLength() {
        assertNull(ConnectRequestData.parse(new byte[31]));
        assertNull(ConnectRequestData.parse(new byte[0]));
    }

    @Test
    void linuxHostQueuesAreAccepted() {
        assertNull(ConnectRequestData.parse(pd(0, 0, 32, 31)).validate(port, 128));
        assertNull(ConnectRequestData.parse(pd(0, 1, 128, 127)).validate(port, 128));
        assertNull(ConnectRequestData.parse(pd(0, 128, 128, 127)).validate(port, 128));
    }

    @Test
    void eachRejectReason() {
        assertEquals(RejectReason.INVALID_RECFMT, ConnectRequestData.parse(pd(1, 1, 128, 127)).validate(port, 128));
        assertEquals(RejectReason.INVALID_QID, ConnectRequestData.parse(pd(0, 129, 128, 127)).validate(port, 128));
        // admin queue above 32 entries
        assertEquals(RejectReason.INVALID_HSQSIZE, ConnectRequestData.parse(pd(0, 0, 32, 32)).validate(port, 128));
        // I/O queue above the port's depth, and an I/O queue of hsqsize 0 (what an all-zero payload says)
        assertEquals(RejectReason.INVALID_HSQSIZE, ConnectRequestData.parse(pd(0, 1, 128, 128)).validate(port, 128));
        assertEquals(RejectReason.INVALID_HSQSIZE, ConnectRequestData.parse(pd(0, 1, 128, 0)).validate(port, 128));
        assertEquals(RejectReason.INVALID_HRQSIZE, ConnectRequestData.parse(pd(0, 1, 0, 127)).validate(port, 128));
        assertEquals(RejectReason.INVALID_HRQSIZE, ConnectRequestData.parse(pd(0, 1, 129, 127)).validate(port, 128));
        // all zeros: recfmt 0, qid 0, hrqsize 0, hsqsize 0 -> hsqsize is checked first
        assertEquals(RejectReason.INVALID_HSQSIZE, ConnectRequestData.parse(new byte[56]).validate(port, 128));
    }

    @Test
    void rejectAndAcceptPrivateDataBytes() {
        assertArrayEquals(new byte[] {0, 0, 4, 0}, RdmaCmStatus.rejectPrivateData(RdmaCmStatus.INVALID_HSQSIZE));
        byte[] a = RdmaCmStatus.acceptPrivateData(0x180);
        assertEquals(32, a.length);
        assertEquals(0, a[0] | a[1]);
        assertEquals((byte) 0x80, a[2]);
        assertEquals(1, a[3]);
        for (RejectReason r : RejectReason.values()) {
            int s = RdmaCmStatus.statusOf(r);
            assertEquals(true, s >= 1 && s <= 8, r.name());
        }
        assertEquals(1, RdmaCmStatus.statusOf(RejectReason.INVALID_PRIVATE_DATA_LENGTH));
        assertEquals(7, RdmaCmStatus.statusOf(RejectReason.INVALID_IRD));
        assertEquals(8, RdmaCmStatus.statusOf(RejectReason.INVALID_ORD));
    }
}
