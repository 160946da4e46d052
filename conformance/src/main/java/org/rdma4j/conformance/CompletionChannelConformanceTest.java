// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WrOpcode;

/**
 * SEMANTICS.md, Control path, "Completion channel". The CQ under test is A's receive CQ (on the
 * device under test); B sends to A.
 */
@Rule({"S-CQ-4", "S-CQ-5", "S-LIFE-2", "S-LIFE-3"})
public class CompletionChannelConformanceTest extends AbstractVerbsTest {
    private CompletionChannel ch;
    private CompletionQueue cq;
    private QpPair p;
    private MemoryRegion src;
    private MemoryRegion dst;

    private void setUp() {
        ch = track(ctx.createCompletionChannel());
        cq = track(ctx.createCq(16, ch, 0));
        p = connect(spec(QpType.RC).recvCqA(cq));
        src = register(p.b(), PAGE_SIZE, MR_ALL);
        dst = register(p.a(), 16 * 64, MR_ALL);
        for (int i = 0; i < 8; i++) {
            postRecv(p.a(), 100 + i, dst, i * 64L, 64);
        }
    }

    /** B sends one small message to A ({@code flags} besides SIGNALED) and A's receive completes. */
    private void sendToA(long id, int flags) {
        p.b().qp().postSend(wr(id, WrOpcode.SEND).flags(SendFlag.SIGNALED | flags).sge(src, 0, 16));
        expect(p.b().sendCq(), id, WcOpcode.SEND);
        expect(cq, 100 + id, WcOpcode.RECV);
    }

    @Test
    void getEventWithoutArmingReturnsNothing() throws Exception {
        setUp();
        assertNull(ch.getEvent(0));
        sendToA(0, 0);
        assertNull(ch.getEvent(QUIET_MS), "an unarmed CQ raises no event");
    }

    @Test
    void reqNotifyGivesExactlyOneEventPerArm() throws Exception {
        setUp();
        cq.reqNotify(false);
        sendToA(0, 0);
        sendToA(1, 0);
        assertSame(cq, ch.getEvent(TIMEOUT_MS), "armed CQ raises an event");
        assertNull(ch.getEvent(QUIET_MS), "two completions, one arm: one event");
        cq.ackEvents(1);

        sendToA(2, 0);
        assertNull(ch.getEvent(QUIET_MS), "not re-armed: no event");

        cq.reqNotify(false);
        sendToA(3, 0);
        assertSame(cq, ch.getEvent(TIMEOUT_MS), "re-armed CQ raises an event again");
        cq.ackEvents(1);
    }

    @Test
    void solicitedOnlyArmIgnoresUnsolicitedReceives() throws Exception {
        setUp();
        cq.reqNotify(true);
        sendToA(0, 0);
        assertNull(ch.getEvent(QUIET_MS), "an unsolicited receive must not wake a solicited-only arm");
        sendToA(1, SendFlag.SOLICITED);
        assertSame(cq, ch.getEvent(TIMEOUT_MS), "a solicited receive wakes it");
        cq.ackEvents(1);
    }

    @Test
    void solicitedOnlyArmWakesForErrorCompletions() throws Exception {
        setUp();
        cq.reqNotify(true);
        QpBringUp.to(p.a().qp(), QpState.ERR); // flushes A's 8 receives
        assertSame(cq, ch.getEvent(TIMEOUT_MS), "an error completion wakes a solicited-only arm");
        cq.ackEvents(1);
        expect(cq, 100, WcStatus.WR_FLUSH_ERR);
    }

    @Test
    void cqWithUnackedEventsCannotBeDestroyedUntilAcked() throws Exception {
        setUp();
        cq.reqNotify(false);
        sendToA(0, 0);
        assertSame(cq, ch.getEvent(TIMEOUT_MS));
        p.a().qp().close(); // the QP no longer uses the CQ: only the unacked event holds it
        assertErrno(Errno.EBUSY, cq::close);
        assertFalse(cq.isClosed());
        cq.ackEvents(1);
        cq.close();
        assertTrue(cq.isClosed());
    }

    @Test
    void channelUsedByCqCannotBeClosedEbusy() {
        CompletionChannel c = track(ctx.createCompletionChannel());
        CompletionQueue q = track(ctx.createCq(4, c, 0));
        assertErrno(Errno.EBUSY, c::close);
        q.close();
        c.close();
        assertTrue(c.isClosed());
    }

    @Test
    void oneChannelServesSeveralCqs() throws Exception {
        CompletionChannel c = track(ctx.createCompletionChannel());
        CompletionQueue scq = track(ctx.createCq(16, c, 0));
        CompletionQueue rcq = track(ctx.createCq(16, c, 0));
        QpPair q = connect(spec(QpType.RC).sendCqA(scq).recvCqA(rcq));
        MemoryRegion a = register(q.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion b = register(q.b(), PAGE_SIZE, MR_ALL);
        postRecv(q.a(), 1, a, 0, 64);
        postRecv(q.b(), 2, b, 0, 64);
        scq.reqNotify(false);
        rcq.reqNotify(false);
        q.b().qp().postSend(wr(3, WrOpcode.SEND).sge(b, 128, 8));
        q.a().qp().postSend(wr(4, WrOpcode.SEND).sge(a, 128, 8));
        expect(q.b().sendCq(), 3, WcOpcode.SEND);
        Set<CompletionQueue> woken = new HashSet<>();
        for (int i = 0; i < 2; i++) {
            CompletionQueue e = c.getEvent(TIMEOUT_MS);
            assertTrue(e == scq || e == rcq, "event from an unknown CQ " + e);
            woken.add(e);
            e.ackEvents(1);
        }
        assertEquals(Set.of(scq, rcq), woken);
        assertNull(c.getEvent(QUIET_MS));
        expect(rcq, 1, WcOpcode.RECV);
        expect(scq, 4, WcOpcode.SEND);
    }

    /** Waits (bounded) until {@code c} reports a queued event. */
    private static void awaitHasEvent(CompletionChannel c) {
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (!c.hasEvent()) {
            assertTrue(System.nanoTime() - deadline < 0, "no event queued on the channel within " + TIMEOUT_MS + " ms");
            Thread.yield();
        }
    }

    @Test
    void hasEventShowsAQueuedEventWithoutTakingIt() throws Exception {
        setUp();
        assertFalse(ch.hasEvent());
        cq.reqNotify(false);
        sendToA(0, 0);
        awaitHasEvent(ch);
        assertTrue(ch.hasEvent(), "asking does not consume the event");
        assertSame(cq, ch.getEvent(0));
        cq.ackEvents(1);
        assertFalse(ch.hasEvent());
    }

    @Test
    void closingTheChannelWakesEveryWaiterWithEbadf() throws Exception {
        CompletionChannel c = ctx.createCompletionChannel();
        try (Waiters w = Waiters.start(4, () -> c.getEvent(-1))) {
            c.close();
            w.assertAllFailWith(Errno.EBADF, "closing the channel must end every getEvent(-1)");
        }
        assertErrno(Errno.EBADF, () -> c.getEvent(0));
        assertErrno(Errno.EBADF, () -> c.getEvent(-1));
        assertFalse(c.hasEvent());
    }

    @Test
    void aRefusedCloseLeavesTheWaitersWaiting() throws Exception {
        CompletionChannel c = ctx.createCompletionChannel();
        CompletionQueue q = ctx.createCq(4, c, 0);
        try (Waiters w = Waiters.start(2, () -> c.getEvent(-1))) {
            assertErrno(Errno.EBUSY, c::close);
            assertFalse(w.awaitDone(QUIET_MS), "a close refused with EBUSY must not wake the waiters");
            assertEquals(0, w.finished());
            q.close();
            c.close();
            w.assertAllFailWith(Errno.EBADF, "the successful close wakes them");
        }
    }

    @Test
    void completionEventOfADestroyedCqIsNotDelivered() throws Exception {
        setUp();
        cq.reqNotify(false);
        sendToA(0, 0);
        awaitHasEvent(ch); // raised, not read
        p.a().qp().close();
        cq.close(); // no event was handed out, so nothing needs acking
        assertFalse(ch.hasEvent(), "the destroyed CQ's event is gone from the channel");
        assertNull(ch.getEvent(QUIET_MS), "the destroyed CQ's event must not be delivered");
    }

    @Test
    void destroyingOneCqKeepsTheOtherCqsEvents() throws Exception {
        CompletionChannel c = track(ctx.createCompletionChannel());
        CompletionQueue keep = track(ctx.createCq(16, c, 0));
        CompletionQueue gone = ctx.createCq(16, c, 0);
        Triggers.completionEvent(this, keep);
        Triggers.completionEvent(this, gone);
        gone.close();
        assertSame(keep, c.getEvent(TIMEOUT_MS), "the surviving CQ's event is still delivered");
        keep.ackEvents(1);
        assertNull(c.getEvent(QUIET_MS));
    }
}
