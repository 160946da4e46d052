// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.SrqAttrMask;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WrOpcode;

/**
 * SEMANTICS.md, Control path, "Blocking calls ... return when their channel or context is closed;
 * events of a destroyed object are not delivered afterwards": the context's asynchronous event queue;
 * and "every event returned about a QP, CQ or SRQ is acknowledged before the object is destroyed".
 */
@Rule({"S-LIFE-2", "S-LIFE-3", "S-LIFE-6"})
public class AsyncEventConformanceTest extends AbstractVerbsTest {

    /** Waits (bounded) until {@code c} reports a queued asynchronous event. */
    static void awaitHasAsyncEvent(Context c) {
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (!c.hasAsyncEvent()) {
            assertTrue(System.nanoTime() - deadline < 0, "no async event queued within " + TIMEOUT_MS + " ms");
            Thread.yield();
        }
    }

    @Test
    void closingTheContextWakesEveryWaiterWithEbadf() throws Exception {
        Context other = openContext();
        try (Waiters w = Waiters.start(4, () -> other.getAsyncEvent(-1))) {
            other.close();
            w.assertAllFailWith(Errno.EBADF, "closing the context must end every getAsyncEvent(-1)");
        }
        assertErrno(Errno.EBADF, () -> other.getAsyncEvent(0));
    }

    @Test
    void aRefusedContextCloseLeavesTheWaitersWaiting() throws Exception {
        Context other = openContext();
        ProtectionDomain pd = other.allocPd();
        try (Waiters w = Waiters.start(2, () -> other.getAsyncEvent(-1))) {
            assertErrno(Errno.EBUSY, other::close);
            assertFalse(w.awaitDone(QUIET_MS), "a close refused with EBUSY must not wake the waiters");
            pd.close();
            other.close();
            w.assertAllFailWith(Errno.EBADF, "the successful close wakes them");
        }
    }

    @Test
    void lastWqeReachedOfADestroyedQpIsNotDelivered() throws Exception {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(8, 1, 0)));
        CompletionQueue cq = createCq(ctx, 8);
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).srq(srq));
        QpBringUp.toInit(qp, QP_ALL, DEFAULT_QKEY);
        QpBringUp.to(qp, QpState.ERR); // a QP on an SRQ entering ERR raises LAST_WQE_REACHED
        awaitHasAsyncEvent(ctx);
        qp.close();
        assertFalse(ctx.hasAsyncEvent(), "the destroyed QP's event is gone from the queue");
        assertNull(ctx.getAsyncEvent(QUIET_MS), "an event of a destroyed QP must not be delivered");
    }

    @Test
    @Requires(value = Capability.SELF_LOOPBACK, why = "the test's QP sends to itself")
    void srqLimitOfADestroyedSrqIsNotDeliveredAndOtherDestroysKeepIt() throws Exception {
        SrqLimitRaised raised = raiseSrqLimit();
        SharedReceiveQueue srq = raised.srq();
        QueuePair qp = raised.qp();
        awaitHasAsyncEvent(ctx);
        qp.close();
        assertTrue(ctx.hasAsyncEvent(), "destroying the QP leaves the SRQ's event queued");
        srq.close();
        assertFalse(ctx.hasAsyncEvent(), "the destroyed SRQ's event is gone from the queue");
        assertNull(ctx.getAsyncEvent(QUIET_MS), "an event of a destroyed SRQ must not be delivered");
    }

    @Test
    void cqErrOfADestroyedCqIsNotDelivered() throws Exception {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        CompletionQueue scq = createCq(ctx, 4);
        CompletionQueue cq = ctx.createCq(1);
        int n = cq.cqe() + 1;
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, scq, cq).cap(new QpCap(1, n, 1, 1, 0)));
        QpBringUp.toInit(qp, QP_ALL, DEFAULT_QKEY);
        for (int i = 0; i < n; i++) {
            qp.postRecv(new RecvWorkRequest().wrId(i).sge(mr, 64L * i, 64));
        }
        QpBringUp.to(qp, QpState.ERR); // n flushed receives overflow the CQ: CQ_ERR, not read
        awaitHasAsyncEvent(ctx);
        qp.close();
        cq.close();
        assertFalse(ctx.hasAsyncEvent(), "the destroyed CQ's (and QP's) events are gone from the queue");
        assertNull(ctx.getAsyncEvent(QUIET_MS), "nothing of the destroyed QP or CQ may be delivered");
    }

    @Test
    void eventsAreDeliveredInOrderAndOnlyOnce() throws Exception {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(8, 1, 0)));
        CompletionQueue cq = createCq(ctx, 8);
        QueuePair q1 = createQp(pd, new QpInitAttr(QpType.RC, cq, cq).srq(srq));
        QueuePair q2 = createQp(pd, new QpInitAttr(QpType.RC, cq, cq).srq(srq));
        QpBringUp.toInit(q1, QP_ALL, DEFAULT_QKEY);
        QpBringUp.toInit(q2, QP_ALL, DEFAULT_QKEY);
        QpBringUp.to(q1, QpState.ERR);
        AsyncEvent e1 = awaitAsyncEvent(ctx, AsyncEventType.QP_LAST_WQE_REACHED);
        QpBringUp.to(q2, QpState.ERR);
        AsyncEvent e2 = awaitAsyncEvent(ctx, AsyncEventType.QP_LAST_WQE_REACHED);
        assertSame(q1, e1.qp());
        assertSame(q2, e2.qp());
        assertEquals(AsyncEventType.QP_LAST_WQE_REACHED, e2.type());
        assertNull(ctx.getAsyncEvent(QUIET_MS), "each event once");
    }

    // ---------------------------------------------------------------- acknowledgements (S-LIFE-6)

    /**
     * Takes events from {@code c} until one of {@code type}, acknowledging none: the others go to
     * {@code held}, for the caller to acknowledge. Fails after the timeout.
     */
    static AsyncEvent takeUnacked(Context c, AsyncEventType type, List<AsyncEvent> held)
            throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            AsyncEvent e = left > 0 ? c.getAsyncEvent(left) : null;
            if (e == null) {
                return fail("no " + type + " async event within " + TIMEOUT_MS + " ms (held " + held + ")");
            }
            if (e.type() == type) {
                return e;
            }
            held.add(e);
        }
    }

    /** An SRQ and the self-connected RC QP on it whose SEND to itself took the SRQ below its limit. */
    private record SrqLimitRaised(SharedReceiveQueue srq, QueuePair qp) {
    }

    /**
     * An SRQ of two receives armed with limit 2 and an RC QP on it that sends to itself once: the
     * receive it consumes raises SRQ_LIMIT_REACHED.
     */
    private SrqLimitRaised raiseSrqLimit() throws Exception {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        SharedReceiveQueue srq = pd.createSrq(new SrqAttr(8, 1, 0));
        CompletionQueue cq = createCq(ctx, 16);
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, createCq(ctx, 16)).srq(srq));
        bringUpSelfConnected(qp, QpState.RTS);
        srq.postRecv(new RecvWorkRequest().wrId(1).sge(mr, 0, 64));
        srq.postRecv(new RecvWorkRequest().wrId(2).sge(mr, 64, 64));
        srq.modify(new SrqAttr(0, 0, 2), SrqAttrMask.LIMIT);
        qp.postSend(wr(3, WrOpcode.SEND).sge(mr, 512, 16)); // to itself: consumes one receive
        expect(cq, 3, WcOpcode.SEND);
        return new SrqLimitRaised(srq, qp);
    }

    /** {@code r} refuses to close with EBUSY until {@code e} (and {@code held}) are acknowledged, then closes. */
    private void assertCloseWaitsForTheAcknowledgement(AutoCloseable r, AsyncEvent e, List<AsyncEvent> held)
            throws Exception {
        assertErrno(Errno.EBUSY, r::close);
        assertErrno(Errno.EBUSY, r::close); // a refused close changes nothing
        for (AsyncEvent h : held) {
            ctx.ackAsyncEvent(h);
        }
        if (held.stream().noneMatch(e::equals)) {
            assertErrno(Errno.EBUSY, r::close);
        }
        ctx.ackAsyncEvent(e);
        assertErrno(Errno.EINVAL, () -> ctx.ackAsyncEvent(e)); // the second acknowledgement of one event
        r.close();
        assertErrno(Errno.EINVAL, () -> ctx.ackAsyncEvent(e)); // the object is gone: nothing outstanding
    }

    @Test
    void qpWithAnUnacknowledgedEventRefusesToCloseUntilItIsAcknowledged() throws Exception {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(8, 1, 0)));
        CompletionQueue cq = createCq(ctx, 8);
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, cq, cq).srq(srq));
        QpBringUp.toInit(qp, QP_ALL, DEFAULT_QKEY);
        QpBringUp.to(qp, QpState.ERR); // a QP on an SRQ entering ERR raises LAST_WQE_REACHED
        List<AsyncEvent> held = new ArrayList<>();
        AsyncEvent e = takeUnacked(ctx, AsyncEventType.QP_LAST_WQE_REACHED, held);
        assertSame(qp, e.qp());
        assertCloseWaitsForTheAcknowledgement(qp, e, held);
    }

    @Test
    void cqWithAnUnacknowledgedCqErrRefusesToCloseUntilItIsAcknowledged() throws Exception {
        ProtectionDomain pd = allocPd(ctx);
        MemoryRegion mr = register(pd, PAGE_SIZE, MR_ALL);
        CompletionQueue scq = createCq(ctx, 4);
        CompletionQueue cq = ctx.createCq(1);
        int n = cq.cqe() + 1;
        QueuePair qp = pd.createQp(new QpInitAttr(QpType.RC, scq, cq).cap(new QpCap(1, n, 1, 1, 0)));
        QpBringUp.toInit(qp, QP_ALL, DEFAULT_QKEY);
        for (int i = 0; i < n; i++) {
            qp.postRecv(new RecvWorkRequest().wrId(i).sge(mr, 64L * i, 64));
        }
        QpBringUp.to(qp, QpState.ERR); // n flushed receives overflow the CQ: CQ_ERR
        List<AsyncEvent> held = new ArrayList<>();
        AsyncEvent e = takeUnacked(ctx, AsyncEventType.CQ_ERR, held);
        assertSame(cq, e.cq());
        List<AsyncEvent> ofQp = held.stream().filter(h -> h.qp() == qp).toList();
        held.removeAll(ofQp);
        for (AsyncEvent h : ofQp) {
            ctx.ackAsyncEvent(h);
        }
        qp.close();
        assertCloseWaitsForTheAcknowledgement(cq, e, held);
    }

    @Test
    @Requires(value = Capability.SELF_LOOPBACK, why = "the test's QP sends to itself")
    void srqWithAnUnacknowledgedLimitEventRefusesToCloseUntilItIsAcknowledged() throws Exception {
        SrqLimitRaised raised = raiseSrqLimit();
        SharedReceiveQueue srq = raised.srq();
        QueuePair qp = raised.qp();
        List<AsyncEvent> held = new ArrayList<>();
        AsyncEvent e = takeUnacked(ctx, AsyncEventType.SRQ_LIMIT_REACHED, held);
        assertSame(srq, e.srq());
        List<AsyncEvent> ofQp = held.stream().filter(h -> h.qp() == qp).toList();
        held.removeAll(ofQp);
        for (AsyncEvent h : ofQp) {
            ctx.ackAsyncEvent(h);
        }
        qp.close();
        assertCloseWaitsForTheAcknowledgement(srq, e, held);
    }

    @Test
    void acknowledgingAnEventNeverReturnedFailsEinvalAndAPortEventNeedsNoCount() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(8, 1, 0)));
        CompletionQueue cq = createCq(ctx, 8);
        QueuePair qp = createQp(pd, new QpInitAttr(QpType.RC, cq, cq));
        assertErrno(Errno.EINVAL, () -> ctx.ackAsyncEvent(AsyncEvent.ofQp(AsyncEventType.QP_FATAL, qp)));
        assertErrno(Errno.EINVAL, () -> ctx.ackAsyncEvent(AsyncEvent.ofCq(AsyncEventType.CQ_ERR, cq)));
        assertErrno(Errno.EINVAL, () -> ctx.ackAsyncEvent(AsyncEvent.ofSrq(AsyncEventType.SRQ_LIMIT_REACHED, srq)));
        ctx.ackAsyncEvent(AsyncEvent.ofPort(AsyncEventType.PORT_ACTIVE, 1)); // port events are not counted
        qp.close(); // the refused acknowledgements left no count behind
        cq.close();
    }
}
