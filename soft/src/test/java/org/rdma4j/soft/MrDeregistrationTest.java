// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.soft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.soft.engine.KeyHolder;
import org.rdma4j.verbs.Access;
import org.rdma4j.verbs.AhAttr;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Device;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.MemoryWindow;
import org.rdma4j.verbs.Mtu;
import org.rdma4j.verbs.MwType;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * Deregistration is refused only while a window is bound to the region (as rxe_dereg_mr): posted
 * work requests do not hold it, they look their lkeys up when they run and fail if the region is
 * gone. A bind and a deregistration racing each other end one way or the other, never with a window
 * bound to a deregistered region.
 */
class MrDeregistrationTest {
    private Device dev;
    private Context ctx;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private Arena arena;
    private final java.util.ArrayDeque<org.rdma4j.verbs.VerbsResource> opened = new java.util.ArrayDeque<>();

    @BeforeEach
    void open() {
        dev = SoftDevices.createLoopback("mr-dereg");
        ctx = dev.open();
        pd = ctx.allocPd();
        cq = ctx.createCq(16);
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        while (!opened.isEmpty()) {
            opened.pop().close();
        }
        cq.close();
        pd.close();
        arena.close();
        ctx.close();
        SoftDevices.remove(dev);
    }

    private MemoryRegion mr(int access) {
        return pd.regMr(arena.allocate(4096, 4096), access);
    }

    private QueuePair initQp(CompletionQueue c) {
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, c, c).cap(new QpCap(4, 4, 2, 2, 0)));
        qp.modify(new QpAttr().state(QpState.INIT).pkeyIndex(0).portNum(1).accessFlags(Access.REMOTE_WRITE),
                QpAttrMask.STATE | QpAttrMask.PKEY_INDEX | QpAttrMask.PORT | QpAttrMask.ACCESS_FLAGS);
        return qp;
    }

    /** A QP connected to itself, in RTS. */
    private QueuePair rtsQp(CompletionQueue c) {
        QueuePair qp = initQp(c);
        qp.modify(new QpAttr().state(QpState.RTR).pathMtu(Mtu.MTU_1024).destQpNum(qp.qpn()).rqPsn(0)
                        .maxDestRdAtomic(1).minRnrTimer(1).ahAttr(AhAttr.roce(ctx.queryGid(1, 0), 0)),
                QpAttrMask.STATE | QpAttrMask.AV | QpAttrMask.PATH_MTU | QpAttrMask.DEST_QPN | QpAttrMask.RQ_PSN
                        | QpAttrMask.MAX_DEST_RD_ATOMIC | QpAttrMask.MIN_RNR_TIMER);
        qp.modify(new QpAttr().state(QpState.RTS).sqPsn(0).timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(1),
                QpAttrMask.STATE | QpAttrMask.SQ_PSN | QpAttrMask.TIMEOUT | QpAttrMask.RETRY_CNT
                        | QpAttrMask.RNR_RETRY | QpAttrMask.MAX_QP_RD_ATOMIC);
        return qp;
    }

    private static WorkCompletion pollOne(CompletionQueue c) {
        WorkCompletion[] wc = WorkCompletion.array(1);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (c.poll(wc) == 0) {
            assertTrue(System.nanoTime() < deadline, "no completion in 10 s");
            Thread.onSpinWait();
        }
        return wc[0];
    }

    @Test
    void postedReceivesDoNotHoldTheirRegionsAndAreFlushedWithoutThem() {
        QueuePair qp = initQp(cq);
        opened.push(qp);
        MemoryRegion a = mr(Access.LOCAL_WRITE);
        MemoryRegion b = mr(Access.LOCAL_WRITE);
        qp.postRecv(new RecvWorkRequest().wrId(1).sge(a, 0, 64).sge(b, 0, 64));
        a.close();
        b.close();
        assertTrue(a.isClosed() && b.isClosed(), "a posted receive holds no region");
        qp.modify(new QpAttr().state(QpState.ERR), QpAttrMask.STATE);
        WorkCompletion wc = pollOne(cq);
        assertEquals(WcStatus.WR_FLUSH_ERR, wc.status(), wc::toString);
        assertEquals(1, wc.wrId());
    }

    @Test
    void receivesPostedToAnSrqDoNotHoldARegion() {
        SharedReceiveQueue srq = pd.createSrq(new SrqAttr(4, 1, 0));
        opened.push(srq);
        MemoryRegion a = mr(Access.LOCAL_WRITE);
        srq.postRecv(new RecvWorkRequest().wrId(1).sge(a, 0, 64));
        a.close();
        assertTrue(a.isClosed());
    }

    /**
     * A BIND_MW of a type-2 window to MR m on one thread, m's deregistration on another: either the
     * deregistration is refused (the bind came first and holds m) or the bind fails MW_BIND_ERR (m
     * was gone); never both succeed, which would leave a window granting access to a deregistered
     * region. 500 rounds.
     */
    @Test
    void aDeregRacingABindEitherRefusesOrMakesTheBindFail() throws Exception {
        ExecutorService poster = Executors.newSingleThreadExecutor();
        int refused = 0;
        int deregistered = 0;
        try {
            for (int round = 0; round < 500; round++) {
                CompletionQueue c = ctx.createCq(4);
                QueuePair qp = rtsQp(c);
                MemoryRegion m = mr(Access.LOCAL_WRITE | Access.REMOTE_WRITE | Access.MW_BIND);
                MemoryWindow w = pd.allocMw(MwType.TYPE_2);
                SendWorkRequest bind = new SendWorkRequest().wrId(round).flags(SendFlag.SIGNALED)
                        .bindMw(w, w.nextRkey(), m, m.address(), 4096, Access.REMOTE_WRITE);
                CyclicBarrier start = new CyclicBarrier(2);
                Future<?> posted = poster.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    qp.postSend(bind);
                    return null;
                });
                start.await(10, TimeUnit.SECONDS);
                for (int spin = round % 64; spin > 0; spin--) {
                    Thread.onSpinWait();
                }
                String refusal = null;
                try {
                    m.close();
                } catch (VerbsException e) {
                    refusal = e.getMessage();
                }
                posted.get(10, TimeUnit.SECONDS);
                WorkCompletion wc = pollOne(c);
                int r = round;
                String why = refusal;
                if (refusal == null) {
                    deregistered++;
                    assertEquals(WcStatus.MW_BIND_ERR, wc.status(),
                            () -> "round " + r + ": the region was deregistered and the bind still bound a window to it");
                    assertFalse(((KeyHolder) w).memKey().valid, "the window grants nothing");
                } else {
                    refused++;
                    assertEquals(WcStatus.SUCCESS, wc.status(),
                            () -> "round " + r + ": deregistration refused (" + why + ") but no bind");
                }
                w.close();
                qp.close();
                if (!m.isClosed()) {
                    m.close();
                }
                c.close();
            }
        } finally {
            poster.shutdownNow();
        }
        assertEquals(500, refused + deregistered);
    }
}
