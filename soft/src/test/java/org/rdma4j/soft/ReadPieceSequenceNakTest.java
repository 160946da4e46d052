// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Aeth;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.*;

/**
 * A long RDMA READ goes as several READ requests (pieces of 128 responses). When the request of the
 * second piece is lost, the responder answers the next request with a PSN sequence error NAK whose PSN
 * is that second piece's first PSN, inside the READ. If a response of the first piece was lost as well,
 * that NAK must not count the lost response as received: the requester asks for it again, and the READ
 * completes with the responder's data in every byte.
 */
class ReadPieceSequenceNakTest {
    private static final int MTU = 256;
    /**
     * 130 packets: pieces of 128 and 2, so that the next request (PSN 230) is within the send window of
     * 128 PSNs while the first piece's last response is missing.
     */
    private static final int BYTES = 130 * MTU;
    private static final int START_PSN = 100;
    /** The first PSN of the second piece: where the responder's sequence NAK points. */
    private static final int SECOND_PIECE_PSN = START_PSN + 128;
    /** The last response of the first piece. */
    private static final int LAST_OF_FIRST_PIECE = SECOND_PIECE_PSN - 1;

    /**
     * Drops, once each, the READ request of the second piece and the last response of the first piece,
     * and counts the sequence NAKs the responder sends.
     */
    static final class Path {
        final AtomicBoolean requestDropped = new AtomicBoolean();
        final AtomicBoolean responseDropped = new AtomicBoolean();
        final AtomicInteger sequenceNaks = new AtomicInteger();

        Link wrap(Link inner) {
            return new Link() {
                @Override
                public void send(Packet p) {
                    int op = Bth.opcodeOf(p.buffer);
                    int psn = Bth.psnOf(p.buffer);
                    if (op == Opcode.RC_RDMA_READ_REQUEST && psn == SECOND_PIECE_PSN
                            && requestDropped.compareAndSet(false, true)) {
                        p.release();
                        return;
                    }
                    boolean response = op >= Opcode.RC_RDMA_READ_RESPONSE_FIRST
                            && op <= Opcode.RC_RDMA_READ_RESPONSE_ONLY;
                    if (response && psn == LAST_OF_FIRST_PIECE && responseDropped.compareAndSet(false, true)) {
                        p.release();
                        return;
                    }
                    if (op == Opcode.RC_ACKNOWLEDGE && Aeth.syndromeAt(p.buffer,
                            Opcode.offsetOf(op, Opcode.HEADER_AETH)) == Aeth.NAK_PSN_SEQ_ERR) {
                        sequenceNaks.incrementAndGet();
                    }
                    inner.send(p);
                }

                @Override
                public long dropped() {
                    return inner.dropped();
                }

                @Override
                public void close() {
                    inner.close();
                }
            };
        }
    }

    @Test
    void sequenceNakInsideALongReadDoesNotSkipALostResponseOfTheEarlierPiece() {
        LoopbackFabric fabric = new LoopbackFabric();
        Path path = new Path();
        Device da = SoftDevices.createLoopback("read-piece-nak-a", fabric, path::wrap);
        Device db = SoftDevices.createLoopback("read-piece-nak-b", fabric, path::wrap);
        try (Arena arena = Arena.ofShared(); Context a = da.open(); Context b = db.open();
             ProtectionDomain pa = a.allocPd(); ProtectionDomain pb = b.allocPd();
             CompletionQueue ca = a.createCq(8); CompletionQueue cb = b.createCq(8);
             QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, ca, ca).cap(new QpCap(4, 4, 1, 1, 0)));
             QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cb, cb).cap(new QpCap(4, 4, 1, 1, 0)))) {
            connect(qa, b.queryGid(1, 1), qb.qpn());
            connect(qb, a.queryGid(1, 1), qa.qpn());
            MemorySegment dst = arena.allocate(BYTES + 8, 8);
            MemorySegment src = arena.allocate(BYTES, 8);
            for (int i = 0; i < BYTES; i += 4) {
                src.set(ValueLayout.JAVA_INT_UNALIGNED, i, i * 31 + 7);
            }
            try (MemoryRegion md = pa.regMr(dst, Access.LOCAL_WRITE);
                 MemoryRegion ms = pb.regMr(src, Access.LOCAL_WRITE | Access.REMOTE_READ)) {
                qa.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_READ).flags(SendFlag.SIGNALED)
                        .sge(md, 0, BYTES).rdma(ms.address(), ms.rkey()));
                // the next request, at PSN 230, finds the responder expecting 228: a sequence NAK of 228
                qa.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_READ).flags(SendFlag.SIGNALED)
                        .sge(md, BYTES, 8).rdma(ms.address(), ms.rkey()));
                WorkCompletion first = poll(ca);
                WorkCompletion second = poll(ca);
                assertEquals(WcStatus.SUCCESS, first.status(), () -> first + "; " + a.counters(1));
                assertEquals(WcStatus.SUCCESS, second.status(), () -> second + "; " + a.counters(1));
                assertTrue(path.requestDropped.get() && path.responseDropped.get(), "the path dropped both");
                assertTrue(path.sequenceNaks.get() >= 1, () -> "the responder NAKed the request after the lost "
                        + "piece: " + a.counters(1) + " " + b.counters(1));
                for (int i = 0; i < BYTES; i += 4) {
                    int at = i;
                    assertEquals(i * 31 + 7, dst.get(ValueLayout.JAVA_INT_UNALIGNED, i),
                            () -> "READ data wrong at offset " + at + " (response PSN " + (START_PSN + at / MTU)
                                    + "); " + a.counters(1));
                }
                qa.modify(new QpAttr().state(QpState.RESET), QpAttrMask.STATE); // nothing holds the MRs
                qb.modify(new QpAttr().state(QpState.RESET), QpAttrMask.STATE);
            }
        } finally {
            SoftDevices.remove(db);
            SoftDevices.remove(da);
        }
    }

    private static void connect(QueuePair q, Gid peerGid, int peerQpn) {
        q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1)
                        .accessFlags(Access.LOCAL_WRITE | Access.REMOTE_READ),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        q.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.ofBytes(MTU)).destQpNum(peerQpn).rqPsn(START_PSN)
                        .maxDestRdAtomic(4).minRnrTimer(1).ahAttr(AhAttr.roce(peerGid, 1)),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        // timeout 18 (about 1 s): the NAK, not a timeout, is what recovers from the lost request
        q.modify(new QpAttr().state(QpState.RTS).sqPsn(START_PSN).timeout(18).retryCnt(7).rnrRetry(7)
                        .maxRdAtomic(4),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT | QpAttrMask.RNR_RETRY
                        | QpAttrMask.MAX_QP_RD_ATOMIC);
    }

    private static WorkCompletion poll(CompletionQueue cq) {
        WorkCompletion[] wc = WorkCompletion.array(1);
        long end = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < end) {
            if (cq.poll(wc) == 1) {
                return wc[0];
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion in 60 s");
    }
}
