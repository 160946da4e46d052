// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.rdma4j.soft.iwarp.MpaHostileResponderTest.REP_KEY;
import static org.rdma4j.soft.iwarp.MpaHostileResponderTest.REQ_KEY;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;

/**
 * The responder against a hostile initiator on loopback: a raw socket that sends a hand-written request
 * (or part of one) and reads whatever comes back until the responder closes.
 */
class MpaHostileInitiatorTest {
    private static final MpaConfig QUICK = MpaConfig.siwDefaults().withTimeouts(MpaConfig.SIW_REPLY_TIMEOUT_NS,
            TimeUnit.MILLISECONDS.toNanos(200));
    /** siw's request: revision 2, E, IRD 8, ORD 8, then "hi". */
    private static final byte[] SIW_REQUEST = Hex.bytes(REQ_KEY + " 10 02 00 06  00 08 00 08  68 69");

    /** What the responder did and what the hostile initiator read back. */
    private record Outcome(MpaResponder responder, byte[] answer) {
    }

    private interface Hostile {
        void send(SocketChannel c) throws Exception;
    }

    private static Outcome face(Hostile hostile, boolean accept) throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            SocketChannel[] c = net.connect();
            Future<byte[]> peer = net.runInBackground(() -> {
                hostile.send(c[0]);
                return MpaLoopback.readToEnd(c[0]);
            });
            MpaResponder responder = new MpaResponder(QUICK, MpaLoopback.peerOf(c[1]));
            MpaSocketDriver.drive(responder, c[1], System::nanoTime);
            if (accept && responder.awaitingDecision()) {
                responder.accept(8, 8, new byte[0]);
                MpaSocketDriver.drive(responder, c[1], System::nanoTime);
            }
            c[1].close();
            return new Outcome(responder, MpaLoopback.await(peer));
        }
    }

    private static Outcome sending(byte[] request) throws Exception {
        return face(c -> MpaLoopback.write(c, request), false);
    }

    private static void assertDropped(Outcome o, int errno) {
        MpaFailure f = o.responder.failure();
        assertNotNull(f, "the setup must fail");
        assertNull(o.responder.request(), "no request reaches the program");
        assertEquals(MpaFailure.CmEvent.NONE, f.event(), f.message());
        assertEquals(-errno, f.status(), f.message());
        assertTrue(f.message().contains("127.0.0.1"), "the peer is named: " + f.message());
    }

    @Test
    void requestWithTheReplyKeyIsDroppedWithoutAReply() throws Exception {
        Outcome o = sending(Hex.bytes(REP_KEY + " 10 02 00 06  00 08 00 08  68 69"));
        assertDropped(o, Errno.EPROTO);
        assertEquals(0, o.answer.length, "no reply to a wrong key, as siw");
    }

    @Test
    void requestAskingForMarkersIsAnsweredWithARejectFrame() throws Exception {
        Outcome o = sending(Hex.bytes(REQ_KEY + " 90 02 00 06  00 08 00 08  68 69"));
        assertDropped(o, Errno.EOPNOTSUPP);
        // siw's reject: the request's bits without M, with R; enhanced, so IRD/ORD words of zero; no data.
        assertArrayEquals(Hex.bytes(REP_KEY + " 30 02 00 04  00 00 00 00"), o.answer, Hex.of(o.answer));
    }

    @Test
    void revisionOneRequestAskingForMarkersGetsARevisionOneReject() throws Exception {
        Outcome o = sending(Hex.bytes(REQ_KEY + " c0 01 00 00"));
        assertDropped(o, Errno.EOPNOTSUPP);
        assertArrayEquals(Hex.bytes(REP_KEY + " 60 01 00 00"), o.answer, Hex.of(o.answer));
    }

    @Test
    void requestWithPrivateDataOverTheLimitIsDroppedAtItsHeader() throws Exception {
        // 257 bytes announced; only the header is sent, so the refusal cannot wait for the data.
        Outcome o = sending(Hex.bytes(REQ_KEY + " 10 02 01 01  00 08 00 08"));
        assertDropped(o, Errno.EPROTO);
        assertTrue(o.responder.failure().words().contains("too long"));
        assertEquals(0, o.answer.length);
    }

    @Test
    void requestTrickledOneByteAtATimeReachesTheProgram() throws Exception {
        Outcome o = face(c -> {
            for (byte b : SIW_REQUEST) {
                MpaLoopback.write(c, new byte[] {b});
                Thread.sleep(1);
            }
        }, true);
        assertNull(o.responder.failure(), () -> String.valueOf(o.responder.failure()));
        assertArrayEquals("hi".getBytes(StandardCharsets.US_ASCII), o.responder.request().privateData());
        assertNotNull(o.responder.connection());
        assertArrayEquals(Hex.bytes(REP_KEY + " 10 02 00 04  00 08 00 08"), o.answer, Hex.of(o.answer));
    }

    @Test
    void requestStallingMidFrameTimesOut() throws Exception {
        Outcome o = face(c -> MpaLoopback.write(c, Hex.bytes(REQ_KEY + " 10 02 00 06  00")), false);
        assertDropped(o, Errno.ETIMEDOUT);
        assertTrue(o.responder.failure().words().contains("200 ms"), o.responder.failure().words());
        assertEquals(0, o.answer.length);
    }

    @Test
    void peerClosingMidRequestIsAReset() throws Exception {
        Outcome o = face(c -> {
            MpaLoopback.write(c, Hex.bytes(REQ_KEY + " 10 02"));
            c.shutdownOutput();
        }, false);
        assertDropped(o, Errno.ECONNRESET);
    }

    @Test
    void bytesAfterTheRequestAreKeptForTheFpduStream() throws Exception {
        byte[] early = Hex.bytes("00 0e c1 40  00 00 00 01  00 00 00 00 00 00 00 00  00 00 00 00");
        try (MpaLoopback net = new MpaLoopback()) {
            SocketChannel[] c = net.connect();
            Future<byte[]> peer = net.runInBackground(() -> {
                MpaLoopback.write(c[0], Hex.concat(SIW_REQUEST, early));
                c[0].shutdownOutput();
                return MpaLoopback.readToEnd(c[0]);
            });
            MpaResponder r = new MpaResponder(QUICK, MpaLoopback.peerOf(c[1]));
            MpaSocketDriver.drive(r, c[1], System::nanoTime);
            r.accept(8, 8, new byte[0]);
            MpaSocketDriver.drive(r, c[1], System::nanoTime);
            assertNotNull(r.connection(), () -> String.valueOf(r.failure()));
            byte[] kept = new byte[r.connection().carryOver().remaining()];
            r.connection().carryOver().get(kept);
            // Whatever the engine read past the request is in the carry-over; the rest is still in the socket,
            // up to the peer's close (so a lost byte shows as a short read, never as a hang).
            c[1].configureBlocking(true);
            byte[] rest = MpaLoopback.read(c[1], early.length - kept.length);
            c[1].close();
            MpaLoopback.await(peer);
            assertArrayEquals(early, Hex.concat(kept, rest));
        }
    }

    @Test
    void firstFpduThatIsNotTheNegotiatedRtrIsAConnectError() throws Exception {
        byte[] p2pRequest = Hex.bytes(REQ_KEY + " 10 02 00 04  80 08 80 08");
        byte[] send = Hex.bytes("00 12 40 43  00 00 00 00  00 00 00 00  00 00 00 01  00 00 00 00  00 00 00 00");
        Outcome o = face(c -> {
            MpaLoopback.write(c, p2pRequest);
            MpaLoopback.read(c, 24);
            MpaLoopback.write(c, send);
        }, true);
        MpaFailure f = o.responder.failure();
        assertNotNull(f);
        assertNull(o.responder.connection());
        assertEquals(MpaFailure.CmEvent.CONNECT_ERROR, f.event());
        assertEquals(-Errno.EPROTO, f.status());
        assertFalse(f.message().isEmpty());
    }
}
