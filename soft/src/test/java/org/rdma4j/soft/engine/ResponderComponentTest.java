// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.EngineAccess;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.soft.wire.Opcode;
import org.rdma4j.verbs.*;

/**
 * The responder and the completer driven with {@link PacketInfo}s alone, the way every path reaches
 * them: no requester, no link. The responder QP is in RTR with expected PSN 100 and the peer QP it
 * answers in RTR too (so the ACKs and NAKs sent back are dropped there as stale, and nothing else
 * moves); each case feeds requests into the responder inside its task and checks the target memory,
 * the expected PSN, the QP's state and the device's counters.
 */
class ResponderComponentTest {
    private static final int PSN = 100;

    private record Setup(Context b, QpEngine responder, QpEngine peer, MemoryRegion target, MemorySegment dst,
                         MemorySegment src) {
        long counter(String name) {
            return b.counters(1).getOrDefault(name, 0L);
        }

        /** Runs {@code r} inside the responder QP's task, as a delivered packet or a hand-over is. */
        void inTask(Runnable r) {
            responder.task.runExclusive(r);
        }

        PacketInfo write(int psn, long va, int rkey, long srcValue) {
            src.set(ValueLayout.JAVA_LONG, 0, srcValue);
            return new PacketInfo().handOver(Opcode.RC_RDMA_WRITE_ONLY, psn, responder.pkey, true, false, va, rkey, 0,
                    src, 0, 8);
        }
    }

    private static void with(String name, Consumer<Setup> body) {
        Device da = SoftDevices.createLoopback(name + "-a");
        Device db = SoftDevices.createLoopback(name + "-b");
        try (Context a = da.open(); Context b = db.open(); Arena arena = Arena.ofShared()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(16);
            CompletionQueue cb = b.createCq(16);
            QpCap cap = new QpCap(8, 8, 1, 1, 0);
            QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, ca, ca).cap(cap));
            QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cb, cb).cap(cap));
            toRtr(qa, b, qb);
            toRtr(qb, a, qa);
            MemorySegment dst = arena.allocate(64, 8);
            MemoryRegion mb = pb.regMr(dst, Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            body.accept(new Setup(b, EngineAccess.engine(qb), EngineAccess.engine(qa), mb, dst,
                    arena.allocate(64, 8)));
            qa.close();
            qb.close();
            mb.close();
            ca.close();
            cb.close();
            pa.close();
            pb.close();
        } finally {
            SoftDevices.remove(da);
            SoftDevices.remove(db);
        }
    }

    private static void toRtr(QueuePair q, Context peerCtx, QueuePair peer) {
        q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(Access.REMOTE_WRITE),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        q.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.ofBytes(1024)).destQpNum(peer.qpn()).rqPsn(PSN)
                        .maxDestRdAtomic(1).minRnrTimer(1).ahAttr(AhAttr.roce(peerCtx.queryGid(1, 1), 1)),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
    }

    @Test
    void aWriteInOrderIsPlacedAndMovesTheExpectedPsn() {
        with("rc-in-order", s -> {
            s.inTask(() -> s.responder.responder.receive(s.write(PSN, s.target.address(), s.target.rkey(), 0x1122L)));
            assertEquals(0x1122L, s.dst.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(PSN + 1, s.responder.responder.expectedPsn());
            assertEquals(QpState.RTR, s.responder.state());
        });
    }

    @Test
    void theSameWriteAgainIsADuplicateAndIsNotExecutedTwice() {
        with("rc-duplicate", s -> {
            s.inTask(() -> s.responder.responder.receive(s.write(PSN, s.target.address(), s.target.rkey(), 7)));
            long before = s.counter("duplicate_request");
            s.inTask(() -> s.responder.responder.receive(s.write(PSN, s.target.address(), s.target.rkey(), 8)));
            assertEquals(7, s.dst.get(ValueLayout.JAVA_LONG, 0), "the retransmission is answered, not executed");
            assertEquals(before + 1, s.counter("duplicate_request"));
            assertEquals(PSN + 1, s.responder.responder.expectedPsn());
        });
    }

    @Test
    void requestsAheadOfTheExpectedPsnAreNakedOnceAndChangeNothing() {
        with("rc-ahead", s -> {
            long naks = s.counter("sent_seq_err_naks");
            s.inTask(() -> s.responder.responder.receive(s.write(PSN + 5, s.target.address(), s.target.rkey(), 9)));
            s.inTask(() -> s.responder.responder.receive(s.write(PSN + 6, s.target.address(), s.target.rkey(), 9)));
            assertEquals(naks + 1, s.counter("sent_seq_err_naks"), "one sequence NAK until the gap is filled");
            assertEquals(0, s.dst.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(PSN, s.responder.responder.expectedPsn());
            assertEquals(QpState.RTR, s.responder.state());
        });
    }

    @Test
    void aWriteWithABadRkeyIsRefusedAndMovesTheQpToError() {
        with("rc-bad-rkey", s -> {
            s.inTask(() -> s.responder.responder.receive(
                    s.write(PSN, s.target.address(), s.target.rkey() ^ 0x100, 5)));
            assertEquals(0, s.dst.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(QpState.ERR, s.responder.state());
        });
    }

    @Test
    void aWritePastTheRegionIsRefusedAndMovesTheQpToError() {
        with("rc-past", s -> {
            s.inTask(() -> s.responder.responder.receive(
                    s.write(PSN, s.target.address() + 60, s.target.rkey(), 5)));
            assertEquals(QpState.ERR, s.responder.state());
        });
    }

    @Test
    void aPayloadLongerThanTheRethSaysIsAnInvalidRequest() {
        with("rc-length", s -> {
            s.inTask(() -> {
                PacketInfo in = s.write(PSN, s.target.address(), s.target.rkey(), 5);
                in.dmaLength = 4; // 8 bytes of payload for a WRITE of 4
                s.responder.responder.receive(in);
            });
            assertEquals(0, s.dst.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(QpState.ERR, s.responder.state());
        });
    }

    @Test
    void aRequestWithAnotherPkeyIsDroppedAndCounted() {
        with("rc-pkey", s -> {
            long drops = s.counter("bad_pkey_drops");
            s.inTask(() -> {
                PacketInfo in = s.write(PSN, s.target.address(), s.target.rkey(), 5);
                in.pkey = 0x1234;
                s.responder.responder.receive(in);
            });
            assertEquals(drops + 1, s.counter("bad_pkey_drops"));
            assertEquals(0, s.dst.get(ValueLayout.JAVA_LONG, 0));
            assertEquals(PSN, s.responder.responder.expectedPsn());
            assertEquals(QpState.RTR, s.responder.state());
        });
    }

    @Test
    void anAckForAQpThatDoesNotSendIsStale() {
        with("rc-stale-ack", s -> {
            // the ACKs the cases above send back reach the peer in RTR; handed to it directly here
            long stale = s.counter("stale_response_drops");
            s.responder.task.runExclusive(() -> s.responder.completer.receive(new PacketInfo().positiveAck(PSN)));
            assertEquals(stale + 1, s.counter("stale_response_drops"));
        });
    }
}
