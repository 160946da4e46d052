// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.soft.wire.RnrTimer;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/**
 * Which request packets ask for an ACK (BTH AckReq) when the QP sends over a link (UDP, shared memory)
 * rather than the in-process fabric: unsignaled messages ask only every quarter of the send window or
 * queue, a signaled one always, and after an ACK timeout every retransmitted message asks again, so a
 * responder that answers nothing but AckReq (rxe) acknowledges them and the QP does not run out of
 * retries. The peer is this test, on a fake clock; the link records what the QP sends.
 */
class LinkAckRequestTest {
    private static final int PEER_QPN = 0x79;
    private static final long TIMEOUT_NS = RnrTimer.ackTimeoutNanos(14); // ScriptedPeer's timeout, 67 ms
    private static final int SEND_WR = 64; // a quarter: 16, below a quarter window (32)

    private final FakeClock clock = new FakeClock();
    /** PSN and AckReq of each request packet sent, in order. */
    private final List<int[]> sent = new ArrayList<>();
    private ScriptedPeer peer;

    @BeforeEach
    void setUp() {
        Device device = SoftDevices.createOnClock("link-ackreq", new LoopbackFabric(), clock);
        clock.drive(((SoftDevice) device).hca.progressAgent());
        Link recording = new Link() {
            @Override
            public void send(Packet p) {
                Bth b = new Bth().wrap(p.buffer, 0);
                if (!Opcode.isResponse(b.opcode())) {
                    synchronized (sent) {
                        sent.add(new int[] {b.psn(), b.ackReq() ? 1 : 0});
                    }
                }
                p.release();
            }
        };
        peer = new ScriptedPeer(device, "::ffff:10.9.9.9", PEER_QPN, new ScriptedPeer.Options().link(recording)
                .cap(new QpCap(SEND_WR, 4, 1, 1, 0)).cq(SEND_WR).retries(2, 2));
    }

    @AfterEach
    void tearDown() {
        peer.close();
    }

    private void post(int n, boolean signaledLast) {
        for (int i = 0; i < n; i++) {
            boolean signaled = signaledLast && i == n - 1;
            peer.qp.postSend(new SendWorkRequest().wrId(i).opcode(WrOpcode.SEND).sge(peer.mr, 0, 16)
                    .flags(signaled ? SendFlag.SIGNALED : 0));
        }
    }

    /** The PSNs of the packets sent from index {@code from} on that asked for an ACK. */
    private List<Integer> asking(int from) {
        List<Integer> psns = new ArrayList<>();
        synchronized (sent) {
            for (int i = from; i < sent.size(); i++) {
                if (sent.get(i)[1] == 1) {
                    psns.add(sent.get(i)[0]);
                }
            }
        }
        return psns;
    }

    @Test
    void unsignaledMessagesAskEveryQuarterQueueAndASignaledOneAlways() {
        post(41, true);
        assertEquals(41, sent.size());
        assertEquals(List.of(15, 31, 40), asking(0), "every 16th packet and the signaled last");
        peer.ack(40);
        WorkCompletion wc = peer.pollNow();
        assertNotNull(wc, "the signaled SEND completes on the coalesced ACK");
        assertEquals(WcStatus.SUCCESS, wc.status());
        assertEquals(40L, wc.wrId());
        clock.advance(TIMEOUT_NS * 2, 1_000_000);
        assertEquals(41, sent.size(), "nothing retransmitted once acknowledged");
    }

    @Test
    void retransmittedMessagesAskForAnAckEach() {
        post(3, false);
        assertEquals(List.of(), asking(0), "three unsignaled SENDs: no ACK asked for");
        // the timer runs one more period for the packets sent after it was armed (Completer.armRetransmit)
        clock.advance(2 * TIMEOUT_NS + 1_000_000, 1_000_000);
        assertEquals(6, sent.size(), "the three are resent at the ACK timeout");
        assertEquals(List.of(0, 1, 2), asking(3), "each resent message asks for an ACK");
        peer.ack(2); // what a responder that answers only AckReq sends
        clock.advance(TIMEOUT_NS * 4, 1_000_000);
        assertEquals(6, sent.size(), "acknowledged: no further retransmission");
        assertNull(peer.pollNow(), "unsignaled: no completion, and no error");
        // New messages after the resent ones coalesce again, and the QP still works.
        post(17, true);
        assertEquals(List.of(3 + 15, 3 + 16), asking(6), "back to every 16th packet, and the signaled last");
        peer.ack(3 + 16);
        WorkCompletion wc = peer.pollNow();
        assertNotNull(wc);
        assertEquals(WcStatus.SUCCESS, wc.status());
    }
}
