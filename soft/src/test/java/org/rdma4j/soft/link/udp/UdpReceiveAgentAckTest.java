// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.link.udp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
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
 * What the receive path of a UDP link tells a requester's ACK timer, and how the ACKs its receive
 * agent causes leave. Two links on 127.0.0.1 and 127.0.0.2; B sends requests to A, whose device
 * (the sink) may answer each from the receiving thread with an ACK, as a responder does.
 */
class UdpReceiveAgentAckTest {
    private static final long WAIT_NANOS = 5_000_000_000L;

    private static Packet packet(PacketPool pool, Gid src, Gid dst, int psn, int opcode) {
        Packet p = pool.acquire();
        Bth.writeAt(p.buffer, 0, opcode, false, 0, 0xFFFF, 0x11, opcode != Opcode.RC_ACKNOWLEDGE, psn);
        p.headerLength = Opcode.headerLength(opcode);
        p.setFlatPayload(opcode == Opcode.RC_ACKNOWLEDGE ? 0 : 8);
        p.srcGid = src;
        p.dstGid = dst;
        return p;
    }

    /**
     * While a thread holds A's receive token taking packets in (here: paused inside the device's
     * receive, as a descheduled poller would be), an ACK may be among them: the link reports a backlog,
     * so an ACK timer puts itself off instead of retransmitting, and a timer's own receive
     * ({@link UdpLink#receiveArrived()}) says another thread is receiving.
     */
    @Test
    void aReceiverPausedWithTheTokenCountsAsABacklog() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(34511, ia, ib);
        PacketPool pool = new PacketPool();
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        UdpLink a = UdpLink.open(ia, port, UdpLink.Mode.NATIVE, p -> {
            p.release();
            inside.countDown();
            try {
                release.await(WAIT_NANOS, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        UdpLink b = UdpLink.open(ib, port, UdpLink.Mode.NATIVE, Packet::release);
        try {
            assertFalse(a.receiveBacklogged(), "nothing received yet");
            b.send(packet(pool, Gid.of(ib), Gid.of(ia), 1, Opcode.RC_SEND_ONLY));
            assertTrue(inside.await(WAIT_NANOS, TimeUnit.NANOSECONDS), "A's receive agent took the packet in");
            assertTrue(a.receiveBacklogged(), "a receiver holds the token: an ACK may be with it");
            assertEquals(-1, a.receiveArrived(), "another thread is receiving");
        } finally {
            release.countDown();
            a.close();
            b.close();
        }
    }

    /**
     * The ACKs the receive agent's device sends while it takes in a batch leave together right after
     * the batch, in one sendmmsg, not one system call each: the responder's answers to a burst do not
     * queue behind its own sends.
     */
    @Test
    void theAcksOfAReceiveAgentsBatchLeaveInOneSendmmsgAfterIt() throws Exception {
        Assumptions.assumeTrue(UdpLink.libcSocketsAvailable());
        InetAddress ia = InetAddress.getByName("127.0.0.1");
        InetAddress ib = InetAddress.getByName("127.0.0.2");
        int port = SoftDevices.freeUdpPort(34611, ia, ib);
        PacketPool pool = new PacketPool();
        Gid ga = Gid.of(ia);
        Gid gb = Gid.of(ib);
        AtomicInteger atB = new AtomicInteger();
        UdpLink[] self = new UdpLink[1];
        UdpLink a = UdpLink.open(ia, port, UdpLink.Mode.NATIVE, p -> {
            int psn = Bth.psnOf(p.buffer);
            p.release();
            self[0].send(packet(pool, ga, gb, 1000 + psn, Opcode.RC_ACKNOWLEDGE));
        });
        self[0] = a;
        UdpLink b = UdpLink.open(ib, port, UdpLink.Mode.NATIVE, p -> {
            p.release();
            atB.incrementAndGet();
        });
        try {
            assertTrue(a.holdReceiveAgent(true), "A's agent out of the socket while the burst queues");
            int n = 5;
            for (int i = 0; i < n; i++) {
                b.send(packet(pool, gb, ga, i, Opcode.RC_SEND_ONLY)); // on loopback: in A's socket on return
            }
            a.holdReceiveAgent(false); // the agent takes the five in one batch
            long end = System.nanoTime() + WAIT_NANOS;
            while (atB.get() < n && System.nanoTime() - end < 0) {
                Thread.sleep(1);
            }
            assertEquals(n, atB.get(), "every ACK reached B");
            assertEquals(1L, a.counters().get("udp_sendmmsg_calls"), "the five ACKs left in one call");
        } finally {
            a.close();
            b.close();
        }
    }
}
