// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * The static accessors the engine uses (no flyweight per QP) read and write exactly the bytes the
 * flyweights do, at unaligned offsets.
 */
class StaticAccessorsTest {
    private static final int AT = 5;

    private static MemorySegment frame() {
        return MemorySegment.ofArray(new byte[64]);
    }

    @Test
    void bthWriteAtMatchesTheFlyweightAndTheReadersSeeIt() {
        MemorySegment a = frame();
        MemorySegment b = frame();
        Bth.writeAt(a, 0, 0x0A, true, 3, 0xBEEF, 0x123456, true, 0xABCDEF);
        new Bth().wrap(b, 0).write(0x0A, true, 3, 0xBEEF, 0x123456, true, 0xABCDEF);
        assertArrayEquals(b.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                a.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        assertEquals(0x0A, Bth.opcodeOf(a));
        assertEquals(0xBEEF, Bth.pkeyOf(a));
        assertEquals(0, Bth.tverOf(a));
        assertTrue(Bth.solicitedEventOf(a));
        assertTrue(Bth.ackReqOf(a));
        assertEquals(0xABCDEF, Bth.psnOf(a));
        Bth.writeAt(a, 0, 0x04, false, 0, 0xFFFF, 1, false, 2);
        assertFalse(Bth.solicitedEventOf(a));
        assertFalse(Bth.ackReqOf(a));
        new Bth().wrap(a, 0).tver(7);
        assertEquals(7, Bth.tverOf(a));
    }

    @Test
    void extensionHeadersRoundTripAgainstTheFlyweights() {
        MemorySegment s = frame();
        Reth.writeAt(s, AT, 0x1122334455667788L, 0xCAFEBABE, 0x7FFFFFFF);
        Reth r = new Reth().wrap(s, AT);
        assertEquals(0x1122334455667788L, r.virtualAddress());
        assertEquals(0xCAFEBABE, r.rkey());
        assertEquals(0x7FFFFFFF, r.dmaLength());
        assertEquals(r.virtualAddress(), Reth.virtualAddressAt(s, AT));
        assertEquals(r.rkey(), Reth.rkeyAt(s, AT));
        assertEquals(r.dmaLength(), Reth.dmaLengthAt(s, AT));

        AtomicEth.writeAt(s, AT, 0x1000, 0x42, -1L, 0x0102030405060708L);
        AtomicEth e = new AtomicEth().wrap(s, AT);
        assertEquals(0x1000, e.virtualAddress());
        assertEquals(0x42, AtomicEth.rkeyAt(s, AT));
        assertEquals(-1L, e.swapAdd());
        assertEquals(-1L, AtomicEth.swapAddAt(s, AT));
        assertEquals(0x0102030405060708L, AtomicEth.compareAt(s, AT));
        assertEquals(0x1000, AtomicEth.virtualAddressAt(s, AT));

        Deth.writeAt(s, AT, 0x80000001, 0xFFABCDEF);
        Deth d = new Deth().wrap(s, AT);
        assertEquals(0x80000001, d.qkey());
        assertEquals(0xABCDEF, d.srcQpn());
        assertEquals(0, s.get(java.lang.foreign.ValueLayout.JAVA_BYTE, AT + Deth.RESERVED_OFFSET), "reserved");
        assertEquals(0x80000001, Deth.qkeyAt(s, AT));
        assertEquals(0xABCDEF, Deth.srcQpnAt(s, AT));

        Aeth.writeAt(s, AT, Aeth.NAK_REMOTE_ACCESS, 0x345678);
        Aeth a = new Aeth().wrap(s, AT);
        assertEquals(Aeth.NAK_REMOTE_ACCESS, a.syndrome());
        assertEquals(0x345678, a.msn());
        assertEquals(Aeth.NAK_REMOTE_ACCESS, Aeth.syndromeAt(s, AT));

        AtomicAckEth.writeAt(s, AT, 0x8877665544332211L);
        assertEquals(0x8877665544332211L, new AtomicAckEth().wrap(s, AT).originalValue());
        assertEquals(0x8877665544332211L, AtomicAckEth.originalValueAt(s, AT));

        ImmDt.writeAt(s, AT, 0xDEADBEEF);
        assertEquals(0xDEADBEEF, new ImmDt().wrap(s, AT).immediate());
        assertEquals(0xDEADBEEF, ImmDt.immediateAt(s, AT));

        Ieth.writeAt(s, AT, 0x0BADF00D);
        assertEquals(0x0BADF00D, new Ieth().wrap(s, AT).rkey());
        assertEquals(0x0BADF00D, Ieth.rkeyAt(s, AT));
    }
}
