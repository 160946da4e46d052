// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.iwarp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;

/** Both MPA roles against each other over real loopback TCP: accept, reject, revisions, CRC, IRD/ORD, RTR. */
class MpaHandshakeTest {
    private static final byte[] HELLO = "hello from the client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] WELCOME = "welcome, said the server".getBytes(StandardCharsets.US_ASCII);
    private static final MpaConfig SIW = MpaConfig.siwDefaults();

    /** The outcome of one setup: the initiator and the responder after it went idle for good. */
    private record Run(MpaInitiator initiator, MpaResponder responder, SocketChannel[] channels) {
    }

    private interface Decision {
        void decide(MpaResponder responder);
    }

    private static Run run(MpaLoopback net, MpaConfig initiatorConfig, int ird, int ord, byte[] privateData,
                           MpaConfig responderConfig, Decision decision) throws Exception {
        SocketChannel[] c = net.connect();
        MpaInitiator initiator = new MpaInitiator(initiatorConfig, ird, ord, privateData, MpaLoopback.peerOf(c[0]));
        Future<MpaInitiator> active = net.driveInBackground(initiator, c[0]);
        MpaResponder responder = new MpaResponder(responderConfig, MpaLoopback.peerOf(c[1]));
        MpaSocketDriver.drive(responder, c[1], System::nanoTime);
        if (responder.awaitingDecision()) {
            decision.decide(responder);
            MpaSocketDriver.drive(responder, c[1], System::nanoTime);
        }
        if (responder.rejected() || responder.failure() != null) {
            c[1].close();
        }
        MpaLoopback.await(active);
        return new Run(initiator, responder, c);
    }

    @Test
    void acceptCarriesPrivateDataBothWaysAndBothSidesAreEstablished() throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            Run r = run(net, SIW, 8, 8, HELLO, SIW, resp -> resp.accept(8, 8, WELCOME));
            MpaConnection a = r.initiator.connection();
            MpaConnection p = r.responder.connection();
            assertNotNull(a, () -> String.valueOf(r.initiator.failure()));
            assertNotNull(p, () -> String.valueOf(r.responder.failure()));
            assertArrayEquals(WELCOME, a.peerPrivateData());
            assertArrayEquals(HELLO, p.peerPrivateData());
            assertArrayEquals(HELLO, r.responder.request().privateData());
            assertEquals(2, a.revision());
            assertTrue(a.enhanced() && p.enhanced());
            assertFalse(a.crc() || p.crc(), "siw's default asks for no CRC");
            assertEquals(MpaRtr.NONE, a.rtr());
            assertEquals(0, a.carryOver().remaining());
        }
    }

    @Test
    void revisionOneRequestIsAnsweredWithRevisionOneAndNoIrdOrd() throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            Run r = run(net, SIW.withRevision(1), 4, 4, HELLO, SIW, resp -> resp.accept(16, 16, WELCOME));
            MpaConnection a = r.initiator.connection();
            MpaConnection p = r.responder.connection();
            assertNotNull(a, () -> String.valueOf(r.initiator.failure()));
            assertEquals(1, a.revision());
            assertEquals(1, p.revision());
            assertFalse(a.enhanced() || p.enhanced());
            assertFalse(r.responder.request().enhanced());
            assertEquals(0, r.responder.request().initiatorDepth(), "revision 1 carries no IRD/ORD");
            assertArrayEquals(WELCOME, a.peerPrivateData());
            assertArrayEquals(HELLO, p.peerPrivateData());
            assertEquals(4, a.ird(), "revision 1 keeps the initiator's own values");
            assertEquals(16, p.ird(), "revision 1 keeps the responder's own values");
        }
    }

    @Test
    void rejectHandsTheRespondersPrivateDataToTheInitiatorAsRejected() throws Exception {
        byte[] why = "\u0000\u0001 SECRET\n".getBytes(StandardCharsets.ISO_8859_1);
        try (MpaLoopback net = new MpaLoopback()) {
            Run r = run(net, SIW, 8, 8, HELLO, SIW, resp -> resp.reject(why));
            assertTrue(r.responder.rejected());
            assertNull(r.responder.connection());
            MpaFailure f = r.initiator.failure();
            assertNotNull(f);
            assertTrue(f.rejectedByPeer());
            assertEquals(MpaFailure.CmEvent.REJECTED, f.event());
            assertEquals(-Errno.ECONNRESET, f.status(), "siw reports a peer's reject as -ECONNRESET");
            assertEquals(Errno.ECONNREFUSED, f.errno(), "a synchronous rdma_connect sets ECONNREFUSED");
            assertArrayEquals(why, f.peerPrivateData());
            assertFalse(f.message().contains("SECRET"), "the peer's private data is never put into words");
            assertTrue(f.message().contains(r.initiator.peer()), f.message());
        }
    }

    @Test
    void revisionOneRejectCarriesItsPrivateDataWhole() throws Exception {
        byte[] why = "busy".getBytes(StandardCharsets.US_ASCII);
        try (MpaLoopback net = new MpaLoopback()) {
            Run r = run(net, SIW.withRevision(1), 0, 0, new byte[0], SIW, resp -> resp.reject(why));
            assertArrayEquals(why, r.initiator.failure().peerPrivateData());
        }
    }

    @Test
    void crcAskedForByTheInitiatorIsUsedByBoth() throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            Run r = run(net, SIW.withCrc(true), 8, 8, HELLO, SIW, resp -> resp.accept(8, 8, WELCOME));
            assertTrue(r.responder.request().crc());
            assertTrue(r.initiator.connection().crc());
            assertTrue(r.responder.connection().crc());
        }
    }

    @Test
    void crcWantedByTheResponderIsUsedByBoth() throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            Run r = run(net, SIW, 8, 8, HELLO, SIW.withCrc(true), resp -> resp.accept(8, 8, WELCOME));
            assertFalse(r.responder.request().crc());
            assertTrue(r.initiator.connection().crc());
            assertTrue(r.responder.connection().crc());
        }
    }

    @Test
    void irdAndOrdAreNegotiatedAsSiwDoes() throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            // initiator: IRD 4, ORD 8; the responder asks for IRD 2, ORD 16.
            Run r = run(net, SIW, 4, 8, HELLO, SIW, resp -> resp.accept(2, 16, WELCOME));
            MpaRequest q = r.responder.request();
            assertEquals(4, q.initiatorDepth(), "the peer's IRD is our initiator depth");
            assertEquals(8, q.responderResources(), "the peer's ORD is our responder resources");
            MpaConnection p = r.responder.connection();
            assertEquals(4, p.ord(), "our ORD is cut to the peer's IRD");
            assertEquals(8, p.ird(), "our IRD is raised to the peer's ORD");
            MpaConnection a = r.initiator.connection();
            assertEquals(4, a.ird(), "the initiator's IRD becomes the reply's ORD");
            assertEquals(8, a.ord(), "the initiator's ORD becomes the reply's IRD");
        }
    }

    @Test
    void requestedIrdOverTheDeviceMaximumIsCappedForTheResponder() throws Exception {
        MpaConfig small = new MpaConfig(2, false, false, 0, 2, 3, MpaConfig.SIW_REPLY_TIMEOUT_NS,
                MpaConfig.SIW_REQUEST_TIMEOUT_NS);
        try (MpaLoopback net = new MpaLoopback()) {
            Run r = run(net, SIW, 100, 100, HELLO, small, resp -> resp.accept(1, 1, WELCOME));
            assertEquals(3, r.responder.request().initiatorDepth());
            assertEquals(2, r.responder.request().responderResources());
            assertEquals(2, r.responder.connection().ird());
            assertEquals(1, r.responder.connection().ord());
        }
    }

    @Test
    void peerToPeerOpensWithTheZeroLengthWriteWhenOffered() throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            MpaConfig p2p = SIW.withPeerToPeer(MpaFrame.ORD_WRITE_RTR | MpaFrame.ORD_READ_RTR);
            Run r = run(net, p2p, 8, 0, HELLO, SIW, resp -> resp.accept(8, 8, WELCOME));
            assertTrue(r.responder.request().peerToPeer());
            assertEquals(1, r.responder.request().responderResources(),
                    "a peer-to-peer request asks for an ORD of at least 1, as siw's does");
            assertEquals(MpaRtr.WRITE, r.initiator.connection().rtr());
            assertEquals(MpaRtr.WRITE, r.responder.connection().rtr());
        }
    }

    @Test
    void peerToPeerOpensWithTheZeroLengthReadAndItsResponseWhenOnlyReadIsOffered() throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            MpaConfig p2p = SIW.withPeerToPeer(MpaFrame.ORD_READ_RTR).withCrc(true);
            Run r = run(net, p2p, 8, 8, HELLO, SIW, resp -> resp.accept(8, 8, WELCOME));
            assertEquals(MpaRtr.READ, r.initiator.connection().rtr());
            assertEquals(MpaRtr.READ, r.responder.connection().rtr());
            SocketChannel initiatorSide = r.channels[0];
            initiatorSide.configureBlocking(true);
            byte[] response = MpaLoopback.read(initiatorSide, 20);
            // Zero-length Read Response: ULPDU length 14, T|L, versions 1, opcode 2, sink STag 0, offset 0, CRC.
            byte[] expected = Hex.withCrc(Hex.bytes("00 0e c1 42  00 00 00 00  00 00 00 00 00 00 00 00  00 00 00 00"));
            assertArrayEquals(expected, response, Hex.of(response));
        }
    }
}
