// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.link.LoopbackFabric;
import org.rdma4j.verbs.*;

/**
 * On the in-process fabric a packet's source is the sending QP's own GID, so a third device can
 * play the hostile sender with ordinary verbs: its QP aims at the victim's QP with the victim's next
 * expected PSN. Only the connected peer speaks for an RC or UC connection (rxe's check_addr): the
 * third device's packets, and the real peer's packets sent to another of the victim's GIDs, are
 * dropped before the transport and counted as {@code rcvd_bad_addr_drops}.
 */
class ConnectedPeerOnlyTest {
    private static final long WAIT_NANOS = 5_000_000_000L;
    private static final int ACCESS = Access.LOCAL_WRITE | Access.REMOTE_WRITE;
    private static final int GID = 1;

    private Device a;
    private Device b;
    private Device c;
    private Context ca;
    private Context cb;
    private Context cc;
    private Arena arena;
    private final java.util.List<End> ends = new java.util.ArrayList<>();

    @BeforeEach
    void setUp() {
        LoopbackFabric fabric = new LoopbackFabric();
        a = SoftDevices.createLoopback("peer-only-a", fabric, null);
        b = SoftDevices.createLoopback("peer-only-b", fabric, null);
        c = SoftDevices.createLoopback("peer-only-c", fabric, null);
        ca = a.open();
        cb = b.open();
        cc = c.open();
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() {
        try {
            for (End e : ends) {
                e.close();
            }
            ca.close();
            cb.close();
            cc.close();
            arena.close();
        } finally {
            SoftDevices.remove(a);
            SoftDevices.remove(b);
            SoftDevices.remove(c);
        }
    }

    @Test
    void rcSendFromAThirdDeviceIsDroppedAndTheRealPeerStillUsesThatPsn() throws Exception {
        End va = new End(cb, QpType.RC);
        End real = new End(ca, QpType.RC);
        End evil = new End(cc, QpType.RC);
        va.connect(cb, real, ca.queryGid(1, GID), GID, 0, 0);
        real.connect(ca, va, cb.queryGid(1, GID), GID, 0, 0);
        // The intruder knows the victim's QPN and expected PSN (0); no retries, so it gives up fast.
        evil.connect(cc, va, cb.queryGid(1, GID), GID, 0, 0);
        va.qp.postRecv(new RecvWorkRequest().wrId(1).sge(va.mr, 0, 256));

        evil.mr.segment().asSlice(0, 64).fill((byte) 0x66);
        evil.qp.postSend(new SendWorkRequest().wrId(9).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                .sge(evil.mr, 0, 64));
        assertEquals(WcStatus.RETRY_EXC_ERR, poll(evil.cq).status(), "the victim never answered the intruder");
        assertTrue(cb.counters(1).get("rcvd_bad_addr_drops") >= 1, cb.counters(1).toString());
        assertNull(tryPoll(va.cq), "the intruder's SEND took no receive");
        assertEquals((byte) 0, va.mr.segment().get(ValueLayout.JAVA_BYTE, 0));

        real.mr.segment().asSlice(0, 32).fill((byte) 0x22);
        real.qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                .sge(real.mr, 0, 32));
        assertEquals(WcStatus.SUCCESS, poll(real.cq).status());
        WorkCompletion got = poll(va.cq);
        assertEquals(1L, got.wrId());
        assertEquals(32, got.byteLen());
        assertEquals((byte) 0x22, va.mr.segment().get(ValueLayout.JAVA_BYTE, 31));
        assertEquals(0L, cb.counters(1).get("duplicate_request"), "PSN 0 was still free for the real peer");
        assertEquals(QpState.RTS, va.qp.state());
    }

    @Test
    void ucWriteFromAThirdDeviceChangesNothing() throws Exception {
        End va = new End(cb, QpType.UC);
        End real = new End(ca, QpType.UC);
        End evil = new End(cc, QpType.UC);
        va.connect(cb, real, ca.queryGid(1, GID), GID, 0, 0);
        real.connect(ca, va, cb.queryGid(1, GID), GID, 0, 0);
        evil.connect(cc, va, cb.queryGid(1, GID), GID, 0, 0);

        evil.mr.segment().asSlice(0, 64).fill((byte) 0x66);
        evil.qp.postSend(new SendWorkRequest().wrId(9).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                .sge(evil.mr, 0, 64).rdma(va.mr.address(), va.mr.rkey()));
        assertEquals(WcStatus.SUCCESS, poll(evil.cq).status(), "UC completes at send");
        awaitCounter(cb, "rcvd_bad_addr_drops", 1);
        assertEquals((byte) 0, va.mr.segment().get(ValueLayout.JAVA_BYTE, 0));

        real.mr.segment().asSlice(0, 64).fill((byte) 0x33);
        real.qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                .sge(real.mr, 0, 64).rdma(va.mr.address(), va.mr.rkey()));
        assertEquals(WcStatus.SUCCESS, poll(real.cq).status());
        awaitByte(va, 63, (byte) 0x33);
        assertEquals(1L, cb.counters(1).get("rcvd_bad_addr_drops"));
    }

    @Test
    void thePeerSendingToAnotherOfTheVictimsGidsIsDropped() throws Exception {
        End va = new End(cb, QpType.UC);
        End real = new End(ca, QpType.UC);
        va.connect(cb, real, ca.queryGid(1, GID), GID, 0, 0);
        // Right source (A's GID 1), wrong destination: B's GID 0, which the fabric also routes to B.
        real.connect(ca, va, cb.queryGid(1, 0), GID, 0, 0);
        real.mr.segment().asSlice(0, 64).fill((byte) 0x44);
        real.qp.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                .sge(real.mr, 0, 64).rdma(va.mr.address(), va.mr.rkey()));
        assertEquals(WcStatus.SUCCESS, poll(real.cq).status());
        awaitCounter(cb, "rcvd_bad_addr_drops", 1);
        assertEquals((byte) 0, va.mr.segment().get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void udQpsTakeDatagramsFromAnyone() throws Exception {
        End va = new End(cb, QpType.UD);
        End evil = new End(cc, QpType.UD);
        va.connectUd();
        evil.connectUd();
        va.qp.postRecv(new RecvWorkRequest().wrId(1).sge(va.mr, 0, 40 + 64));
        AddressHandle ah = evil.pd.createAh(AhAttr.roce(cb.queryGid(1, GID), GID));
        evil.qp.postSend(new SendWorkRequest().wrId(3).opcode(WrOpcode.SEND).flags(SendFlag.SIGNALED)
                .sge(evil.mr, 0, 16).ud(ah, va.qp.qpn(), 0x1234));
        assertEquals(WcStatus.SUCCESS, poll(evil.cq).status());
        assertEquals(40 + 16, poll(va.cq).byteLen(), "GRH area and payload");
        assertEquals(0L, cb.counters(1).get("rcvd_bad_addr_drops"));
        ah.close();
    }

    /** One QP with its PD, CQ and 4 KiB of registered memory. */
    private final class End {
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final QueuePair qp;
        final MemoryRegion mr;

        End(Context ctx, QpType type) {
            pd = ctx.allocPd();
            cq = ctx.createCq(16);
            qp = pd.createQp(new QpInitAttr(type, cq, cq).cap(new QpCap(8, 8, 1, 1, 0)));
            mr = pd.regMr(arena.allocate(4096, 8), ACCESS);
            ends.add(this);
        }

        void close() {
            qp.close();
            mr.close();
            cq.close();
            pd.close();
        }

        void connect(Context ctx, End peer, Gid dgid, int sgidIndex, int sqPsn, int rqPsn) {
            boolean rc = qp.type() == QpType.RC;
            qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(Access.REMOTE_WRITE),
                    QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
            QpAttr r = new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(peer.qp.qpn()).rqPsn(rqPsn)
                    .ahAttr(AhAttr.roce(dgid, sgidIndex));
            int rtr = QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN
                    | QpAttrMask.RQ_PSN;
            if (rc) {
                r.maxDestRdAtomic(1).minRnrTimer(1);
                rtr |= QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER;
            }
            qp.modify(r, rtr);
            QpAttr s = new QpAttr().state(QpState.RTS).sqPsn(sqPsn);
            int rts = QpAttrMask.STATE | QpAttrMask.SQ_PSN;
            if (rc) {
                s.timeout(12).retryCnt(0).rnrRetry(0).maxRdAtomic(1);
                rts |= QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT | QpAttrMask.RNR_RETRY
                        | QpAttrMask.MAX_QP_RD_ATOMIC;
            }
            qp.modify(s, rts);
        }

        void connectUd() {
            qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).qkey(0x1234),
                    QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.QKEY);
            qp.modify(new QpAttr().state(QpState.RTR), QpAttrMask.STATE);
            qp.modify(new QpAttr().state(QpState.RTS).sqPsn(0), QpAttrMask.STATE | QpAttrMask.SQ_PSN);
        }
    }

    private static void awaitCounter(Context ctx, String name, long atLeast) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NANOS;
        while (ctx.counters(1).get(name) < atLeast) {
            assertTrue(System.nanoTime() < end, name + " did not reach " + atLeast + ": " + ctx.counters(1));
            Thread.sleep(1);
        }
    }

    private static void awaitByte(End e, long at, byte expected) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NANOS;
        while (e.mr.segment().get(ValueLayout.JAVA_BYTE, at) != expected) {
            assertTrue(System.nanoTime() < end, "byte " + at + " never became " + expected);
            Thread.sleep(1);
        }
    }

    private static WorkCompletion tryPoll(CompletionQueue cq) {
        WorkCompletion[] wc = WorkCompletion.array(1);
        return cq.poll(wc) == 1 ? wc[0] : null;
    }

    private static WorkCompletion poll(CompletionQueue cq) {
        long end = System.nanoTime() + WAIT_NANOS;
        WorkCompletion wc;
        while ((wc = tryPoll(cq)) == null) {
            assertTrue(System.nanoTime() < end, "no completion within 5 s");
            Thread.onSpinWait();
        }
        return wc;
    }
}
