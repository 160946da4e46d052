// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.QpAttr;
import org.rdma4j.verbs.QpAttrMask;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WrOpcode;

/** SEMANTICS.md, "Gaps worth their own tests": SQD drain and IBV_EVENT_SQ_DRAINED. */
@Rule("S-QP-6")
public class SendQueueDrainConformanceTest extends AbstractDataPathTest {

    private static void toSqd(QpPair p, boolean notify) {
        p.a().qp().modify(new QpAttr().state(QpState.SQD).enSqdAsyncNotify(notify),
                QpAttrMask.STATE | (notify ? QpAttrMask.EN_SQD_ASYNC_NOTIFY : 0));
    }

    @Test
    void sqdWithNotifyRaisesSqDrainedAfterOutstandingWorkCompletes() throws Exception {
        QpPair p = connect(spec(QpType.RC).cap(new QpCap(32, 16, 1, 1, 0)));
        MemoryRegion src = register(p.a(), KIB_64, MR_ALL);
        MemoryRegion dst = register(p.b(), KIB_64, MR_ALL);
        fillPattern(src.segment(), 0, KIB_64, 110);
        for (int i = 0; i < 8; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.RDMA_WRITE).sge(src, i * 8192L, 8192).rdma(addr(dst, i * 8192L), dst.rkey()));
        }
        toSqd(p, true);
        AsyncEvent e = awaitAsyncEvent(ctx, AsyncEventType.SQ_DRAINED);
        assertSame(p.a().qp(), e.qp(), "the event names the drained QP");
        for (int i = 0; i < 8; i++) {
            expect(p.a().sendCq(), i, WcOpcode.RDMA_WRITE);
        }
        assertPattern(dst.segment(), 0, KIB_64, 110, "work posted before SQD completes");
        QpAttr q = p.a().qp().query();
        assertEquals(QpState.SQD, q.qpState);
        assertEquals(false, q.sqDraining, "drained");
    }

    @Test
    void sqdWithoutNotifyRaisesNoEvent() throws Exception {
        QpPair p = connect(spec(QpType.RC));
        toSqd(p, false);
        awaitQpState(p.a().qp(), QpState.SQD);
        assertNoAsyncEvent(ctx, AsyncEventType.SQ_DRAINED, QUIET_MS);
    }

    @Test
    void workPostedInSqdWaitsUntilRts() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, 100, 111);
        toSqd(p, false);
        awaitQpState(p.a().qp(), QpState.SQD);
        p.a().qp().postSend(wr(1, WrOpcode.RDMA_WRITE).sge(src, 0, 100).rdma(addr(dst, 0), dst.rkey()));
        assertNoCompletion(p.a().sendCq(), "a drained send queue starts nothing new");
        assertGuardAround(dst, 0, 0, "nothing written while in SQD");
        QpBringUp.to(p.a().qp(), QpState.RTS);
        expect(p.a().sendCq(), 1, WcOpcode.RDMA_WRITE);
        assertPattern(dst.segment(), 0, 100, 111, "written after SQD -> RTS");
    }

    /**
     * rxe_qp_chk_attr: while the send queue is still draining the QP may only go to ERR (or RESET, which
     * any state may); SQD -> RTS is refused until the drain ends. B posts no receive at first, so A's
     * SEND is RNR NAKed (rnr_retry 7: for ever) and stays outstanding.
     */
    @Test
    void leavingSqdWhileTheSendQueueIsStillDrainingFailsEinval() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        fillPattern(src.segment(), 0, 64, 112);
        p.a().qp().postSend(wr(1, WrOpcode.SEND).sge(src, 0, 64));
        assertNoCompletion(p.a().sendCq(), "no receive at B yet: RNR NAKed");
        toSqd(p, false);
        awaitQpState(p.a().qp(), QpState.SQD);
        assertTrue(p.a().qp().query().sqDraining, "the SEND is still outstanding");
        assertErrno(Errno.EINVAL, () -> p.a().qp().modify(new QpAttr().state(QpState.RTS), QpAttrMask.STATE));
        assertEquals(QpState.SQD, p.a().qp().state(), "still in SQD");
        postRecv(p.b(), 2, dst, 0, 64);
        expect(p.a().sendCq(), 1, WcOpcode.SEND);
        expect(p.b().recvCq(), 2, WcOpcode.RECV);
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (p.a().qp().query().sqDraining && System.nanoTime() - deadline < 0) {
            Thread.yield();
        }
        assertFalse(p.a().qp().query().sqDraining, "drained once the SEND completed");
        QpBringUp.to(p.a().qp(), QpState.RTS);
        assertQpState(p.a().qp(), QpState.RTS);
    }

    @Test
    void receivesKeepWorkingInSqd() {
        QpPair p = connect(spec(QpType.RC));
        MemoryRegion a = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion b = register(p.b(), PAGE_SIZE, MR_ALL);
        toSqd(p, false);
        awaitQpState(p.a().qp(), QpState.SQD);
        postRecv(p.a(), 1, a, 0, 64);
        p.b().qp().postSend(wr(2, WrOpcode.SEND).sge(b, 0, 32));
        expect(p.b().sendCq(), 2, WcOpcode.SEND);
        expect(p.a().recvCq(), 1, WcOpcode.RECV);
    }
}
