// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * MPA request, reply and reject frames, written out by hand from RFC 5044 7.1 and RFC 6581 3 (keys in
 * ASCII, big-endian length and IRD/ORD words), decoded and re-encoded.
 */
class MpaFrameTest {
    /** "MPA ID Req Frame". */
    private static final String REQ_KEY = "4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65";
    /** "MPA ID Rep Frame". */
    private static final String REP_KEY = "4d 50 41 20 49 44 20 52 65 70 20 46 72 61 6d 65";
    /** siw's default request: revision 2, Enhanced, no CRC, IRD 8, ORD 8, then "hello". */
    private static final String SIW_REQUEST = REQ_KEY + " 10 02 00 09  00 08 00 08  68 65 6c 6c 6f";
    /** A peer-to-peer reply: CRC and Enhanced, IRD 16 with P, ORD 4 with the Write RTR. */
    private static final String P2P_REPLY = REP_KEY + " 50 02 00 04  80 10 80 04";
    /** A revision 1 reject carrying "no!". */
    private static final String REJECT = REP_KEY + " 20 01 00 03  6e 6f 21";

    private final MpaFrame frame = new MpaFrame();

    @Test
    void siwsEnhancedRequestDecodesToItsFields() {
        MemorySegment s = Hex.segment(SIW_REQUEST);
        assertEquals(MpaStatus.COMPLETE, frame.decode(s, 0, s.byteSize(), false, false));
        assertEquals(29, frame.frameLength());
        assertEquals(2, frame.revision());
        assertTrue(frame.enhanced());
        assertFalse(frame.crc());
        assertFalse(frame.reject());
        assertEquals(9, frame.privateDataLength());
        assertEquals(8, frame.ird());
        assertEquals(8, frame.ord());
        assertEquals(24, frame.ulpPrivateDataOffset());
        assertEquals(5, frame.ulpPrivateDataLength());
        assertEquals("hello", new String(s.asSlice(24, 5).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                StandardCharsets.US_ASCII));
    }

    @Test
    void encodingSiwsRequestGivesTheSameBytes() {
        MemorySegment out = MemorySegment.ofArray(new byte[29]);
        byte[] hello = "hello".getBytes(StandardCharsets.US_ASCII);
        int n = MpaFrame.encode(out, 0, false, MpaFrame.FLAG_ENHANCED, 2, 8, 8, MemorySegment.ofArray(hello), 0, 5);
        assertEquals(29, n);
        assertEquals(Hex.of(Hex.bytes(SIW_REQUEST)), Hex.of(out));
    }

    @Test
    void peerToPeerReplyCarriesItsRtrBitsBesideTheValues() {
        MemorySegment s = Hex.segment(P2P_REPLY);
        assertEquals(MpaStatus.COMPLETE, frame.decode(s, 0, s.byteSize(), true, false));
        assertTrue(frame.crc());
        assertEquals(16, frame.ird());
        assertEquals(4, frame.ord());
        assertEquals(MpaFrame.IRD_PEER_TO_PEER, frame.irdWord() & MpaFrame.IRD_PEER_TO_PEER);
        assertEquals(MpaFrame.ORD_WRITE_RTR, frame.ordWord() & (MpaFrame.ORD_WRITE_RTR | MpaFrame.ORD_READ_RTR));
        assertEquals(0, frame.ulpPrivateDataLength());
        MemorySegment out = MemorySegment.ofArray(new byte[24]);
        MpaFrame.encode(out, 0, true, MpaFrame.FLAG_CRC | MpaFrame.FLAG_ENHANCED, 2,
                16 | MpaFrame.IRD_PEER_TO_PEER, 4 | MpaFrame.ORD_WRITE_RTR, out, 0, 0);
        assertEquals(Hex.of(Hex.bytes(P2P_REPLY)), Hex.of(out));
    }

    @Test
    void revisionOneRejectKeepsAllItsPrivateDataForTheUlp() {
        MemorySegment s = Hex.segment(REJECT);
        assertEquals(MpaStatus.COMPLETE, frame.decode(s, 0, s.byteSize(), true, false));
        assertTrue(frame.reject());
        assertFalse(frame.enhanced(), "revision 1 has no IRD/ORD words");
        assertEquals(20, frame.ulpPrivateDataOffset());
        assertEquals(3, frame.ulpPrivateDataLength());
    }

    @Test
    void theEnhancedFlagMeansNothingInRevisionOne() {
        MemorySegment s = Hex.segment(REQ_KEY + " 10 01 00 02 ab cd");
        assertEquals(MpaStatus.COMPLETE, frame.decode(s, 0, s.byteSize(), false, false));
        assertFalse(frame.enhanced());
        assertEquals(2, frame.ulpPrivateDataLength());
        assertEquals(0, frame.ird());
    }

    @Test
    void aPartialFrameSaysHowManyMoreBytesItNeeds() {
        MemorySegment s = Hex.segment(SIW_REQUEST);
        assertEquals(MpaStatus.NEED_MORE, frame.decode(s, 0, 0, false, false));
        assertEquals(20, frame.missingBytes());
        assertEquals(MpaStatus.NEED_MORE, frame.decode(s, 0, 19, false, false));
        assertEquals(1, frame.missingBytes());
        assertEquals(MpaStatus.NEED_MORE, frame.decode(s, 0, 20, false, false));
        assertEquals(9, frame.missingBytes(), "the header says 9 bytes of private data");
        assertEquals(MpaStatus.NEED_MORE, frame.decode(s, 0, 28, false, false));
        assertEquals(1, frame.missingBytes());
        assertEquals(MpaStatus.COMPLETE, frame.decode(s, 0, 29, false, false));
    }

    @Test
    void aFrameCutByTheStreamEndIsTruncatedNotWaitedFor() {
        MemorySegment s = Hex.segment(SIW_REQUEST);
        assertEquals(MpaStatus.TRUNCATED, frame.decode(s, 0, 10, false, true));
        assertEquals(MpaStatus.TRUNCATED, frame.decode(s, 0, 25, false, true));
        assertEquals(4, frame.missingBytes());
        assertEquals(MpaStatus.COMPLETE, frame.decode(s, 0, 29, false, true));
    }

    @Test
    void aRequestWhereAReplyIsExpectedHasTheWrongKeyAsSoonAsTheKeysDiffer() {
        MemorySegment s = Hex.segment(SIW_REQUEST);
        assertEquals(MpaStatus.NEED_MORE, frame.decode(s, 0, 9, true, false), "the keys agree up to 'Re'");
        assertEquals(MpaStatus.WRONG_KEY, frame.decode(s, 0, 10, true, false), "'q' is not 'p'");
        MemorySegment http = MemorySegment.ofArray("GET / HTTP/1.1\r\n\r\n1234".getBytes(StandardCharsets.US_ASCII));
        assertEquals(MpaStatus.WRONG_KEY, frame.decode(http, 0, http.byteSize(), false, false));
        assertTrue(MpaStatus.WRONG_KEY.error());
    }

    @Test
    void revisionsOtherThanOneAndTwoAreRefused() {
        for (String rev : new String[] {"00", "03", "ff"}) {
            MemorySegment s = Hex.segment(REQ_KEY + " 00 " + rev + " 00 00");
            assertEquals(MpaStatus.BAD_REVISION, frame.decode(s, 0, s.byteSize(), false, false), rev);
        }
    }

    @Test
    void privateDataOverSiwsLimitIsRefusedFromTheHeaderAlone() {
        MemorySegment s = Hex.segment(REQ_KEY + " 00 01 01 01");
        assertEquals(MpaStatus.PRIVATE_DATA_TOO_LONG, frame.decode(s, 0, s.byteSize(), false, false),
                "257 bytes announced; none sent yet, no waiting for them");
        MemorySegment max = MemorySegment.ofArray(new byte[20 + 256]);
        MemorySegment.copy(Hex.segment(REQ_KEY + " 00 01 01 00"), 0, max, 0, 20);
        assertEquals(MpaStatus.COMPLETE, frame.decode(max, 0, max.byteSize(), false, false), "256 is the limit");
    }

    @Test
    void markersAreRefusedButTheHeaderIsThereForTheReject() {
        MemorySegment s = Hex.segment(REQ_KEY + " c0 01 00 00");
        assertEquals(MpaStatus.MARKERS_REQUESTED, frame.decode(s, 0, s.byteSize(), false, false));
        assertTrue(frame.crc(), "the responder builds its reject from the request's flags");
    }

    @Test
    void anEnhancedFrameWithoutRoomForIrdAndOrdIsRefused() {
        MemorySegment s = Hex.segment(REQ_KEY + " 10 02 00 02 00 01");
        assertEquals(MpaStatus.ENHANCED_WITHOUT_IRD_ORD, frame.decode(s, 0, s.byteSize(), false, false));
    }

    @Test
    void encodingRefusesWhatTheDecoderWouldRefuse() {
        MemorySegment out = MemorySegment.ofArray(new byte[400]);
        MemorySegment data = MemorySegment.ofArray(new byte[300]);
        assertThrows(IllegalArgumentException.class,
                () -> MpaFrame.encode(out, 0, false, MpaFrame.FLAG_ENHANCED, 2, 1, 1, data, 0, 253));
        assertEquals(276, MpaFrame.encode(out, 0, false, MpaFrame.FLAG_ENHANCED, 2, 1, 1, data, 0, 252));
        assertThrows(IllegalArgumentException.class, () -> MpaFrame.encode(out, 0, false, 0, 1, 0, 0, data, 0, 257));
        assertThrows(IllegalArgumentException.class, () -> MpaFrame.encode(out, 0, false, 0, 3, 0, 0, data, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> MpaFrame.encode(out, 0, false, 0x01, 1, 0, 0, data, 0, 0));
        assertThrows(IllegalArgumentException.class,
                () -> MpaFrame.encode(out, 0, false, MpaFrame.FLAG_ENHANCED, 1, 0, 0, data, 0, 0));
        assertThrows(IllegalArgumentException.class,
                () -> MpaFrame.encode(out, 390, false, 0, 1, 0, 0, data, 0, 0), "does not fit");
    }

    @Test
    void byteBufferEncodeAndDecodeAgreeWithTheSegmentForms() {
        ByteBuffer b = ByteBuffer.allocate(64);
        b.position(3);
        int n = MpaFrame.encode(b, true, MpaFrame.FLAG_REJECT, 1, 0, 0, "no!".getBytes(StandardCharsets.US_ASCII));
        assertEquals(23, n);
        assertEquals(26, b.position());
        b.flip().position(3);
        assertEquals(MpaStatus.COMPLETE, frame.decode(b, true, false));
        assertEquals(3, b.position(), "decoding does not consume");
        byte[] got = new byte[23];
        b.get(got);
        assertArrayEquals(Hex.bytes(REJECT), got);
    }

    @Test
    void everyStatusHasWords() {
        for (MpaStatus st : MpaStatus.values()) {
            assertFalse(st.words().isBlank(), st.name());
        }
        assertFalse(MpaStatus.NEED_MORE.error());
        assertFalse(MpaStatus.COMPLETE.error());
    }
}
