// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.CompletionChannel;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Errno;
import org.rdma4j.verbs.MemoryRegion;
import org.rdma4j.verbs.QpCap;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QpType;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;
import org.rdma4j.verbs.WrOpcode;

/** SEMANTICS.md, Control path, "CQ". */
@Rule({"S-CQ-1", "S-CQ-2", "S-CQ-3"})
public class CompletionQueueConformanceTest extends AbstractVerbsTest {

    @Test
    void cqWithOneEntryIsCreated() {
        try (CompletionQueue cq = ctx.createCq(1)) {
            assertTrue(cq.cqe() >= 1, "cqe " + cq.cqe());
            assertSame(ctx, cq.context());
            assertNull(cq.channel());
        }
    }

    @Test
    void cqWithMaxEntriesIsCreated() {
        int max = deviceAttr().maxCqe();
        try (CompletionQueue cq = ctx.createCq(max)) {
            assertTrue(cq.cqe() >= max, "cqe " + cq.cqe() + " < " + max);
        }
    }

    @Test
    void cqAboveMaxFailsEinval() {
        int max = deviceAttr().maxCqe();
        assumeTrue(max < Integer.MAX_VALUE);
        assertErrno(Errno.EINVAL, () -> track(ctx.createCq(max + 1)));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1})
    void cqWithoutEntriesFailsEinval(int cqe) {
        assertErrno(Errno.EINVAL, () -> track(ctx.createCq(cqe)));
    }

    @Test
    void everyCompVectorBelowCountWorks() {
        int n = deviceAttr().numCompVectors();
        for (int v = 0; v < n; v++) {
            track(ctx.createCq(4, null, v));
        }
    }

    @Test
    void compVectorAtCountFailsEinval() {
        int n = deviceAttr().numCompVectors();
        assertErrno(Errno.EINVAL, () -> track(ctx.createCq(4, null, n)));
        assertErrno(Errno.EINVAL, () -> track(ctx.createCq(4, null, -1)));
    }

    @Test
    void cqReportsItsChannel() {
        CompletionChannel ch = track(ctx.createCompletionChannel());
        CompletionQueue cq = track(ctx.createCq(4, ch, 0));
        assertSame(ch, cq.channel());
        assertSame(ctx, ch.context());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 7})
    void resizeGivesAtLeastTheRequest(int cqe) {
        CompletionQueue cq = createCq(ctx, 64);
        cq.resize(cqe);
        assertTrue(cq.cqe() >= cqe, "cqe " + cq.cqe() + " after resize to " + cqe);
    }

    @Test
    void resizeUpToMaxWorksAndAboveFailsEinval() {
        int max = deviceAttr().maxCqe();
        CompletionQueue cq = createCq(ctx, 4);
        if (max < Integer.MAX_VALUE) {
            assertErrno(Errno.EINVAL, () -> cq.resize(max + 1));
        }
        assertErrno(Errno.EINVAL, () -> cq.resize(0));
        cq.resize(max);
        assertTrue(cq.cqe() >= max);
    }

    @Test
    void pollOfEmptyCqReturnsZero() {
        CompletionQueue cq = createCq(ctx, 4);
        assertEquals(0, cq.poll(WorkCompletion.array(4)));
        assertEquals(0, cq.poll(WorkCompletion.array(4), 1));
    }

    /**
     * Queues {@code n} receive completions on B's receive CQ: B has n receives posted, A sends n
     * messages and waits for their (ACK-driven) completions, so the responder has completed them.
     */
    private QpPair queueReceiveCompletions(int n, int recvCqe) {
        CompletionQueue rcq = createCq(peer(), recvCqe);
        QpPair p = connect(spec(QpType.RC).recvCqB(rcq).cap(new QpCap(Math.max(16, n), Math.max(16, n), 1, 1, 0)));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), (long) n * 64, MR_ALL);
        for (int i = 0; i < n; i++) {
            postRecv(p.b(), 100 + i, dst, i * 64L, 64);
        }
        for (int i = 0; i < n; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.SEND).sge(src, 0, 8 + i));
        }
        for (int i = 0; i < n; i++) {
            expect(p.a().sendCq(), i, WcOpcode.SEND);
        }
        return p;
    }

    @Test
    void pollFillsAtMostTheGivenNumberOfSlots() {
        QpPair p = queueReceiveCompletions(5, 16);
        WorkCompletion[] wcs = WorkCompletion.array(8);
        int got = 0;
        long deadline = System.nanoTime() + TIMEOUT_MS * 1_000_000L;
        while (got < 5 && System.nanoTime() < deadline) {
            int n = p.b().recvCq().poll(wcs, 2);
            assertTrue(n >= 0 && n <= 2, "poll(wcs, 2) returned " + n);
            for (int i = 0; i < n; i++) {
                assertEquals(100 + got + i, wcs[i].wrId(), wcs[i].toString());
                assertEquals(WcOpcode.RECV, wcs[i].opcode());
                assertEquals(8 + got + i, wcs[i].byteLen());
            }
            got += n;
        }
        assertEquals(5, got);
        assertEquals(0, p.b().recvCq().poll(wcs));
    }

    @Test
    void resizeBelowQueuedCompletionsFailsEinvalAndLosesNothing() {
        QpPair p = queueReceiveCompletions(8, 16);
        CompletionQueue cq = p.b().recvCq();
        assertErrno(Errno.EINVAL, () -> cq.resize(4));
        assertTrue(cq.cqe() >= 8, "a refused resize keeps the size");
        for (int i = 0; i < 8; i++) {
            WorkCompletion wc = expect(cq, 100 + i, WcOpcode.RECV);
            assertEquals(8 + i, wc.byteLen());
        }
        assertNoCompletion(cq, "exactly 8 completions were queued");
    }

    @Test
    void resizeUpKeepsQueuedCompletionsInOrder() {
        QpPair p = queueReceiveCompletions(6, 8);
        CompletionQueue cq = p.b().recvCq();
        cq.resize(100);
        assertTrue(cq.cqe() >= 100);
        for (int i = 0; i < 6; i++) {
            expect(cq, 100 + i, WcOpcode.RECV);
        }
        assertNoCompletion(cq, "exactly 6 completions were queued");
    }

    @Test
    void overflowRaisesCqErrAndMovesItsQpsToErr() throws Exception {
        CompletionQueue tiny = createCq(ctx, 1);
        int n = tiny.cqe() + 2;
        QpPair p = connect(spec(QpType.RC).sendCqA(tiny).capA(new QpCap(n + 4, 4, 1, 1, 0)));
        MemoryRegion src = register(p.a(), PAGE_SIZE, MR_ALL);
        MemoryRegion dst = register(p.b(), PAGE_SIZE, MR_ALL);
        for (int i = 0; i < n; i++) {
            p.a().qp().postSend(wr(i, WrOpcode.RDMA_WRITE).sge(src, 0, 8).rdma(addr(dst, 0), dst.rkey()));
        }
        AsyncEvent e = awaitAsyncEvent(ctx, AsyncEventType.CQ_ERR);
        assertSame(tiny, e.cq(), "the event names the overflowed CQ");
        awaitQpState(p.a().qp(), QpState.ERR);
    }

    @Test
    void receiveCompletionsNameTheirQp() {
        QpPair p = queueReceiveCompletions(3, 16);
        for (int i = 0; i < 3; i++) {
            WorkCompletion wc = expect(p.b().recvCq(), 100 + i, WcStatus.SUCCESS);
            assertEquals(p.b().qpn(), wc.qpNum(), "qp_num of a receive completion");
        }
    }
}
