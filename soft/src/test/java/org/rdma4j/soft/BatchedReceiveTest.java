// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.engine.Hca;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.*;

/**
 * The batched receive path a UDP link uses: packets for one QP that arrive in one batch are taken in
 * by one pass of the QP's task, and the responder answers the burst with one cumulative ACK (latest
 * PSN, latest MSN) where the per-packet path answers each packet with AckReq set. Duplicates in a
 * burst (a peer's retransmission) are answered once too. Every message still completes, in order.
 */
class BatchedReceiveTest {
    private static final int PEER_QPN = 0x77;
    private static final int BURST = 8;
    private static final int PAYLOAD = 16;

    /** What the device sent: opcode, PSN and, for acknowledgements, syndrome and MSN. */
    private record Sent(int opcode, int psn, int syndrome, int msn) {
    }

    private final List<Sent> sent = new ArrayList<>();
    private ScriptedPeer peer;
    private Hca hca;
    private Context ctx;
    private CompletionQueue cq;
    private MemoryRegion mr;

    @BeforeEach
    void setUp() {
        Link capture = new Link() {
            @Override
            public void send(Packet p) {
                Bth b = new Bth().wrap(p.buffer, 0);
                int syndrome = -1;
                int msn = -1;
                if (b.opcode() == Opcode.RC_ACKNOWLEDGE) {
                    Aeth a = new Aeth().wrap(p.buffer, Opcode.offsetOf(b.opcode(), Opcode.HEADER_AETH));
                    syndrome = a.syndrome();
                    msn = a.msn();
                }
                synchronized (sent) {
                    sent.add(new Sent(b.opcode(), b.psn(), syndrome, msn));
                }
                p.release();
            }
        };
        peer = new ScriptedPeer(SoftDevices.createLoopback("batch-rx", new LoopbackFabric(), null), "::ffff:10.9.9.9",
                PEER_QPN, new ScriptedPeer.Options().link(capture).cq(64).cap(new QpCap(16, 64, 1, 1, 0))
                        .mrBytes(PAYLOAD * 64));
        hca = peer.hca;
        ctx = peer.ctx;
        cq = peer.cq;
        mr = peer.mr;
        for (int i = 0; i < 64; i++) {
            peer.qp.postRecv(new RecvWorkRequest().wrId(i).sge(mr, (long) i * PAYLOAD, PAYLOAD));
        }
    }

    @AfterEach
    void tearDown() {
        peer.close();
    }

    private Packet send(int psn, byte fill) {
        Packet p = peer.request(Opcode.RC_SEND_ONLY, true, psn);
        p.buffer.asSlice(p.headerLength, PAYLOAD).fill(fill);
        p.setFlatPayload(PAYLOAD);
        return p;
    }

    private List<Sent> acks() {
        synchronized (sent) {
            return sent.stream().filter(s -> s.opcode() == Opcode.RC_ACKNOWLEDGE).toList();
        }
    }

    private int drain(int expect) {
        WorkCompletion[] wc = WorkCompletion.array(BURST * 2);
        int got = 0;
        long end = System.nanoTime() + 5_000_000_000L;
        while (got < expect && System.nanoTime() < end) {
            int n = cq.poll(wc);
            for (int i = 0; i < n; i++) {
                assertEquals(WcStatus.SUCCESS, wc[i].status(), "completion " + (got + i));
                assertEquals(got + i, (int) wc[i].wrId(), "receives complete in order");
                assertEquals(PAYLOAD, wc[i].byteLen());
            }
            got += n;
        }
        return got;
    }

    @Test
    void aBurstInOneBatchIsAcknowledgedOnceWithTheLatestPsnAndMsn() {
        for (int i = 0; i < BURST; i++) {
            hca.receiveInBatch(send(i, (byte) (i + 1)));
        }
        hca.endBatch();
        assertEquals(BURST, drain(BURST));
        List<Sent> acks = acks();
        assertEquals(1, acks.size(), "one coalesced ACK for the burst: " + acks);
        assertEquals(BURST - 1, acks.get(0).psn());
        assertEquals(BURST, acks.get(0).msn());
        assertEquals(Aeth.ACK_CREDITS_INVALID, acks.get(0).syndrome());
        for (int i = 0; i < BURST; i++) {
            assertEquals((byte) (i + 1), mr.segment().get(ValueLayout.JAVA_BYTE, (long) i * PAYLOAD), "message " + i);
        }
    }

    @Test
    void packetByPacketDeliveryAcknowledgesEachPacketThatAsksForIt() {
        for (int i = 0; i < BURST; i++) {
            hca.receive(send(i, (byte) 1));
        }
        assertEquals(BURST, drain(BURST));
        List<Sent> acks = acks();
        assertEquals(BURST, acks.size(), "one ACK per AckReq packet: " + acks);
        for (int i = 0; i < BURST; i++) {
            assertEquals(i, acks.get(i).psn());
            assertEquals(i + 1, acks.get(i).msn());
        }
    }

    @Test
    void aBurstOfDuplicatesIsAnsweredOnceAndExecutesNothingTwice() {
        for (int i = 0; i < BURST; i++) {
            hca.receive(send(i, (byte) 1));
        }
        assertEquals(BURST, drain(BURST));
        int before = acks().size();
        for (int round = 0; round < 3; round++) { // a peer retransmitting the whole window three times
            for (int i = 0; i < BURST; i++) {
                hca.receiveInBatch(send(i, (byte) 9));
            }
        }
        hca.endBatch();
        List<Sent> acks = acks();
        assertEquals(before + 1, acks.size(), "the duplicates get one ACK: " + acks);
        Sent last = acks.get(acks.size() - 1);
        assertEquals(BURST - 1, last.psn());
        assertEquals(BURST, last.msn());
        assertEquals(0, cq.poll(WorkCompletion.array(4)), "no receive consumed by a duplicate");
        assertEquals(1, mr.segment().get(ValueLayout.JAVA_BYTE, 0), "duplicates change no memory");
        assertTrue(ctx.counters(1).get("duplicate_request") >= 3L * BURST, ctx.counters(1).toString());
    }

    @Test
    void aNakInTheBatchFollowsTheAckForWhatCameBefore() {
        hca.receiveInBatch(send(0, (byte) 1));
        hca.receiveInBatch(send(1, (byte) 1));
        hca.receiveInBatch(send(5, (byte) 1)); // PSN 2..4 lost: sequence error NAK
        hca.endBatch();
        assertEquals(2, drain(2));
        List<Sent> all;
        synchronized (sent) {
            all = List.copyOf(sent);
        }
        assertEquals(2, all.size(), all.toString());
        assertEquals(1, all.get(0).psn(), "the ACK for PSN 1 goes first");
        assertEquals(Aeth.ACK_CREDITS_INVALID, all.get(0).syndrome());
        assertEquals(2, all.get(1).psn(), "then the NAK names the expected PSN");
        assertEquals(Aeth.NAK_PSN_SEQ_ERR, all.get(1).syndrome());
    }
}
