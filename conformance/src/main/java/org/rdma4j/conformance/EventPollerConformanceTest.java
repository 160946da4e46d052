// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.EventPoller;
import org.rdma4j.verbs.ProtectionDomain;
import org.rdma4j.verbs.QpInitAttr;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.SrqAttr;
import org.rdma4j.verbs.VerbsResource;

/**
 * {@link EventPoller}: one thread waits on several completion channels and an asynchronous event
 * queue together, as a C program polls {@code channel->fd} and {@code context->async_fd}.
 */
@Rule({"S-LIFE-2", "S-LIFE-5"})
public class EventPollerConformanceTest extends AbstractVerbsTest {
    private EventPoller poller;
    private final CompletionChannel[] channels = new CompletionChannel[3];
    private final CompletionQueue[] cqs = new CompletionQueue[3];

    private void setUp() {
        poller = ctx.createEventPoller();
        for (int i = 0; i < channels.length; i++) {
            channels[i] = track(ctx.createCompletionChannel());
            cqs[i] = track(ctx.createCq(8, channels[i], 0));
            poller.add(channels[i]);
        }
        poller.add(ctx);
    }

    @AfterEach
    void closePoller() {
        if (poller != null) {
            poller.close();
        }
    }

    /** Makes {@code ctx} raise one asynchronous event (LAST_WQE_REACHED of a QP on an SRQ). */
    private QueuePair raiseAsyncEvent() {
        ProtectionDomain pd = allocPd(ctx);
        SharedReceiveQueue srq = track(pd.createSrq(new SrqAttr(4, 1, 0)));
        CompletionQueue cq = createCq(ctx, 4);
        QueuePair qp = createQp(pd, new QpInitAttr(QpType.RC, cq, cq).srq(srq));
        QpBringUp.toInit(qp, QP_ALL, DEFAULT_QKEY);
        QpBringUp.to(qp, QpState.ERR);
        return qp;
    }

    /** What the last poll reported, source to events; exactly {@code n} entries. */
    private Map<VerbsResource, Integer> reported(int n) {
        Map<VerbsResource, Integer> m = new HashMap<>();
        for (int i = 0; i < n; i++) {
            assertEquals(null, m.put(poller.source(i), poller.events(i)), "a source reported twice");
        }
        return m;
    }

    /** Polls until {@code n} sources are ready at once (they become ready one by one); bounded. */
    private Map<VerbsResource, Integer> pollUntil(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (true) {
            int got = poller.poll(TIMEOUT_MS);
            if (got >= n || System.nanoTime() - deadline > 0) {
                assertEquals(n, got, "sources ready");
                return reported(got);
            }
            Thread.yield();
        }
    }

    @Test
    void pollWithNothingReadyTimesOutWithZero() throws Exception {
        setUp();
        assertEquals(0, poller.poll(0));
        assertEquals(0, poller.poll(QUIET_MS), "nothing ready: the timeout ends the poll");
    }

    @Test
    void eachSourceWakesThePollerAndIsReportedPrecisely() throws Exception {
        setUp();
        for (int i = 0; i < channels.length; i++) {
            int k = i;
            try (Waiters w = Waiters.start(1, () -> poller.poll(TIMEOUT_MS))) {
                Triggers.completionEvent(this, cqs[k]);
                assertTrue(w.awaitDone(TIMEOUT_MS), "the event woke the poller");
                assertEquals(1, w.value(0), "only channel " + k + " is ready");
            }
            assertEquals(Map.of(channels[i], EventPoller.IN), reported(1));
            assertTrue(channels[i].hasEvent());
            assertSame(cqs[i], channels[i].getEvent(0));
            cqs[i].ackEvents(1);
            assertEquals(0, poller.poll(0), "level-triggered: read, so no longer ready");
        }
        try (Waiters w = Waiters.start(1, () -> poller.poll(TIMEOUT_MS))) {
            QueuePair qp = raiseAsyncEvent();
            assertTrue(w.awaitDone(TIMEOUT_MS), "the async event woke the poller");
            assertEquals(1, w.value(0));
            assertEquals(Map.of(ctx, EventPoller.IN), reported(1));
            AsyncEvent e = ctx.getAsyncEvent(0);
            assertEquals(AsyncEventType.QP_LAST_WQE_REACHED, e.type());
            assertSame(qp, e.qp());
            ctx.ackAsyncEvent(e);
        }
        assertEquals(0, poller.poll(0));
    }

    @Test
    void severalReadySourcesAreReportedTogetherUntilRead() throws Exception {
        setUp();
        Triggers.completionEvent(this, cqs[0]);
        Triggers.completionEvent(this, cqs[2]);
        assertEquals(Map.of(channels[0], EventPoller.IN, channels[2], EventPoller.IN), pollUntil(2));
        assertEquals(2, poller.poll(0), "unread events stay ready");
        assertSame(cqs[0], channels[0].getEvent(0));
        cqs[0].ackEvents(1);
        assertEquals(1, poller.poll(0));
        assertSame(channels[2], poller.source(0));
        assertSame(cqs[2], channels[2].getEvent(0));
        cqs[2].ackEvents(1);
        assertEquals(0, poller.poll(0));
    }

    @Test
    void wakeupEndsAPollInProgressOrTheNextOne() throws Exception {
        setUp();
        try (Waiters w = Waiters.start(1, () -> poller.poll(-1))) {
            poller.wakeup();
            assertTrue(w.awaitDone(TIMEOUT_MS), "wakeup ends poll(-1)");
            assertEquals(0, w.value(0));
        }
        poller.wakeup();
        assertEquals(0, poller.poll(-1), "a wakeup before the poll makes it return at once");
        assertEquals(0, poller.poll(0));
    }

    @Test
    void closingARegisteredChannelWakesThePollerAndReportsItOnce() throws Exception {
        setUp();
        CompletionChannel extra = ctx.createCompletionChannel();
        poller.add(extra);
        try (Waiters w = Waiters.start(1, () -> poller.poll(-1))) {
            extra.close();
            assertTrue(w.awaitDone(TIMEOUT_MS), "closing a registered channel ends poll(-1)");
            assertEquals(1, w.value(0));
        }
        assertEquals(Map.of(extra, EventPoller.CLOSED), reported(1));
        assertEquals(0, poller.poll(0), "a closed source is reported once and then dropped");
        assertFalse(poller.remove(extra));
    }

    @Test
    void closingARegisteredContextWakesThePollerAndReportsIt() throws Exception {
        setUp();
        Context other = openContext();
        poller.add(other);
        try (Waiters w = Waiters.start(1, () -> poller.poll(-1))) {
            other.close();
            assertTrue(w.awaitDone(TIMEOUT_MS), "closing a registered context ends poll(-1)");
            assertEquals(1, w.value(0));
        }
        assertEquals(Map.of(other, EventPoller.CLOSED), reported(1));
        assertEquals(0, poller.poll(0));
    }

    @Test
    void closingThePollerWakesItsPollWithEbadf() throws Exception {
        setUp();
        try (Waiters w = Waiters.start(1, () -> poller.poll(-1))) {
            poller.close();
            w.assertAllFailWith(Errno.EBADF, "closing the poller ends poll(-1)");
        }
        assertErrno(Errno.EBADF, () -> poller.poll(0));
    }

    @Test
    void registrationRules() throws Exception {
        setUp();
        assertErrno(Errno.EEXIST, () -> poller.add(channels[0]));
        assertErrno(Errno.EEXIST, () -> poller.add(ctx));
        assertTrue(poller.remove(channels[1]));
        assertFalse(poller.remove(channels[1]));
        Triggers.completionEvent(this, cqs[1]);
        assertEquals(0, poller.poll(QUIET_MS), "a removed channel is not polled");
        poller.add(channels[1]);
        assertEquals(1, poller.poll(0), "added again, its queued event shows at once");
        assertSame(channels[1], poller.source(0));
        assertSame(cqs[1], channels[1].getEvent(0));
        cqs[1].ackEvents(1);
        try (Waiters w = Waiters.start(1, () -> poller.poll(TIMEOUT_MS))) {
            assertErrno(Errno.EBUSY, () -> poller.poll(0));
            poller.wakeup();
            assertTrue(w.awaitDone(TIMEOUT_MS));
        }
    }
}
