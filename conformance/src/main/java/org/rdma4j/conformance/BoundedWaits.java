// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.ArrayList;
import java.util.List;
import org.rdma4j.verbs.AsyncEvent;
import org.rdma4j.verbs.AsyncEventType;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.Context;
import org.rdma4j.verbs.QpState;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.WcOpcode;
import org.rdma4j.verbs.WcStatus;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The suites' waits for what should happen, each bounded: a completion on a CQ (failing after the
 * timeout), an asynchronous event, a QP's state; and the checks that nothing happens, which watch
 * for a quiet period. The suites reach them through {@link AbstractVerbsTest}'s methods of the same
 * names; the running test's setup decides what a lossy link excuses and whether QP states can be read.
 */
final class BoundedWaits {
    /** The running test's setup lacks {@link Capability#RELIABLE_LINK} (tests run one at a time). */
    static volatile boolean lossyLink;
    /** The running test's setup's {@link ConformanceSetup#qpStateUnreported()} (tests run one at a time). */
    static volatile String qpStateUnreported;

    private BoundedWaits() {}

    /** Spins on {@code cq} until one completion arrives; fails the test after {@code timeoutMs}. */
    static WorkCompletion pollOne(CompletionQueue cq, long timeoutMs) {
        WorkCompletion[] slot = WorkCompletion.array(1);
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        int spins = 0;
        while (true) {
            if (cq.poll(slot, 1) == 1) {
                WorkCompletion wc = new WorkCompletion();
                wc.copyFrom(slot[0]);
                return wc;
            }
            if (System.nanoTime() - deadline > 0) {
                return fail("no work completion on " + cq + " within " + timeoutMs + " ms");
            }
            if (++spins < 2_000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** Watches {@code cq} for {@code quietMs} and fails if any completion arrives. */
    static void assertNoCompletion(CompletionQueue cq, long quietMs, String why) {
        WorkCompletion[] slot = WorkCompletion.array(1);
        long deadline = System.nanoTime() + quietMs * 1_000_000L;
        while (System.nanoTime() - deadline < 0) {
            if (cq.poll(slot, 1) == 1) {
                fail("unexpected completion " + slot[0] + ": " + why);
            }
            Thread.yield();
        }
    }

    /** The next completion on {@code cq} must be {@code wrId} with {@code status}. */
    static WorkCompletion expect(CompletionQueue cq, long wrId, WcStatus status) {
        WorkCompletion wc = pollOne(cq, AbstractVerbsTest.TIMEOUT_MS);
        assumeNakNotLost(wc, status);
        assertEquals(status, wc.status(), () -> "status of " + wc);
        assertEquals(wrId, wc.wrId(), () -> "wr_id of " + wc);
        return wc;
    }

    /**
     * Ends the test as skipped when a NAK that would have given {@code expected} was lost on a lossy
     * link: the responder moved to ERR when it sent the NAK, so it answers no retransmission and the
     * requester ends RETRY_EXC_ERR (IBTA; rxe alike). On a reliable link this is a failure as usual.
     */
    static void assumeNakNotLost(WorkCompletion wc, WcStatus expected) {
        boolean nak = expected == WcStatus.REM_ACCESS_ERR || expected == WcStatus.REM_INV_REQ_ERR
                || expected == WcStatus.REM_OP_ERR;
        assumeFalse(lossyLink && nak && wc.status() == WcStatus.RETRY_EXC_ERR, () -> "the link lost the NAK that"
                + " would have completed " + expected + " (the responder is in ERR and answers no retry): " + wc);
    }

    /** The next completion on {@code cq} must be a successful {@code opcode} for {@code wrId}. */
    static WorkCompletion expect(CompletionQueue cq, long wrId, WcOpcode opcode) {
        WorkCompletion wc = expect(cq, wrId, WcStatus.SUCCESS);
        assertEquals(opcode, wc.opcode(), () -> "opcode of " + wc);
        return wc;
    }

    /**
     * Waits for an asynchronous event of {@code type} on {@code c} (acking it and any other event seen
     * on the way); fails after {@code timeoutMs}.
     */
    static AsyncEvent awaitAsyncEvent(Context c, AsyncEventType type, long timeoutMs) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        List<AsyncEventType> seen = new ArrayList<>();
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            AsyncEvent e = left > 0 ? c.getAsyncEvent(left) : null;
            if (e == null) {
                return fail("no " + type + " async event within " + timeoutMs + " ms (saw " + seen + ")");
            }
            c.ackAsyncEvent(e);
            if (e.type() == type) {
                return e;
            }
            seen.add(e.type());
        }
    }

    /** Watches {@code c} for {@code quietMs} and fails on an event of {@code type}. */
    static void assertNoAsyncEvent(Context c, AsyncEventType type, long quietMs) throws InterruptedException {
        long deadline = System.nanoTime() + quietMs * 1_000_000L;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                return;
            }
            AsyncEvent e = c.getAsyncEvent(left);
            if (e == null) {
                return;
            }
            c.ackAsyncEvent(e);
            if (e.type() == type) {
                fail("unexpected async event " + e);
            }
        }
    }

    /** Waits until {@code ibv_query_qp} reports {@code state}; fails after the timeout. */
    static void awaitQpState(QueuePair qp, QpState state) {
        assumeQpStateReported();
        long deadline = System.nanoTime() + AbstractVerbsTest.TIMEOUT_MS * 1_000_000L;
        QpState s;
        while ((s = qp.query().qpState) != state) {
            if (System.nanoTime() - deadline > 0) {
                fail("QP 0x" + Integer.toHexString(qp.qpn()) + " is " + s + ", expected " + state);
            }
            Thread.yield();
        }
    }

    /** {@code ibv_query_qp} must report {@code state} now. */
    static void assertQpState(QueuePair qp, QpState state) {
        assumeQpStateReported();
        assertEquals(state, qp.query().qpState, () -> "state of QP 0x" + Integer.toHexString(qp.qpn()));
    }

    /** Aborts the test here, with the setup's reason, when its device's query_qp reports no state. */
    static void assumeQpStateReported() {
        String why = qpStateUnreported;
        assumeTrue(why == null, () -> "the QP's state cannot be checked here: " + why);
    }
}
