// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.packet.PacketPool;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.*;

/**
 * An ACK that has reached the link but waits unread (its poller descheduled, its receive agent parked)
 * is taken in before the ACK timer judges it missing, as rxe's completer takes the responses queued
 * for it before it retries: no retransmission, no retry spent. The link here holds the ACK until its
 * {@link Link#receiveArrived()} is called, as a socket holds a datagram nobody reads; time is a fake
 * clock (the device runs no progress thread), so nothing waits for a real timeout.
 */
class ArrivedAckBeforeTimeoutTest {
    private static final int PEER_QPN = 0x77;
    private static final int OTHER_PEER_QPN = 0x78;

    private final FakeClock clock = new FakeClock();
    private final AtomicInteger requests = new AtomicInteger();
    /** The PSN of the ACK waiting in the link, or -1. */
    private volatile int waitingAck = -1;
    /** Requests the device sent to {@link #OTHER_PEER_QPN}, and the first QP's requests. */
    private final AtomicInteger otherRequests = new AtomicInteger();
    private final AtomicInteger firstRequests = new AtomicInteger();
    /** A second QP of the device, connected to {@link #OTHER_PEER_QPN} (its test only). */
    private QueuePair other;
    /** An ACK for {@link #other} that reaches the link when the first QP's retransmission leaves. */
    private volatile boolean otherAckWaiting;
    private volatile boolean otherAckOnRetransmit;
    private ScriptedPeer peer;

    @BeforeEach
    void setUp() {
        Device device = SoftDevices.createOnClock("arrived-ack", new LoopbackFabric(), clock);
        clock.drive(((SoftDevice) device).hca.progressAgent());
        Link unread = new Link() {
            @Override
            public void send(Packet p) {
                if (!Opcode.isResponse(new Bth().wrap(p.buffer, 0).opcode())) {
                    requests.incrementAndGet();
                    if (Bth.destQpnOf(p.buffer) == OTHER_PEER_QPN) {
                        otherRequests.incrementAndGet();
                    } else if (firstRequests.incrementAndGet() == 2 && otherAckOnRetransmit) {
                        otherAckWaiting = true; // arrives while the progress agent works through its due timers
                    }
                }
                p.release();
            }

            @Override
            public int receiveArrived() {
                if (otherAckWaiting) {
                    otherAckWaiting = false;
                    ackOther();
                    return 1;
                }
                int psn = waitingAck;
                if (psn < 0) {
                    return 0;
                }
                waitingAck = -1;
                peer.ack(psn);
                return 1;
            }
        };
        peer = new ScriptedPeer(device, "::ffff:10.9.9.7", PEER_QPN, new ScriptedPeer.Options().link(unread));
    }

    @AfterEach
    void tearDown() {
        if (other != null) {
            other.close();
        }
        peer.close();
    }

    /** A plain ACK of PSN 0 from {@link #OTHER_PEER_QPN} to {@link #other}. */
    private void ackOther() {
        Packet p = new PacketPool().acquire();
        new Bth().wrap(p.buffer, 0).write(Opcode.RC_ACKNOWLEDGE, false, 0, 0xFFFF, other.qpn(), false, 0);
        new Aeth().wrap(p.buffer, Opcode.offsetOf(Opcode.RC_ACKNOWLEDGE, Opcode.HEADER_AETH))
                .write(Aeth.ACK_CREDITS_INVALID, 1);
        p.headerLength = Opcode.headerLength(Opcode.RC_ACKNOWLEDGE);
        p.srcGid = peer.peerGid;
        p.dstGid = peer.localGid;
        peer.hca.receive(p);
    }

    /**
     * Two QPs' timers fall due in one round of the progress agent; the second one's ACK reaches the link
     * while the agent runs the first one's retransmission. It is taken in before the second timer is
     * judged, not after: each due timer looks at the link first.
     */
    @Test
    void anAckArrivingWhileTheAgentRunsEarlierTimersIsTakenInBeforeItsOwnTimer() {
        other = peer.pd.createQp(new QpInitAttr(QpType.RC, peer.cq, peer.cq).cap(new QpCap(4, 4, 1, 1, 0)));
        ReceivePathFuzzTest.Connect.bringUp(other, QpType.RC, peer.peerGid, OTHER_PEER_QPN, 7, 7);
        otherAckOnRetransmit = true;
        peer.postSend(1); // the first QP: its peer stays silent
        clock.advanceMillis(1);
        other.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).sge(peer.mr, 0, 16)
                .flags(SendFlag.SIGNALED));
        clock.advance(100_000_000L, 100_000_000L); // both timers due in one round of the agent
        assertEquals(2, firstRequests.get(), "the silent peer's QP retransmitted once");
        assertEquals(1, otherRequests.get(), "the other QP's ACK was taken in before its timer counted");
    }

    @Test
    void anAckWaitingUnreadInTheLinkIsTakenInBeforeTheTimerRetransmits() {
        peer.postSend(7);
        assertEquals(1, requests.get());
        waitingAck = 0; // the peer answered at once; the datagram sits in the socket, unread
        clock.advanceMillis(200); // three ACK timeout periods (timeout 14: 67 ms)
        assertEquals(1, requests.get(), "nothing retransmitted");
        assertEquals(0L, peer.ctx.counters(1).get("completer_retry_err"), "no retry spent");
        WorkCompletion wc = peer.pollNow();
        assertEquals(WcStatus.SUCCESS, wc == null ? null : wc.status(), "the SEND completed by the waiting ACK");
    }

    @Test
    void withNothingWaitingInTheLinkTheTimerStillRetransmits() {
        peer.postSend(7);
        clock.advanceMillis(200);
        assertTrue(requests.get() >= 2, "retransmitted: " + requests.get());
        assertTrue(peer.ctx.counters(1).get("completer_retry_err") >= 1);
    }
}
