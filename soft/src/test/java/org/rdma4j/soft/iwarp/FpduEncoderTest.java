// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** FPDU sizing as siw does it, and the framing of a payload already in place. */
class FpduEncoderTest {
    @Test
    void oneFpduFillsOneEthernetSegmentAsSiwCutsIt() {
        // MSS 1460 -> 1456 (multiple of 8); less header and CRC
        assertEquals(1436, FpduEncoder.maxPayload(1460, Ddp.TAGGED_HEADER_LENGTH));
        assertEquals(1432, FpduEncoder.maxPayload(1460, Ddp.UNTAGGED_HEADER_LENGTH));
        assertEquals(1456, FpduEncoder.fpduLength(Ddp.TAGGED_HEADER_LENGTH, 1436));
        assertEquals(1456, FpduEncoder.fpduLength(Ddp.UNTAGGED_HEADER_LENGTH, 1432));
        assertEquals(FpduEncoder.maxPayload(1463, 16), FpduEncoder.maxPayload(1456, 16), "odd MSS rounds down to 8");
    }

    @Test
    void aHugeMssIsCappedByTheSixteenBitUlpduLength() {
        int payload = FpduEncoder.maxPayload(1 << 20, Ddp.TAGGED_HEADER_LENGTH);
        assertEquals(65520, payload);
        assertEquals(0, payload % 4, "no pad");
        assertEquals(65534, payload + Ddp.TAGGED_HEADER_LENGTH - Ddp.ULPDU_LENGTH_SIZE);
        assertEquals(65460, FpduEncoder.maxPayload(65483, Ddp.TAGGED_HEADER_LENGTH), "loopback's MSS");
    }

    @Test
    void anMssWithoutRoomForPayloadIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> FpduEncoder.maxPayload(24, Ddp.UNTAGGED_HEADER_LENGTH));
        assertEquals(4, FpduEncoder.maxPayload(24, Ddp.TAGGED_HEADER_LENGTH));
    }

    @Test
    void framingAPayloadInPlaceWritesOnlyLengthPadAndCrc() {
        MemorySegment tx = MemorySegment.ofArray(new byte[40]);
        tx.fill((byte) 0x77);
        Ddp.control(tx, 0, Rdmap.control(Rdmap.RDMA_READ_RESPONSE, true));
        Ddp.taggedHeader(tx, 0, 9, 0);
        int n = new FpduEncoder(true).frame(tx, 0, 16, 1); // payload byte 0x77 at 16 stays
        assertEquals(24, n);
        byte[] expected = Hex.withCrc(Hex.bytes(
                "00 0f c1 42 00 00 00 09 00 00 00 00 00 00 00 00 77 00 00 00 00 00 00 00"));
        assertEquals(Hex.of(expected), Hex.of(tx.asSlice(0, 24)));
        assertEquals((byte) 0x77, tx.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 24), "nothing written past the FPDU");
    }

    @Test
    void anFpduThatDoesNotFitIsRefusedBeforeAnythingIsWritten() {
        MemorySegment tx = MemorySegment.ofArray(new byte[27]);
        FpduEncoder e = new FpduEncoder(false);
        assertThrows(IndexOutOfBoundsException.class,
                () -> e.tagged(tx, 0, Rdmap.RDMA_WRITE, true, 1, 0, MemorySegment.ofArray(new byte[5]), 0, 5));
        assertEquals(0, tx.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0));
        assertThrows(IllegalArgumentException.class, () -> e.frame(tx, 0, 16, 65534), "ULPDU over 65535");
        assertThrows(IllegalArgumentException.class,
                () -> e.tagged(tx, 0, Rdmap.SEND, true, 1, 0, tx, 0, 0), "a Send is not tagged");
        assertThrows(IllegalArgumentException.class,
                () -> e.send(tx, 0, Rdmap.RDMA_WRITE, true, 0, 1, 0, tx, 0, 0), "a Write is not a Send");
    }
}
