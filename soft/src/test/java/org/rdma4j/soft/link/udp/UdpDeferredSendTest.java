// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.Gid;

/**
 * What a thread sends while it receives in {@link UdpLink#poll()} (the ACK of what it received, in
 * the device) is deferred: it leaves before, and in one sendmmsg with, the next packet any thread sends,
 * and without a next send it still leaves soon (the receive agent's round); packets keep their order.
 * Two links on 127.0.0.1 and 127.0.0.2: B sends to A; A's device "answers" each packet from the
 * receiving thread with a packet of PSN 1000 + the request's PSN.
 */
class UdpDeferredSendTest {
    private static final long WAIT_NANOS = 5_000_000_000L;

    private static Packet packet(PacketPool pool, Gid src, Gid dst, int psn) {
        return packet(pool, src, dst, psn, Opcode.RC_SEND_ONLY);
    }

    /** A request (a SEND with 8 bytes) or a response (an ACK, no payload) of PSN {@code psn}. */
    private static Packet packet(PacketPool pool, Gid src, Gid dst, int psn, int opcode) {
        return packet(pool, src, dst, psn, opcode, 0x11);
    }

    private static Packet packet(PacketPool pool, Gid src, Gid dst, int psn, int opcode, int destQpn) {
        Packet p = pool.acquire();
        Bth.writeAt(p.buffer, 0, opcode, false, 0, 0xFFFF, destQpn, opcode != Opcode.RC_ACKNOWLEDGE, psn);
        p.headerLength = Opcode.headerLength(opcode);
        p.setFlatPayload(opcode == Opcode.RC_ACKNOWLEDGE ? 0 : 8);
        p.srcGid = src;
        p.dstGid = dst;
        return p;
    }

    private static final class Setup implements AutoCloseable {
        final PacketPool pool = new PacketPool();
        final Gid ga;
        final Gid gb;
        final UdpLink a;
        final UdpLink b;
        final List<Integer> atB = new CopyOnWriteArrayList<>();
        final AtomicInteger answeredByA = new AtomicInteger();
        final List<String> answeringThreads = new CopyOnWriteArrayList<>();

        /** What A's device answers with (a request by default; {@link Opcode#RC_ACKNOWLEDGE}: a response). */
        volatile int answerOpcode = Opcode.RC_SEND_ONLY;

        Setup(int firstPort) throws Exception {
            InetAddress ia = InetAddress.getByName("127.0.0.1");
            InetAddress ib = InetAddress.getByName("127.0.0.2");
            int port = SoftDevices.freeUdpPort(firstPort, ia, ib);
            ga = Gid.of(ia);
            gb = Gid.of(ib);
            UdpLink[] self = new UdpLink[1];
            a = UdpLink.open(ia, port, UdpLink.Mode.NATIVE, p -> {
                int psn = Bth.psnOf(p.buffer);
                p.release();
                answeringThreads.add(Thread.currentThread().getName());
                self[0].send(packet(pool, ga, gb, 1000 + psn, answerOpcode)); // on the receiving thread, as an ACK is
                answeredByA.incrementAndGet();
            });
            self[0] = a;
            b = UdpLink.open(ib, port, UdpLink.Mode.NATIVE, p -> {
                atB.add(Bth.psnOf(p.buffer));
                p.release();
            });
        }

        /** B sends {@code psn} to A; this thread polls A until A's device has answered it. */
        void requestAndPoll(int psn) {
            int before = answeredByA.get();
            b.send(packet(pool, gb, ga, psn));
            long end = System.nanoTime() + WAIT_NANOS;
            while (answeredByA.get() == before && System.nanoTime() - end < 0) {
                a.poll();
            }
            assertEquals(before + 1, answeredByA.get(), "A's poller received request " + psn);
        }

        /** B sends {@code psn} to A; this thread waits in A's {@link UdpLink#await} until A's device has answered it. */
        void requestAndAwait(int psn) {
            int before = answeredByA.get();
            b.send(packet(pool, gb, ga, psn));
            long end = System.nanoTime() + WAIT_NANOS;
            while (answeredByA.get() == before && System.nanoTime() - end < 0) {
                a.await(10_000_000L);
            }
            assertEquals(before + 1, answeredByA.get(), "A's waiter received request " + psn);
        }

        void awaitAtB(int n) throws InterruptedException {
            long end = System.nanoTime() + WAIT_NANOS;
            while (atB.size() < n && System.nanoTime() - end < 0) {
                Thread.sleep(1);
            }
        }

        @Override
        public void close() {
            a.close();
            b.close();
        }
    }

    /**
     * The ACK a poller deferred outlives its next polls for a short time (ACK_HOLD_NS), so the reply it
     * posts a few polls later takes it along; only the poller that deferred it, only while everything
     * deferred is a response, and only for that time.
     */
    @Test
    void aPollersDeferredAckIsHeldForItsReplyBriefly() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33991)) {
            s.answerOpcode = Opcode.RC_ACKNOWLEDGE;
            assertTrue(s.a.holdReceiveAgent(true), "the agent stays out of A's socket: this thread receives");
            s.a.holdAcksFor(3_600_000_000_000L);
            boolean held = false;
            boolean heldForOther = true;
            for (int i = 0; i < 20 && !held; i++) { // the held agent flushes every round: try until one is seen
                s.requestAndPoll(i);
                held = s.a.holdsDeferredFor(Thread.currentThread());
                Thread other = new Thread(() -> { });
                heldForOther = s.a.holdsDeferredFor(other);
            }
            assertTrue(held, "this poller's deferred ACK is held for its reply");
            assertFalse(heldForOther, "not for another thread's poll");
            s.a.holdAcksFor(0);
            assertFalse(s.a.holdsDeferredFor(Thread.currentThread()), "and not past the hold");
            s.awaitAtB(1);
        }
    }

    /**
     * Doorbell batching: a thread that polls the link and then sends several packets without polling
     * again has the second and later ones staged; its next poll sends them, all in order.
     */
    @Test
    void aPollersSendsBetweenTwoPollsLeaveTogetherAndInOrder() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33691)) {
            for (int round = 0; round < 3; round++) {
                s.a.poll(); // this thread is A's poller now
                for (int i = 0; i < 10; i++) {
                    s.a.send(packet(s.pool, s.ga, s.gb, round * 100 + i));
                }
                s.a.poll(); // sends what is staged
                s.awaitAtB(10 * (round + 1));
            }
            assertEquals(30, s.atB.size(), () -> "every packet arrived: " + s.atB);
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 10; i++) {
                    assertEquals(round * 100 + i, s.atB.get(round * 10 + i), () -> "in order: " + s.atB);
                }
            }
            assertEquals(27L, s.a.counters().get("udp_doorbell_packets"),
                    "the first send after a poll goes at once, the next nine of each round are staged");
            assertEquals(30L, s.a.sentDatagrams());
        }
    }

    /** Staged packets of a poller that neither polls nor sends again still leave (the agent's round). */
    @Test
    void aPollersStagedSendsLeaveWithoutAnotherPoll() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33791)) {
            s.a.poll();
            for (int i = 0; i < 3; i++) {
                s.a.send(packet(s.pool, s.ga, s.gb, i));
            }
            s.awaitAtB(3);
            assertEquals(List.of(0, 1, 2), s.atB);
            assertEquals(2L, s.a.counters().get("udp_doorbell_packets"));
        }
    }

    /** Only the link's poller batches: a thread that never polled it sends each packet at once. */
    @Test
    void aThreadThatDoesNotPollTheLinkSendsAtOnce() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33891)) {
            for (int i = 0; i < 5; i++) {
                s.a.send(packet(s.pool, s.ga, s.gb, i)); // nobody polled A
            }
            s.a.poll(); // this thread polls now; another one sends
            Thread other = new Thread(() -> {
                for (int i = 5; i < 10; i++) {
                    s.a.send(packet(s.pool, s.ga, s.gb, i));
                }
            });
            other.start();
            other.join();
            s.awaitAtB(10);
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), s.atB);
            assertEquals(0L, s.a.counters().get("udp_doorbell_packets"));
        }
    }

    @Test
    void anAnswerSentWhileReceivingInPollLeavesBeforeTheNextSendAndInOrder() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33291)) {
            assertTrue(s.a.holdReceiveAgent(true), "the agent stays out of A's socket: this thread receives");
            for (int i = 0; i < 20; i++) {
                s.requestAndPoll(i);
                s.a.send(packet(s.pool, s.ga, s.gb, 2000 + i)); // this thread's own next send ("the reply")
            }
            s.awaitAtB(40);
            assertEquals(40, s.atB.size(), () -> "every answer and every reply arrived: " + s.atB);
            for (int i = 0; i < 20; i++) {
                assertEquals(1000 + i, s.atB.get(2 * i), () -> "the answer first, then the reply: " + s.atB);
                assertEquals(2000 + i, s.atB.get(2 * i + 1), () -> "the answer first, then the reply: " + s.atB);
            }
            assertTrue(s.answeringThreads.stream().allMatch(t -> t.equals(Thread.currentThread().getName())),
                    () -> "A's device answered on the polling thread: " + s.answeringThreads);
            assertEquals(20L, s.a.counters().get("udp_deferred_packets"), "every answer was deferred");
            // Each answer left either with the reply (one sendmmsg for both) or, when the agent's round
            // came first, alone: never lost, never after the reply.
            long rideAlong = s.a.counters().get("udp_ride_along_sends");
            assertTrue(rideAlong <= 20, () -> "ride-along sends: " + rideAlong);
            assertEquals(40L, s.a.sentDatagrams());
        }
    }

    @Test
    void aRequestGoesBeforeDeferredResponsesInTheSameCall() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33191)) {
            s.answerOpcode = Opcode.RC_ACKNOWLEDGE;
            assertTrue(s.a.holdReceiveAgent(true), "the agent stays out of A's socket: this thread receives");
            long callsBefore = s.a.counters().get("udp_sendmmsg_calls");
            for (int i = 0; i < 20; i++) {
                s.requestAndPoll(i);
                s.a.send(packet(s.pool, s.ga, s.gb, 2000 + i)); // a request: it overtakes the deferred ACK
            }
            s.awaitAtB(40);
            assertEquals(40, s.atB.size(), () -> "every ACK and every request arrived: " + s.atB);
            long overtaking = s.a.counters().get("udp_overtaking_sends");
            assertTrue(overtaking > 0, "some requests went before a deferred ACK");
            int reordered = 0;
            for (int i = 0; i < 20; i++) {
                int at = s.atB.indexOf(2000 + i);
                int ack = s.atB.indexOf(1000 + i);
                assertTrue(at >= 0 && ack >= 0, () -> "both arrived: " + s.atB);
                if (at < ack) {
                    reordered++;
                }
            }
            assertEquals(overtaking, reordered, () -> "each overtaking send's request arrived first: " + s.atB);
            assertTrue(s.a.counters().get("udp_sendmmsg_calls") - callsBefore >= overtaking, "a request and its ACKs in one call");
        }
    }

    @Test
    void aResponseNeverOvertakesAndARequestNeverOvertakesARequest() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33491)) {
            assertTrue(s.a.holdReceiveAgent(true), "the agent stays out of A's socket: this thread receives");
            for (int i = 0; i < 10; i++) {
                s.answerOpcode = Opcode.RC_ACKNOWLEDGE;
                s.requestAndPoll(i);
                // another response after a deferred one: order kept
                s.a.send(packet(s.pool, s.ga, s.gb, 3000 + i, Opcode.RC_ACKNOWLEDGE));
                s.answerOpcode = Opcode.RC_SEND_ONLY;
                s.requestAndPoll(100 + i);
                // a request after a deferred request: order kept
                s.a.send(packet(s.pool, s.ga, s.gb, 2000 + i));
            }
            s.awaitAtB(40);
            assertEquals(40, s.atB.size(), () -> "everything arrived: " + s.atB);
            for (int i = 0; i < 10; i++) {
                int j = i;
                assertTrue(s.atB.indexOf(1000 + i) < s.atB.indexOf(3000 + i), () -> "ACK order kept: " + s.atB);
                assertTrue(s.atB.indexOf(1100 + i) < s.atB.indexOf(2000 + i), () -> "request order kept " + j + ": " + s.atB);
            }
            assertEquals(0L, s.a.counters().get("udp_overtaking_sends"));
        }
    }

    @Test
    void aRequestToAnotherQpNeverOvertakesAnAck() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33691)) {
            s.answerOpcode = Opcode.RC_ACKNOWLEDGE;
            assertTrue(s.a.holdReceiveAgent(true), "the agent stays out of A's socket: this thread receives");
            for (int i = 0; i < 20; i++) {
                s.requestAndPoll(i);
                // what the application sends after the completion, on another QP (a CM message on QP1,
                // say): the peer must see the ACK first
                s.a.send(packet(s.pool, s.ga, s.gb, 2000 + i, Opcode.RC_SEND_ONLY, 1));
            }
            s.awaitAtB(40);
            assertEquals(40, s.atB.size(), () -> "everything arrived: " + s.atB);
            for (int i = 0; i < 20; i++) {
                assertEquals(1000 + i, s.atB.get(2 * i), () -> "the ACK first: " + s.atB);
                assertEquals(2000 + i, s.atB.get(2 * i + 1), () -> "the ACK first: " + s.atB);
            }
            assertEquals(0L, s.a.counters().get("udp_overtaking_sends"));
        }
    }

    @Test
    void anAnswerSentWhileReceivingInAwaitLeavesWithTheNextSend() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33391)) {
            assertTrue(s.a.holdReceiveAgent(true), "the agent stays out of A's socket: this thread receives");
            for (int i = 0; i < 10; i++) {
                s.requestAndAwait(i);
                s.a.send(packet(s.pool, s.ga, s.gb, 2000 + i));
            }
            s.awaitAtB(20);
            assertEquals(20, s.atB.size(), () -> "every answer and every reply arrived: " + s.atB);
            for (int i = 0; i < 10; i++) {
                assertEquals(1000 + i, s.atB.get(2 * i), () -> "the answer first, then the reply: " + s.atB);
                assertEquals(2000 + i, s.atB.get(2 * i + 1), () -> "the answer first, then the reply: " + s.atB);
            }
            assertEquals(10L, s.a.counters().get("udp_deferred_packets"), "every answer was deferred");
            assertTrue(s.a.counters().get("udp_ride_along_sends") > 0, "some answers left with the reply");
        }
    }

    @Test
    void anAnswerDeferredByAPollerLeavesWithoutAnotherSend() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33591)) {
            assertTrue(s.a.holdReceiveAgent(true), "the agent stays out of A's socket: this thread receives");
            s.requestAndPoll(7);
            // This thread neither sends nor polls any more: the receive agent's next round sends it.
            s.awaitAtB(1);
            assertEquals(List.of(1007), s.atB, "the deferred answer left on its own");
            assertEquals(1L, s.a.counters().get("udp_deferred_packets"));
            assertEquals(0L, s.a.counters().get("udp_ride_along_sends"));
        }
    }

    @Test
    void closingTheLinkSendsWhatWasDeferred() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33791)) {
            assertTrue(s.a.holdReceiveAgent(true), "the agent stays out of A's socket: this thread receives");
            s.requestAndPoll(9);
            long deferred = s.a.counters().get("udp_deferred_packets");
            s.a.close(); // at once, before the agent's next round could send it
            s.awaitAtB(1);
            assertEquals(1L, deferred, "the answer was deferred");
            assertEquals(List.of(1009), s.atB, "the deferred answer left at close");
        }
    }

    @Test
    void aThreadThatIsNotReceivingSendsAtOnce() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        try (Setup s = new Setup(33891)) {
            for (int i = 0; i < 5; i++) {
                s.a.send(packet(s.pool, s.ga, s.gb, 3000 + i));
            }
            s.awaitAtB(5);
            assertEquals(List.of(3000, 3001, 3002, 3003, 3004), s.atB);
            assertEquals(0L, s.a.counters().get("udp_deferred_packets"));
        }
    }
}
