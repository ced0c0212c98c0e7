package dev.nvmf.target.rdma.queue;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SendBudgetTest {
    @Test
    void chainsAreReservedWholeAndReadsNeedBothCredits() {
        SendBudget b = new SendBudget(4, 1);
        assertTrue(b.fits(2));
        b.reserve(2);
        b.reserveRead();
        assertEquals(1, b.available());
        assertFalse(b.fitsRead()); // READ depth exhausted even though one SQ slot is free
        assertFalse(b.fits(2));
        assertTrue(b.fits(1));
        assertThrows(IllegalStateException.class, () -> b.reserve(2));
        b.releaseRead();
        b.release(2);
        assertTrue(b.idle());
        assertThrows(IllegalStateException.class, () -> b.release(1));
    }

    @Test
    void aChainOfReadsTakesOneCreditAndOneSlotPerRead() {
        SendBudget b = new SendBudget(6, 4);
        assertEquals(4, b.readsFitting(16), "READ depth bounds a part");
        b.reserve(3); // a response chain
        assertEquals(3, b.readsFitting(16), "so do the send slots left");
        assertEquals(2, b.readsFitting(2));
        b.reserveReads(3);
        assertEquals(0, b.available());
        assertEquals(1, b.readAvailable());
        assertEquals(0, b.readsFitting(5));
        assertFalse(b.fitsRead());
        assertThrows(IllegalStateException.class, () -> b.reserveReads(1));
        b.releaseReads(3);
        b.release(3);
        assertTrue(b.idle());
        assertThrows(IllegalStateException.class, () -> b.releaseReads(1));
    }

    @Test
    void fifoKeepsArrivalOrder() {
        RequestFifo f = new RequestFifo();
        java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofAuto();
        RdmaRequest[] r = new RdmaRequest[4];
        for (int i = 0; i < 4; i++) {
            r[i] = new RdmaRequest(null, i, arena.allocate(128), arena.allocate(64), arena.allocate(RdmaRequest.WR_MEMORY));
            f.add(r[i]);
        }
        assertEquals(4, f.size());
        assertEquals(r[0], f.poll());
        f.add(r[0]);
        assertEquals(r[1], f.poll());
        assertEquals(r[2], f.poll());
        assertEquals(r[3], f.poll());
        assertEquals(r[0], f.poll());
        assertTrue(f.isEmpty());
        assertEquals(null, f.poll());
    }
}
