// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.Test;

class CqPollerTest {
    /** A CQ whose completions the test queues; counts polls. */
    static final class FakeCq implements CompletionQueue {
        final Deque<Long> queued = new ArrayDeque<>();
        int polls;
        /** Poll number at which {@link #arriving} shows up (0 = never). */
        int arriveAtPoll;
        long arriving;

        @Override public Context context() { return null; }
        @Override public int cqe() { return 16; }
        @Override public CompletionChannel channel() { return null; }
        @Override public int poll(WorkCompletion[] wcs) { return poll(wcs, wcs.length); }

        @Override
        public int poll(WorkCompletion[] wcs, int max) {
            polls++;
            if (polls == arriveAtPoll) {
                queued.add(arriving);
            }
            int n = 0;
            while (n < max && !queued.isEmpty()) {
                long id = queued.poll();
                wcs[n++].set(id, id < 0 ? WcStatus.REM_ACCESS_ERR : WcStatus.SUCCESS, WcOpcode.RDMA_WRITE, 0, 1, 0, 0,
                        0, 0, 0);
            }
            return n;
        }

        @Override public void reqNotify(boolean solicitedOnly) { }
        @Override public void resize(int cqe) { }
        @Override public void ackEvents(int n) { }
        @Override public boolean isClosed() { return false; }
        @Override public void close() { }
    }

    /** Counts idles and resets. */
    static final class CountingIdle implements IdleStrategy {
        int idles;
        int resets;

        @Override public void idle() { idles++; }
        @Override public void reset() { resets++; }
    }

    @Test
    void pollWithIdleWaitsUntilACompletionArrives() {
        FakeCq cq = new FakeCq();
        cq.arriveAtPoll = 5;
        cq.arriving = 77;
        CountingIdle idle = new CountingIdle();
        WorkCompletion[] wcs = WorkCompletion.array(4);
        assertEquals(1, cq.poll(wcs, idle, Long.MAX_VALUE));
        assertEquals(77, wcs[0].wrId());
        assertEquals(4, idle.idles);
        assertTrue(idle.resets >= 1);
    }

    @Test
    void pollWithIdleReturnsZeroWhenTheTimeRunsOut() {
        FakeCq cq = new FakeCq();
        WorkCompletion[] wcs = WorkCompletion.array(4);
        assertEquals(0, cq.poll(wcs, IdleStrategy.busySpin(), 0));
        assertEquals(0, cq.poll(wcs, IdleStrategy.sleeping(1_000), 2_000_000));
        assertTrue(cq.polls >= 3);
    }

    @Test
    void pollWithIdleReturnsAtOnceWhenCompletionsAreThere() {
        FakeCq cq = new FakeCq();
        cq.queued.add(1L);
        cq.queued.add(2L);
        CountingIdle idle = new CountingIdle();
        assertEquals(2, cq.poll(WorkCompletion.array(4), idle, 0));
        assertEquals(0, idle.idles);
        assertEquals(1, cq.polls);
    }

    @Test
    void pollerHandsOutABatchOneAtATime() {
        FakeCq cq = new FakeCq();
        cq.queued.add(1L);
        cq.queued.add(2L);
        cq.queued.add(3L);
        CqPoller poller = new CqPoller(cq, 2, IdleStrategy.busySpin());
        assertEquals(1, poller.poll().wrId());
        assertEquals(1, poller.pending());
        assertEquals(2, poller.take(0).wrId());
        assertEquals(3, poller.take(0).wrId());
        assertNull(poller.poll());
        assertNull(poller.poll(0));
        assertEquals(0, poller.pending());
        assertSame(cq, poller.cq());
    }

    @Test
    void takeTimesOutWithEtimedout() {
        CqPoller poller = new CqPoller(new FakeCq(), 1, IdleStrategy.busySpin());
        VerbsException e = assertThrows(VerbsException.class, () -> poller.take(1_000_000));
        assertEquals(Errno.ETIMEDOUT, e.errno());
    }

    @Test
    void takeSuccessTurnsAFailedCompletionIntoEio() {
        FakeCq cq = new FakeCq();
        cq.queued.add(5L);
        cq.queued.add(-6L);
        CqPoller poller = new CqPoller(cq);
        assertEquals(5, poller.takeSuccess(0).wrId());
        VerbsException e = assertThrows(VerbsException.class, () -> poller.takeSuccess(0));
        assertEquals(Errno.EIO, e.errno());
        assertTrue(e.getMessage().contains("REM_ACCESS_ERR"), e.getMessage());
    }

    @Test
    void backoffSpinsThenYieldsThenParksLongerUpToItsLimit() {
        IdleStrategy.Backoff b = (IdleStrategy.Backoff) IdleStrategy.backoff(2, 1, 1_000, 4_000);
        assertEquals(0, b.nextParkNs());
        b.idle();
        b.idle();
        assertEquals(0, b.nextParkNs()); // the yield is next
        b.idle();
        assertEquals(1_000, b.nextParkNs());
        b.idle();
        assertEquals(2_000, b.nextParkNs());
        b.idle();
        b.idle();
        assertEquals(4_000, b.nextParkNs());
        b.reset();
        assertEquals(0, b.nextParkNs());
    }

    @Test
    void badIdleSettingsAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.sleeping(0));
        assertThrows(IllegalArgumentException.class, () -> IdleStrategy.backoff(1, 1, 10, 5));
        assertThrows(IllegalArgumentException.class, () -> new CqPoller(new FakeCq(), 0, IdleStrategy.busySpin()));
    }
}
