// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.iwarp.MpaHostileResponderTest.REP_KEY;
import static org.rdma4j.soft.iwarp.MpaHostileResponderTest.REQ_KEY;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.VerbsException;

/**
 * The exact bytes the engines send, written out by hand from the layouts (MPA frame: 16-byte key, flags,
 * revision, 16-bit length, IRD/ORD words; FPDU: ULPDU length, control, DDP header, CRC field), and the
 * engines driven by bytes and an injected clock, without sockets.
 */
class MpaKnownAnswerTest {
    private static final MpaConfig SIW = MpaConfig.siwDefaults();
    private static final byte[] HELLO = "hello".getBytes(StandardCharsets.US_ASCII);

    private static byte[] drain(MpaEngine e) {
        ByteBuffer out = e.outbox();
        byte[] bytes = new byte[out.remaining()];
        out.get(bytes);
        return bytes;
    }

    private static void feed(MpaEngine e, byte[] bytes, long nowNs) {
        e.feed(ByteBuffer.wrap(bytes));
        e.advance(nowNs);
    }

    @Test
    void siwDefaultRequestIsRevisionTwoEnhancedWithIrdOrdBeforeThePrivateData() {
        MpaInitiator i = new MpaInitiator(SIW, 8, 8, HELLO, "kat");
        i.advance(0);
        // E (0x10), revision 2, length 9 = 4 (IRD/ORD) + 5, IRD 8, ORD 8, "hello".
        assertArrayEquals(Hex.bytes(REQ_KEY + " 10 02 00 09  00 08 00 08  68 65 6c 6c 6f"), drain(i));
    }

    @Test
    void peerToPeerRequestSetsPAndOffersBothRtrsWithAnOrdOfAtLeastOne() {
        MpaInitiator i = new MpaInitiator(SIW.withPeerToPeer(MpaFrame.ORD_WRITE_RTR | MpaFrame.ORD_READ_RTR), 8, 0,
                new byte[0], "kat");
        i.advance(0);
        assertArrayEquals(Hex.bytes(REQ_KEY + " 10 02 00 04  80 08 c0 01"), drain(i));
    }

    @Test
    void revisionOneRequestWithCrcHasNoIrdOrdWords() {
        MpaInitiator i = new MpaInitiator(SIW.withRevision(1).withCrc(true), 8, 8, "hi".getBytes(
                StandardCharsets.US_ASCII), "kat");
        i.advance(0);
        assertArrayEquals(Hex.bytes(REQ_KEY + " 40 01 00 02  68 69"), drain(i));
    }

    @Test
    void siwRequestIsAcceptedWithTheReplyBytesSiwWouldSend() {
        MpaResponder r = new MpaResponder(SIW, "kat");
        feed(r, Hex.bytes(REQ_KEY + " 10 02 00 09  00 08 00 08  68 65 6c 6c 6f"), 0);
        assertTrue(r.awaitingDecision());
        assertArrayEquals(HELLO, r.request().privateData());
        r.accept(8, 8, "ok".getBytes(StandardCharsets.US_ASCII));
        assertArrayEquals(Hex.bytes(REP_KEY + " 10 02 00 06  00 08 00 08  6f 6b"), drain(r));
        r.advance(1);
        assertNotNull(r.connection());
    }

    @Test
    void rejectEchoesTheRequestsFlagsWithRAndCarriesThePrivateData() {
        MpaResponder r = new MpaResponder(SIW, "kat");
        feed(r, Hex.bytes(REQ_KEY + " 50 02 00 04  00 02 00 03"), 0);
        r.reject(new byte[] {7});
        // C and E echoed, R added; IRD/ORD as negotiated (our IRD 3 = peer ORD, our ORD 2 = peer IRD).
        assertArrayEquals(Hex.bytes(REP_KEY + " 70 02 00 05  00 03 00 02  07"), drain(r));
        r.advance(1);
        assertTrue(r.rejected());
        assertNull(r.connection());
    }

    @Test
    void writeRtrIsAZeroLengthTaggedWriteToStagOne() {
        MpaInitiator i = new MpaInitiator(SIW.withPeerToPeer(MpaFrame.ORD_WRITE_RTR), 8, 8, new byte[0], "kat");
        i.advance(0);
        drain(i);
        feed(i, Hex.bytes(REP_KEY + " 10 02 00 04  80 08 80 08"), 1);
        // ULPDU length 14; T|L, DDP v1, RDMAP v1, opcode 0; STag 1; offset 0; CRC field zero (CRC off).
        assertArrayEquals(Hex.bytes("00 0e c1 40  00 00 00 01  00 00 00 00 00 00 00 00  00 00 00 00"), drain(i));
        i.advance(2);
        assertEquals(MpaRtr.WRITE, i.connection().rtr());
    }

    @Test
    void readRtrIsAZeroLengthReadRequestWithMsnOneAndItsCrcWhenNegotiated() {
        MpaInitiator i = new MpaInitiator(SIW.withPeerToPeer(MpaFrame.ORD_READ_RTR), 8, 8, new byte[0], "kat");
        i.advance(0);
        drain(i);
        feed(i, Hex.bytes(REP_KEY + " 50 02 00 04  80 08 40 08"), 1);
        // ULPDU length 46; L, versions 1, opcode 1; reserved; queue 1; MSN 1; MO 0; sink STag 0, offset 0;
        // size 0; source STag 1, offset 0; CRC32c of all that, low byte first.
        byte[] expected = Hex.withCrc(Hex.bytes("00 2e 41 41  00 00 00 00  00 00 00 01  00 00 00 01  00 00 00 00"
                + " 00 00 00 00  00 00 00 00 00 00 00 00  00 00 00 00  00 00 00 01  00 00 00 00 00 00 00 00"
                + " 00 00 00 00"));
        byte[] sent = drain(i);
        assertArrayEquals(expected, sent, Hex.of(sent));
        assertTrue(MpaRtr.READ.matches(java.lang.foreign.MemorySegment.ofArray(sent), 0, true));
        i.advance(2);
        assertTrue(i.connection().crc());
    }

    @Test
    void responderAnswersAReadRtrWithAZeroLengthReadResponseToTheSink() {
        MpaResponder r = new MpaResponder(SIW, "kat");
        feed(r, Hex.bytes(REQ_KEY + " 10 02 00 04  80 08 40 08"), 0);
        r.accept(8, 8, new byte[0]);
        assertArrayEquals(Hex.bytes(REP_KEY + " 10 02 00 04  80 08 40 08"), drain(r));
        r.advance(1);
        assertNull(r.connection(), "not established before the RTR");
        byte[] readRtr = Hex.bytes("00 2e 41 41  00 00 00 00  00 00 00 01  00 00 00 01  00 00 00 00"
                + " 00 00 00 05  00 00 00 00 00 00 00 40  00 00 00 00  00 00 00 01  00 00 00 00 00 00 00 00"
                + " 00 00 00 00");
        feed(r, readRtr, 2);
        // Read Response: T|L, opcode 2, to the request's sink STag 5 and offset 0x40.
        assertArrayEquals(Hex.bytes("00 0e c1 42  00 00 00 05  00 00 00 00 00 00 00 40  00 00 00 00"), drain(r));
        r.advance(3);
        assertEquals(MpaRtr.READ, r.connection().rtr());
    }

    @Test
    void replyFedOneByteAtATimeEstablishesOnlyWithItsLastByte() {
        MpaInitiator i = new MpaInitiator(SIW, 8, 8, HELLO, "kat");
        i.advance(0);
        drain(i);
        byte[] reply = Hex.bytes(REP_KEY + " 10 02 00 05  00 08 00 08  21");
        for (int n = 0; n < reply.length; n++) {
            assertNull(i.connection(), "established after " + n + " bytes");
            feed(i, new byte[] {reply[n]}, n);
        }
        assertNotNull(i.connection());
        assertArrayEquals(new byte[] {'!'}, i.connection().peerPrivateData());
    }

    @Test
    void bytesFedWithTheReplyAreCarriedOver() {
        MpaInitiator i = new MpaInitiator(SIW, 8, 8, HELLO, "kat");
        i.advance(0);
        drain(i);
        byte[] fpdus = Hex.bytes("00 0e c1 40  00 00 00 01  00 00 00 00 00 00 00 00  00 00 00 00  ab cd");
        feed(i, Hex.concat(Hex.bytes(REP_KEY + " 10 02 00 04  00 08 00 08"), fpdus), 1);
        ByteBuffer kept = i.connection().carryOver();
        byte[] bytes = new byte[kept.remaining()];
        kept.get(bytes);
        assertArrayEquals(fpdus, bytes);
    }

    @Test
    void replyTimeoutCountsFromTheRequestOnTheInjectedClock() {
        MpaInitiator i = new MpaInitiator(SIW, 8, 8, HELLO, "kat");
        i.advance(1_000);
        feed(i, Hex.bytes(REP_KEY + " 10"), 1_000 + MpaConfig.SIW_REPLY_TIMEOUT_NS - 1);
        assertNull(i.failure());
        assertEquals(1_000 + MpaConfig.SIW_REPLY_TIMEOUT_NS, i.deadlineNs());
        i.advance(1_000 + MpaConfig.SIW_REPLY_TIMEOUT_NS);
        assertEquals(-Errno.ETIMEDOUT, i.failure().status());
        assertTrue(i.failure().words().contains("10000 ms"), i.failure().words());
    }

    @Test
    void inboxTakesNoMoreThanItsCapacityWhateverThePeerSends() {
        MpaResponder r = new MpaResponder(SIW, "kat");
        ByteBuffer flood = ByteBuffer.allocate(64 * 1024);
        assertEquals(MpaEngine.INBOX_CAPACITY, r.feed(flood));
        assertEquals(0, r.feed(flood));
        r.advance(0);
        assertEquals(-Errno.EPROTO, r.failure().status(), "zeros are not a request key");
    }

    @Test
    void privateDataOverTheEnhancedLimitIsRefusedBeforeAnythingIsSent() {
        VerbsException e = assertThrows(VerbsException.class, () -> new MpaInitiator(SIW, 8, 8, new byte[253], "kat"));
        assertEquals(Errno.EINVAL, e.errno());
        assertEquals(Errno.ENOMEM, assertThrows(VerbsException.class,
                () -> new MpaInitiator(SIW, 129, 8, new byte[0], "kat")).errno());
        MpaResponder r = new MpaResponder(SIW, "kat");
        feed(r, Hex.bytes(REQ_KEY + " 10 02 00 04  00 08 00 08"), 0);
        assertEquals(Errno.EINVAL, assertThrows(VerbsException.class, () -> r.accept(8, 8, new byte[253])).errno());
        assertFalse(r.outbox().hasRemaining());
        assertTrue(r.awaitingDecision(), "a refused accept leaves the decision open");
    }

    @Test
    void replyEchoesSiwsGsoFlagAndTheRevisionTwoRequestWithoutEnhancedSetup() {
        MpaResponder r = new MpaResponder(SIW, "kat");
        feed(r, Hex.bytes(REQ_KEY + " 08 02 00 01  21"), 0);
        assertFalse(r.request().enhanced());
        assertEquals(0, r.request().initiatorDepth());
        r.accept(4, 4, new byte[0]);
        assertArrayEquals(Hex.bytes(REP_KEY + " 08 02 00 00"), drain(r));
    }

    @Test
    void enhancedRequestWithoutRoomForIrdOrdGetsARejectWithoutE() {
        MpaResponder r = new MpaResponder(SIW, "kat");
        feed(r, Hex.bytes(REQ_KEY + " 10 02 00 02  00 08"), 0);
        assertEquals(-Errno.EOPNOTSUPP, r.failure().status());
        assertNull(r.request());
        assertArrayEquals(Hex.bytes(REP_KEY + " 20 02 00 00"), drain(r));
        r.advance(1);
        assertTrue(r.idle());
    }
}
