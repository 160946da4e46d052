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
import org.rdma4j.soft.link.Packet;
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

    private final FakeClock clock = new FakeClock();
    private final AtomicInteger requests = new AtomicInteger();
    /** The PSN of the ACK waiting in the link, or -1. */
    private volatile int waitingAck = -1;
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
                }
                p.release();
            }

            @Override
            public int receiveArrived() {
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
        peer.close();
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
