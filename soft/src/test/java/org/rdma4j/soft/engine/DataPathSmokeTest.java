// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft.engine;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.SoftDevices;
import org.rdma4j.verbs.*;

class DataPathSmokeTest {
    static Device peerDev;
    static Context a;
    static Context b;

    @BeforeAll
    static void up() {
        peerDev = SoftDevices.createLoopback("smoke-peer");
        a = Verbs.open("soft0");
        b = peerDev.open();
    }

    @AfterAll
    static void down() {
        b.close();
        a.close();
        SoftDevices.remove(peerDev);
    }

    static WorkCompletion poll(CompletionQueue cq) {
        WorkCompletion[] wc = WorkCompletion.array(1);
        long end = System.nanoTime() + 5_000_000_000L;
        while (System.nanoTime() < end) {
            if (cq.poll(wc) == 1) {
                return wc[0];
            }
            Thread.onSpinWait();
        }
        fail("no completion");
        return null;
    }

    public static void connect(QueuePair q, Context ctx, QueuePair peer, Context peerCtx, int mtu) {
        q.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1)
                .accessFlags(Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        q.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.ofBytes(mtu)).destQpNum(peer.qpn()).rqPsn(100)
                .maxDestRdAtomic(4).minRnrTimer(1).ahAttr(AhAttr.roce(peerCtx.queryGid(1, 1), 1)),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        q.modify(new QpAttr().state(QpState.RTS).sqPsn(100).timeout(10).retryCnt(7).rnrRetry(7).maxRdAtomic(4),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT | QpAttrMask.RNR_RETRY
                        | QpAttrMask.MAX_QP_RD_ATOMIC);
    }

    @Test
    void rcSendWriteReadAtomic() {
        try (Arena arena = Arena.ofShared()) {
            ProtectionDomain pa = a.allocPd();
            ProtectionDomain pb = b.allocPd();
            CompletionQueue ca = a.createCq(64);
            CompletionQueue cb = b.createCq(64);
            QueuePair qa = pa.createQp(new QpInitAttr(QpType.RC, ca, ca).cap(new QpCap(16, 16, 4, 4, 64)));
            QueuePair qb = pb.createQp(new QpInitAttr(QpType.RC, cb, cb).cap(new QpCap(16, 16, 4, 4, 64)));
            connect(qa, a, qb, b, 1024);
            connect(qb, b, qa, a, 1024);
            int all = Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.REMOTE_READ | Access.REMOTE_ATOMIC;
            MemorySegment sa = arena.allocate(1 << 16, 8);
            MemorySegment sb = arena.allocate(1 << 16, 8);
            MemoryRegion ma = pa.regMr(sa, all);
            MemoryRegion mb = pb.regMr(sb, all);
            for (int i = 0; i < 5000; i++) {
                sa.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
            }
            qb.postRecv(new RecvWorkRequest().wrId(9).sge(mb, 0, 8192));
            qa.postSend(new SendWorkRequest().wrId(1).opcode(WrOpcode.SEND_WITH_IMM).immData(0x12345678)
                    .flags(SendFlag.SIGNALED).sge(ma, 0, 5000));
            WorkCompletion w = poll(ca);
            assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            w = poll(cb);
            assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            assertEquals(5000, w.byteLen());
            assertEquals(0x12345678, w.immData());
            assertEquals(-1L, sa.asSlice(0, 5000).mismatch(sb.asSlice(0, 5000)));

            qa.postSend(new SendWorkRequest().wrId(2).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                    .sge(ma, 0, 3000).rdma(mb.address() + 10000, mb.rkey()));
            w = poll(ca);
            assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            assertEquals(-1L, sa.asSlice(0, 3000).mismatch(sb.asSlice(10000, 3000)));

            sb.asSlice(20000, 4000).fill((byte) 0x5A);
            qa.postSend(new SendWorkRequest().wrId(3).opcode(WrOpcode.RDMA_READ).flags(SendFlag.SIGNALED)
                    .sge(ma, 30000, 4000).rdma(mb.address() + 20000, mb.rkey()));
            w = poll(ca);
            assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            assertEquals(-1L, sa.asSlice(30000, 4000).mismatch(sb.asSlice(20000, 4000)));

            sb.set(ValueLayout.JAVA_LONG, 40000, 0x0101010101010101L);
            qa.postSend(new SendWorkRequest().wrId(4).flags(SendFlag.SIGNALED)
                    .fetchAdd(mb.address() + 40000, mb.rkey(), 0x0202020202020202L).sge(ma, 40000, 8));
            w = poll(ca);
            assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            assertEquals(0x0303030303030303L, sb.get(ValueLayout.JAVA_LONG, 40000));
            assertEquals(0x0101010101010101L, sa.get(ValueLayout.JAVA_LONG, 40000));

            // bad rkey -> REM_ACCESS_ERR, then flush
            qa.postSend(new SendWorkRequest().wrId(5).opcode(WrOpcode.RDMA_WRITE).flags(SendFlag.SIGNALED)
                    .sge(ma, 0, 8).rdma(mb.address(), mb.rkey() ^ 0x100));
            w = poll(ca);
            assertEquals(WcStatus.REM_ACCESS_ERR, w.status(), w.toString());
            assertEquals(QpState.ERR, qa.state());
            assertEquals(QpState.ERR, qb.state());
            qa.close();
            qb.close();
            ma.close();
            mb.close();
            ca.close();
            cb.close();
            pa.close();
            pb.close();
        }
    }
}
