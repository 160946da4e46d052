// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class ExtensionHeaderTest {
    private static final int AT = 5; // odd offset: headers are unaligned in real frames

    private final byte[] bytes = new byte[AT + 32];
    private final MemorySegment segment = MemorySegment.ofArray(bytes);

    private String wire(int length) {
        return HexFormat.of().formatHex(bytes, AT, AT + length);
    }

    @Test
    void lengthsMatchTheSpecification() {
        assertEquals(16, Reth.LENGTH);
        assertEquals(4, Aeth.LENGTH);
        assertEquals(28, AtomicEth.LENGTH);
        assertEquals(8, AtomicAckEth.LENGTH);
        assertEquals(4, ImmDt.LENGTH);
        assertEquals(4, Ieth.LENGTH);
        assertEquals(8, Deth.LENGTH);
    }

    @Test
    void rethRoundTripsBigEndian() {
        Reth reth = new Reth().wrap(segment, AT)
                .virtualAddress(0x0102_0304_0506_0708L).rkey(0x8A0B_0C0D).dmaLength(0xFFFF_FFF0);
        assertEquals("0102030405060708" + "8a0b0c0d" + "fffffff0", wire(Reth.LENGTH));
        assertEquals(0x0102_0304_0506_0708L, reth.virtualAddress());
        assertEquals(0x8A0B_0C0D, reth.rkey());
        assertEquals(0xFFFF_FFF0L, Integer.toUnsignedLong(reth.dmaLength()), "DMA length is unsigned");
        assertEquals(-1L, reth.virtualAddress(-1L).virtualAddress());
        assertEquals(Long.MIN_VALUE, reth.virtualAddress(Long.MIN_VALUE).virtualAddress());
    }

    @Test
    void aethRoundTripsAndMsnKeepsTheSyndrome() {
        Aeth aeth = new Aeth().wrap(segment, AT).write(Aeth.ACK_CREDITS_INVALID, 1);
        assertEquals("1f000001", wire(Aeth.LENGTH), "the golden rxe ACK's AETH");
        aeth.msn(0xFFFF_FFFF);
        assertEquals(Aeth.ACK_CREDITS_INVALID, aeth.syndrome());
        assertEquals(0xFFFFFF, aeth.msn());
        aeth.syndrome(Aeth.NAK_REMOTE_ACCESS);
        assertEquals(0xFFFFFF, aeth.msn());
        assertEquals(0x62, aeth.syndrome());
        assertEquals(0xE0, aeth.syndrome(0xE0).syndrome(), "high bit of the byte survives");
    }

    @Test
    void aethSyndromeHelpersClassifyAcksRnrNaksAndNaks() {
        assertTrue(Aeth.isAck(Aeth.ACK_CREDITS_INVALID));
        assertTrue(Aeth.isAck(0x00));
        assertEquals(31, Aeth.credits(Aeth.ACK_CREDITS_INVALID));
        assertFalse(Aeth.isNak(Aeth.ACK_CREDITS_INVALID));

        int rnr = Aeth.rnrNak(12);
        assertEquals(0x2C, rnr);
        assertTrue(Aeth.isRnrNak(rnr));
        assertFalse(Aeth.isAck(rnr));
        assertFalse(Aeth.isNak(rnr));
        assertEquals(12, Aeth.rnrTimerCode(rnr));
        assertEquals(Aeth.RNR_NAK | 31, Aeth.rnrNak(31));

        for (int nak : new int[] {Aeth.NAK_PSN_SEQ_ERR, Aeth.NAK_INVALID_REQUEST, Aeth.NAK_REMOTE_ACCESS, Aeth.NAK_REMOTE_OP}) {
            assertTrue(Aeth.isNak(nak));
            assertFalse(Aeth.isAck(nak));
            assertFalse(Aeth.isRnrNak(nak));
        }
        assertEquals(0, Aeth.nakCode(Aeth.NAK_PSN_SEQ_ERR));
        assertEquals(3, Aeth.nakCode(Aeth.NAK_REMOTE_OP));
        assertFalse(Aeth.isAck(0x40) || Aeth.isRnrNak(0x40) || Aeth.isNak(0x40), "type 10 is reserved");
    }

    @Test
    void atomicEthRoundTripsBigEndian() {
        AtomicEth atomic = new AtomicEth().wrap(segment, AT)
                .virtualAddress(0x1000).rkey(-2).swapAdd(Long.MIN_VALUE).compare(0x0102_0304_0506_0708L);
        assertEquals("0000000000001000" + "fffffffe" + "8000000000000000" + "0102030405060708", wire(AtomicEth.LENGTH));
        assertEquals(0x1000, atomic.virtualAddress());
        assertEquals(-2, atomic.rkey());
        assertEquals(Long.MIN_VALUE, atomic.swapAdd());
        assertEquals(0x0102_0304_0506_0708L, atomic.compare());
    }

    @Test
    void atomicAckEthRoundTripsBigEndian() {
        AtomicAckEth ack = new AtomicAckEth().wrap(segment, AT).originalValue(-1L);
        assertEquals(-1L, ack.originalValue());
        ack.originalValue(0x00FF_0000_0000_0001L);
        assertEquals("00ff000000000001", wire(AtomicAckEth.LENGTH));
        assertEquals(0x00FF_0000_0000_0001L, ack.originalValue());
    }

    @Test
    void immDtKeepsNetworkOrder() {
        ImmDt imm = new ImmDt().wrap(segment, AT).immediate(0xDEAD_BEEF);
        assertEquals("deadbeef", wire(ImmDt.LENGTH));
        assertEquals(0xDEAD_BEEF, imm.immediate());
        assertEquals(Integer.MIN_VALUE, imm.immediate(Integer.MIN_VALUE).immediate());
    }

    @Test
    void iethRoundTripsBigEndian() {
        Ieth ieth = new Ieth().wrap(segment, AT).rkey(0x1234_5678);
        assertEquals("12345678", wire(Ieth.LENGTH));
        assertEquals(0x1234_5678, ieth.rkey());
        assertEquals(-1, ieth.rkey(-1).rkey());
    }

    @Test
    void dethRoundTripsAndSourceQpnKeepsTheReservedByte() {
        Arrays.fill(bytes, (byte) 0xAA);
        Deth deth = new Deth().wrap(segment, AT).qkey(Deth.GSI_QKEY).srcQpn(1);
        assertEquals("80010000" + "aa" + "000001", wire(Deth.LENGTH));
        assertEquals(Deth.GSI_QKEY, deth.qkey());
        assertEquals(1, deth.srcQpn());
        assertEquals(0xFFFFFF, deth.srcQpn(0xFFFF_FFFF).srcQpn());
        assertEquals((byte) 0xAA, bytes[AT + Deth.RESERVED_OFFSET]);
    }

    @Test
    void flyweightsNeverTouchBytesOutsideTheirHeader() {
        Arrays.fill(bytes, (byte) 0x33);
        new Reth().wrap(segment, AT).virtualAddress(-1).rkey(-1).dmaLength(-1);
        new AtomicEth().wrap(segment, AT).virtualAddress(-1).rkey(-1).swapAdd(-1).compare(-1);
        byte[] before = Arrays.copyOfRange(bytes, 0, AT);
        byte[] after = Arrays.copyOfRange(bytes, AT + AtomicEth.LENGTH, bytes.length);
        byte[] untouched = new byte[AT];
        Arrays.fill(untouched, (byte) 0x33);
        assertArrayEquals(untouched, before);
        assertTrue(after.length > 0);
        for (byte b : after) {
            assertEquals(0x33, b);
        }
    }

    @Test
    void wrapRepointsAReusedFlyweight() {
        Reth reth = new Reth();
        byte[] a = new byte[Reth.LENGTH];
        byte[] b = new byte[Reth.LENGTH + 8];
        reth.wrap(MemorySegment.ofArray(a), 0).rkey(1);
        reth.wrap(MemorySegment.ofArray(b), 8).rkey(2);
        assertEquals(1, reth.wrap(MemorySegment.ofArray(a), 0).rkey());
        assertEquals(2, reth.wrap(MemorySegment.ofArray(b), 8).rkey());
    }
}
