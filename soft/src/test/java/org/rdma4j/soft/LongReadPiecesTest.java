// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.Link;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.soft.packet.Packet;
import org.rdma4j.soft.wire.Bth;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.*;

/**
 * A long RDMA READ against a responder that sends all of a READ request's responses back to back (as
 * rxe does) over a path that holds only so many of them (a veth's backlog, a socket's receive buffer):
 * the requester asks for the READ in pieces that fit the path, so nothing is lost and nothing is
 * retransmitted, and the pieces never hold more responder resources than max_rd_atomic.
 */
class LongReadPiecesTest {
    /** Responses the path holds between two request packets; more in one run are dropped. */
    private static final int PATH_PACKETS = 512;
    private static final int MTU = 4096;

    /**
     * What both devices send goes through one of these (one per device, sharing the counts): a request
     * packet from the requester starts a new run, READ responses beyond {@link #PATH_PACKETS} in a
     * run are dropped. It also counts the READ requests sent and not yet answered to their end.
     */
    static final class BurstLimitedPath {
        final AtomicInteger run = new AtomicInteger();
        final AtomicInteger dropped = new AtomicInteger();
        final AtomicInteger unanswered = new AtomicInteger();
        final AtomicInteger mostUnanswered = new AtomicInteger();
        final AtomicInteger readRequests = new AtomicInteger();

        Link wrap(Link inner) {
            return new Link() {
                @Override
                public void send(Packet p) {
                    int op = Bth.opcodeOf(p.buffer);
                    if (op == Opcode.RC_RDMA_READ_REQUEST) {
                        run.set(0);
                        readRequests.incrementAndGet();
                        mostUnanswered.accumulateAndGet(unanswered.incrementAndGet(), Math::max);
                    } else if (op >= Opcode.RC_RDMA_READ_RESPONSE_FIRST && op <= Opcode.RC_RDMA_READ_RESPONSE_ONLY) {
                        if (run.incrementAndGet() > PATH_PACKETS) {
                            dropped.incrementAndGet();
                            p.release();
                            return;
                        }
                        if (op == Opcode.RC_RDMA_READ_RESPONSE_LAST || op == Opcode.RC_RDMA_READ_RESPONSE_ONLY) {
                            unanswered.decrementAndGet();
                        }
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
    void longReadOverAPathThatHolds512ResponsesIsNeverRetransmitted() {
        BurstLimitedPath path = runRead("long-read-window", 4, 8 << 20);
        assertEquals(0, path.dropped.get(), "responses dropped by the path: the READ was asked for in one burst");
        assertTrue(path.readRequests.get() >= (8 << 20) / MTU / 128,
                "an 8 MiB READ goes as several READ requests: " + path.readRequests.get());
    }

    @Test
    void longReadPiecesNeverHoldMoreResponderResourcesThanMaxRdAtomic() {
        BurstLimitedPath path = runRead("long-read-rdatomic", 1, 4 << 20);
        assertEquals(1, path.mostUnanswered.get(), "READ requests outstanding at once with max_rd_atomic 1");
        assertEquals(0, path.dropped.get());
    }

    /** One READ of {@code bytes} from b's memory into a's, over {@link BurstLimitedPath}s; returns the path. */
    private static BurstLimitedPath runRead(String tag, int maxRdAtomic, int bytes) {
        LoopbackFabric fabric = new LoopbackFabric();
        BurstLimitedPath path = new BurstLimitedPath();
        Device da = SoftDevices.createLoopback(tag + "-a", fabric, path::wrap);
        Device db = SoftDevices.createLoopback(tag + "-b", fabric, path::wrap);
        try (Arena arena = Arena.ofShared(); Context a = da.open(); Context b = db.open();
             ProtectionDomain pa = a.allocPd(); ProtectionDomain pb = b.allocPd();
             CompletionQueue ca = a.createCq(8); CompletionQueue cb = b.createCq(8);
             QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, ca, ca).cap(new QpCap(4, 4, 1, 1, 0)));
             QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cb, cb).cap(new QpCap(4, 4, 1, 1, 0)))) {
            connect(qa, b.queryGid(1, 1), qb.qpn(), maxRdAtomic);
            connect(qb, a.queryGid(1, 1), qa.qpn(), maxRdAtomic);
            MemorySegment dst = arena.allocate(bytes, 8);
            MemorySegment src = arena.allocate(bytes, 8);
            for (int i = 0; i < bytes; i += 4) {
                src.set(ValueLayout.JAVA_INT_UNALIGNED, i, i * 31 + 7);
            }
            try (MemoryRegion md = pa.regMr(dst, Access.LOCAL_WRITE);
                 MemoryRegion ms = pb.regMr(src, Access.LOCAL_WRITE | Access.REMOTE_READ)) {
                qa.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.RDMA_READ).flags(SendFlag.SIGNALED)
                        .sge(md, 0, bytes).rdma(ms.address(), ms.rkey()));
                WorkCompletion wc = poll(ca);
                assertEquals(WcStatus.SUCCESS, wc.status(), () -> wc + "; " + a.counters(1));
                assertEquals(0L, a.counters(1).getOrDefault("retransmits", 0L), () -> "the requester "
                        + "retransmitted: " + a.counters(1) + "; the path dropped " + path.dropped.get());
                for (int i = 0; i < bytes; i += 4) {
                    if (dst.get(ValueLayout.JAVA_INT_UNALIGNED, i) != i * 31 + 7) {
                        fail("READ data wrong at offset " + i);
                    }
                }
                qa.modify(new QpAttr().state(QpState.RESET), QpAttrMask.STATE); // nothing holds the MRs
                qb.modify(new QpAttr().state(QpState.RESET), QpAttrMask.STATE);
            }
        } finally {
            SoftDevices.remove(db);
            SoftDevices.remove(da);
        }
        return path;
    }

    private static void connect(QueuePair q, Gid peerGid, int peerQpn, int maxRdAtomic) {
        q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1)
                        .accessFlags(Access.LOCAL_WRITE | Access.REMOTE_READ),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        q.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.ofBytes(MTU)).destQpNum(peerQpn).rqPsn(100)
                        .maxDestRdAtomic(maxRdAtomic).minRnrTimer(1).ahAttr(AhAttr.roce(peerGid, 1)),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        // timeout 14 (67 ms) and retry_cnt 7, as perftest sets them
        q.modify(new QpAttr().state(QpState.RTS).sqPsn(100).timeout(14).retryCnt(7).rnrRetry(7)
                        .maxRdAtomic(maxRdAtomic),
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
        fail("the READ did not complete in 60 s");
        return null;
    }
}
