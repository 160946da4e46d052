// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class BthTest {
    private static final int AT = 3; // odd offset: headers are unaligned in real frames

    private final byte[] bytes = new byte[AT + Bth.LENGTH + 2];
    private final MemorySegment segment = MemorySegment.ofArray(bytes);
    private final Bth bth = new Bth().wrap(segment, AT);

    @Test
    void constantsDescribeTheTwelveByteLayout() {
        assertEquals(12, Bth.LENGTH);
        assertEquals(0, Bth.OPCODE_OFFSET);
        assertEquals(2, Bth.PKEY_OFFSET);
        assertEquals(4, Bth.ECN_OFFSET);
        assertEquals(5, Bth.DEST_QPN_OFFSET);
        assertEquals(8, Bth.ACK_REQ_OFFSET);
        assertEquals(9, Bth.PSN_OFFSET);
        assertSame(segment, bth.segment());
        assertEquals(AT, bth.offset());
    }

    @Test
    void fieldsRoundTripIncludingEdgeValues() {
        for (int opcode : new int[] {0x00, 0x11, 0x7F, 0x80, 0xFF}) {
            assertEquals(opcode, bth.opcode(opcode).opcode());
        }
        for (int pad = 0; pad < 4; pad++) {
            assertEquals(pad, bth.padCount(pad).padCount());
        }
        for (int tver = 0; tver < 16; tver++) {
            assertEquals(tver, bth.tver(tver).tver());
        }
        for (int pkey : new int[] {0, 0x7FFF, 0x8000, 0xFFFF}) {
            assertEquals(pkey, bth.pkey(pkey).pkey());
        }
        for (int qpn : new int[] {0, 1, 0x7FFFFF, 0x800000, 0xFFFFFF}) {
            assertEquals(qpn, bth.destQpn(qpn).destQpn());
            assertEquals(qpn, bth.psn(qpn).psn());
        }
        for (boolean on : new boolean[] {true, false}) {
            assertEquals(on, bth.solicitedEvent(on).solicitedEvent());
            assertEquals(on, bth.migReq(on).migReq());
            assertEquals(on, bth.fecn(on).fecn());
            assertEquals(on, bth.becn(on).becn());
            assertEquals(on, bth.ackReq(on).ackReq());
        }
    }

    @Test
    void twentyFourBitSettersDropHighBitsInsteadOfSpillingIntoNeighbours() {
        Arrays.fill(bytes, (byte) 0);
        bth.destQpn(0x7F00_0001).psn(0xFF00_0002);
        assertEquals(1, bth.destQpn());
        assertEquals(2, bth.psn());
        assertEquals(0, bytes[AT + Bth.ECN_OFFSET]);
        assertEquals(0, bytes[AT + Bth.ACK_REQ_OFFSET]);
        assertEquals(0, bytes[AT - 1]);
        assertEquals(0, bytes[AT + Bth.LENGTH]);
    }

    @Test
    void eachSetterChangesOnlyItsOwnBits() {
        assertOnlyChanges(b -> b.opcode(0), new int[] {0}, new int[] {0xFF});
        assertOnlyChanges(b -> b.solicitedEvent(false), new int[] {1}, new int[] {0x80});
        assertOnlyChanges(b -> b.migReq(false), new int[] {1}, new int[] {0x40});
        assertOnlyChanges(b -> b.padCount(0), new int[] {1}, new int[] {0x30});
        assertOnlyChanges(b -> b.tver(0), new int[] {1}, new int[] {0x0F});
        assertOnlyChanges(b -> b.pkey(0), new int[] {2, 3}, new int[] {0xFF, 0xFF});
        assertOnlyChanges(b -> b.fecn(false), new int[] {4}, new int[] {0x80});
        assertOnlyChanges(b -> b.becn(false), new int[] {4}, new int[] {0x40});
        assertOnlyChanges(b -> b.destQpn(0), new int[] {5, 6, 7}, new int[] {0xFF, 0xFF, 0xFF});
        assertOnlyChanges(b -> b.ackReq(false), new int[] {8}, new int[] {0x80});
        assertOnlyChanges(b -> b.psn(0), new int[] {9, 10, 11}, new int[] {0xFF, 0xFF, 0xFF});
    }

    private void assertOnlyChanges(Consumer<Bth> setter, int[] positions, int[] clearedBits) {
        Arrays.fill(bytes, (byte) 0xFF);
        setter.accept(bth);
        byte[] expected = new byte[bytes.length];
        Arrays.fill(expected, (byte) 0xFF);
        for (int i = 0; i < positions.length; i++) {
            expected[AT + positions[i]] = (byte) (0xFF & ~clearedBits[i]);
        }
        assertArrayEquals(expected, bytes);
    }

    @Test
    void writeProducesTheCapturedRxeSendFirstHeader() {
        byte[] golden = Golden.bytes(Golden.IPV4_SEND_FIRST);
        Arrays.fill(bytes, (byte) 0x55);
        bth.write(Opcode.RC_SEND_FIRST, false, 0, Bth.DEFAULT_PKEY, 0xABC, false, 0x6122EE);
        assertArrayEquals(Arrays.copyOfRange(golden, 28, 40), Arrays.copyOfRange(bytes, AT, AT + Bth.LENGTH));
    }

    @Test
    void writeMatchesTheIndividualSetters() {
        bth.write(0x0A, true, 3, 0x8001, 0xFEDCBA, true, 0x123456);
        byte[] viaWrite = Arrays.copyOfRange(bytes, AT, AT + Bth.LENGTH);
        Arrays.fill(bytes, (byte) 0);
        bth.opcode(0x0A).solicitedEvent(true).padCount(3).pkey(0x8001).destQpn(0xFEDCBA).ackReq(true).psn(0x123456);
        assertArrayEquals(viaWrite, Arrays.copyOfRange(bytes, AT, AT + Bth.LENGTH));
        assertFalse(bth.migReq());
        assertTrue(bth.solicitedEvent());
    }

    @Test
    void clearZeroesExactlyTheHeader() {
        Arrays.fill(bytes, (byte) 0xFF);
        bth.clear();
        for (int i = 0; i < bytes.length; i++) {
            assertEquals(i >= AT && i < AT + Bth.LENGTH ? 0 : (byte) 0xFF, bytes[i], "byte " + i);
        }
    }

    @Test
    void padCountForRoundsPayloadUpToFourBytes() {
        assertEquals(0, Bth.padCountFor(0));
        assertEquals(3, Bth.padCountFor(1));
        assertEquals(2, Bth.padCountFor(2));
        assertEquals(1, Bth.padCountFor(3));
        assertEquals(0, Bth.padCountFor(1024));
        assertEquals(3, Bth.padCountFor(4097));
    }
}
