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
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.Errno;

/**
 * The initiator against a hostile responder on loopback: a raw socket that reads the request and answers
 * with bytes written by hand. Each failure must carry the rdma_cm event and status siw gives.
 */
class MpaHostileResponderTest {
    static final String REP_KEY = "4d 50 41 20 49 44 20 52 65 70 20 46 72 61 6d 65";
    static final String REQ_KEY = "4d 50 41 20 49 44 20 52 65 71 20 46 72 61 6d 65";
    private static final byte[] HELLO = "hi".getBytes(StandardCharsets.US_ASCII);
    /** The request of {@link #HELLO} with siw's defaults: header, IRD/ORD, "hi". */
    private static final int REQUEST_LENGTH = 20 + 4 + 2;
    /** An enhanced reply accepting with IRD 8, ORD 8 and no private data. */
    private static final byte[] ACCEPT = Hex.bytes(REP_KEY + " 10 02 00 04  00 08 00 08");

    private static MpaInitiator answeredWith(byte[] reply) throws Exception {
        return connect(MpaConfig.siwDefaults(), reply);
    }

    /** Sends the request to a raw socket that reads it, writes {@code reply} in one go and reads to the end. */
    private static MpaInitiator connect(MpaConfig config, byte[] reply) throws Exception {
        return connect(config, reply, false);
    }

    private static MpaInitiator connect(MpaConfig config, byte[] reply, boolean thenClose) throws Exception {
        try (MpaLoopback net = new MpaLoopback()) {
            SocketChannel[] c = net.connect();
            Future<byte[]> hostile = net.runInBackground(() -> {
                MpaLoopback.read(c[1], REQUEST_LENGTH);
                MpaLoopback.write(c[1], reply);
                if (thenClose) {
                    c[1].close();
                    return new byte[0];
                }
                return MpaLoopback.readToEnd(c[1]);
            });
            MpaInitiator initiator = new MpaInitiator(config, 8, 8, HELLO, MpaLoopback.peerOf(c[0]));
            MpaSocketDriver.drive(initiator, c[0], System::nanoTime);
            c[0].close();
            MpaLoopback.await(hostile);
            return initiator;
        }
    }

    private static void assertFailure(MpaInitiator i, MpaFailure.CmEvent event, int errno) {
        MpaFailure f = i.failure();
        assertNotNull(f, "the setup must fail");
        assertNull(i.connection());
        assertEquals(event, f.event(), f.message());
        assertEquals(-errno, f.status(), f.message());
        assertTrue(f.message().contains("127.0.0.1"), "the peer is named: " + f.message());
    }

    @Test
    void replyWithTheRequestKeyIsAConnectError() throws Exception {
        MpaInitiator i = answeredWith(Hex.bytes(REQ_KEY + " 10 02 00 04  00 08 00 08"));
        assertFailure(i, MpaFailure.CmEvent.CONNECT_ERROR, Errno.EINVAL);
        assertEquals(Errno.EINVAL, i.failure().errno());
        assertTrue(i.failure().words().contains("key"), i.failure().words());
    }

    @Test
    void replyAskingForMarkersIsRefused() throws Exception {
        MpaInitiator i = answeredWith(Hex.bytes(REP_KEY + " 90 02 00 04  00 08 00 08"));
        assertFailure(i, MpaFailure.CmEvent.REJECTED, Errno.ECONNREFUSED);
        assertEquals(Errno.ECONNREFUSED, i.failure().errno());
    }

    @Test
    void replyWithARevisionOverTwoIsAConnectError() throws Exception {
        MpaInitiator i = answeredWith(Hex.bytes(REP_KEY + " 10 03 00 04  00 08 00 08"));
        assertFailure(i, MpaFailure.CmEvent.CONNECT_ERROR, Errno.EINVAL);
    }

    @Test
    void replyLongerThanTheLimitFailsAtItsHeaderWithoutBufferingIt() throws Exception {
        // 300 bytes of private data announced (0x012c): refused once the 20-byte header is in.
        MpaInitiator i = answeredWith(Hex.bytes(REP_KEY + " 10 02 01 2c  00 08 00 08"));
        assertFailure(i, MpaFailure.CmEvent.CONNECT_ERROR, Errno.EINVAL);
        assertTrue(i.failure().words().contains("too long"), i.failure().words());
    }

    @Test
    void replyTrickledOneByteAtATimeStillEstablishes() throws Exception {
        byte[] reply = Hex.bytes(REP_KEY + " 10 02 00 07  00 04 00 02  6f 6b 21");
        try (MpaLoopback net = new MpaLoopback()) {
            SocketChannel[] c = net.connect();
            Future<byte[]> hostile = net.runInBackground(() -> {
                MpaLoopback.read(c[1], REQUEST_LENGTH);
                for (byte b : reply) {
                    MpaLoopback.write(c[1], new byte[] {b});
                    Thread.sleep(1);
                }
                return MpaLoopback.readToEnd(c[1]);
            });
            MpaInitiator trickled = new MpaInitiator(MpaConfig.siwDefaults(), 8, 8, HELLO, MpaLoopback.peerOf(c[0]));
            MpaSocketDriver.drive(trickled, c[0], System::nanoTime);
            c[0].close();
            MpaLoopback.await(hostile);
            assertNotNull(trickled.connection(), () -> String.valueOf(trickled.failure()));
            assertArrayEquals("ok!".getBytes(StandardCharsets.US_ASCII), trickled.connection().peerPrivateData());
            assertEquals(2, trickled.connection().ird());
            assertEquals(4, trickled.connection().ord());
        }
    }

    @Test
    void replyStallingMidFrameTimesOutAsUnreachable() throws Exception {
        MpaConfig quick = MpaConfig.siwDefaults().withTimeouts(TimeUnit.MILLISECONDS.toNanos(200),
                MpaConfig.SIW_REQUEST_TIMEOUT_NS);
        try (MpaLoopback net = new MpaLoopback()) {
            SocketChannel[] c = net.connect();
            Future<byte[]> hostile = net.runInBackground(() -> {
                MpaLoopback.read(c[1], REQUEST_LENGTH);
                MpaLoopback.write(c[1], Hex.bytes(REP_KEY + " 10 02"));
                return MpaLoopback.readToEnd(c[1]);
            });
            MpaInitiator i = new MpaInitiator(quick, 8, 8, HELLO, MpaLoopback.peerOf(c[0]));
            MpaSocketDriver.drive(i, c[0], System::nanoTime);
            c[0].close();
            MpaLoopback.await(hostile);
            assertFailure(i, MpaFailure.CmEvent.UNREACHABLE, Errno.ETIMEDOUT);
            assertEquals(Errno.ETIMEDOUT, i.failure().errno());
            assertTrue(i.failure().words().contains("200 ms"), i.failure().words());
        }
    }

    @Test
    void peerClosingMidReplyIsAReset() throws Exception {
        MpaInitiator i = connect(MpaConfig.siwDefaults(), Hex.bytes(REP_KEY + " 10 02 00 04  00"), true);
        assertFailure(i, MpaFailure.CmEvent.REJECTED, Errno.ECONNRESET);
        assertTrue(i.failure().words().contains("closed"), i.failure().words());
    }

    @Test
    void bytesAfterTheReplyAreKeptForTheFpduStream() throws Exception {
        byte[] firstFpdu = Hex.bytes("00 0e c1 40  00 00 00 01  00 00 00 00 00 00 00 00  00 00 00 00");
        try (MpaLoopback net = new MpaLoopback()) {
            SocketChannel[] c = net.connect();
            Future<byte[]> hostile = net.runInBackground(() -> {
                MpaLoopback.read(c[1], REQUEST_LENGTH);
                MpaLoopback.write(c[1], Hex.concat(ACCEPT, firstFpdu));
                c[1].shutdownOutput();
                return MpaLoopback.readToEnd(c[1]);
            });
            MpaInitiator i = new MpaInitiator(MpaConfig.siwDefaults(), 8, 8, HELLO, MpaLoopback.peerOf(c[0]));
            MpaSocketDriver.drive(i, c[0], System::nanoTime);
            assertNotNull(i.connection(), () -> String.valueOf(i.failure()));
            byte[] kept = new byte[i.connection().carryOver().remaining()];
            i.connection().carryOver().get(kept);
            // Whatever the engine read past the reply is in the carry-over; the rest is still in the socket,
            // up to the peer's close (so a lost byte shows as a short read, never as a hang).
            c[0].configureBlocking(true);
            byte[] rest = MpaLoopback.read(c[0], firstFpdu.length - kept.length);
            c[0].close();
            MpaLoopback.await(hostile);
            assertArrayEquals(firstFpdu, Hex.concat(kept, rest));
        }
    }

    @Test
    void revisionOneReplyToAnEnhancedRequestIsRefused() throws Exception {
        MpaInitiator i = answeredWith(Hex.bytes(REP_KEY + " 00 01 00 00"));
        assertFailure(i, MpaFailure.CmEvent.REJECTED, Errno.ECONNRESET);
        assertFalse(i.failure().rejectedByPeer(), "not a reject frame");
    }

    @Test
    void replyWithoutCrcAfterCrcWasAskedForIsRefused() throws Exception {
        MpaInitiator i = connect(MpaConfig.siwDefaults().withCrc(true), ACCEPT);
        assertFailure(i, MpaFailure.CmEvent.REJECTED, Errno.ECONNREFUSED);
    }

    @Test
    void replyAskingForMoreReadsThanTheDeviceServesIsAConnectError() throws Exception {
        // The reply's ORD 200 would be our IRD; siw's maximum is 128.
        MpaInitiator i = answeredWith(Hex.bytes(REP_KEY + " 10 02 00 04  00 08 00 c8"));
        assertFailure(i, MpaFailure.CmEvent.CONNECT_ERROR, Errno.EINVAL);
    }

    @Test
    void peerToPeerReplyNamingNoOfferedRtrIsAConnectError() throws Exception {
        MpaConfig p2p = MpaConfig.siwDefaults().withPeerToPeer(MpaFrame.ORD_WRITE_RTR);
        MpaInitiator i = connect(p2p, Hex.bytes(REP_KEY + " 10 02 00 04  80 08 40 08"));
        assertFailure(i, MpaFailure.CmEvent.CONNECT_ERROR, Errno.EINVAL);
    }
}
