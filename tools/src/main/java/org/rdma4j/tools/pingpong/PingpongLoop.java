// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.pingpong;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.rdma4j.verbs.QueuePair;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.SharedReceiveQueue;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The data path of ibv_*_pingpong: pp_post_recv, pp_post_send and the completion loop with its
 * rcnt/scnt accounting, one send in flight per QP and the refill of the receive queue.
 *
 * <p>The loop's body is one call ({@link #step()}), and the work for one completion another
 * ({@link #complete}): HotSpot compiles a method once it has been called often enough (C1 after a
 * few hundred calls, C2 after some thousands), but the body of a method that never returns only by
 * on-stack replacement, once its loop has gone round tens of thousands of times. With the work in
 * the loop's body, a run of 20,000 exchanges without --warmup ran interpreted for most of its length.
 * Allocation free until it fails.
 */
final class PingpongLoop {
    private final Transport t;
    private final CompletionWait waiter;
    private final List<QueuePair> qps;
    /** The SRQ (srq), else null: receives go to the first QP. */
    private final SharedReceiveQueue srq;
    private final RecvWorkRequest recvWr;
    private final SendWorkRequest sendWr;
    private final int iters;
    private final int rxDepth;
    /** Refill the receive queue when it runs this low. */
    private final int refillAt;
    private final WorkCompletion[] wc;
    /** Per QP: the wr_ids (RECV_WRID | SEND_WRID) still to complete before its next send. */
    private final int[] pending;
    private int routs;
    private int rcnt;
    private int scnt;
    /** The --warmup count until it is reached, then 0. */
    private int warmupLeft;
    /** When the timed part of the run started (after --warmup exchanges). */
    private long timedFrom;
    /** A work completion came back with an error status. */
    private boolean completionFailed;

    PingpongLoop(Settings s, CompletionWait waiter, List<QueuePair> qps, SharedReceiveQueue srq,
            RecvWorkRequest recvWr, SendWorkRequest sendWr) {
        this.t = s.transport();
        this.waiter = waiter;
        this.qps = qps;
        this.srq = srq;
        this.recvWr = recvWr;
        this.sendWr = sendWr;
        this.iters = s.iters();
        this.rxDepth = s.rxDepth();
        this.refillAt = t == Transport.SRQ ? s.numQp() : 1;
        this.wc = WorkCompletion.array(t == Transport.SRQ ? s.numQp() + s.rxDepth() : 2);
        this.pending = new int[s.numQp()];
        Arrays.fill(pending, Pingpong.RECV_WRID);
    }

    /** A completion failed with an error status (then the port counters are worth printing). */
    boolean completionFailed() {
        return completionFailed;
    }

    /** pp_post_recv: posts up to {@code n} receives and returns how many went in. */
    int postRecv(int n) {
        int i = 0;
        try {
            for (; i < n; i++) {
                if (srq != null) {
                    srq.postRecv(recvWr);
                } else {
                    qps.get(0).postRecv(recvWr);
                }
            }
        } catch (VerbsException e) {
            // as pp_post_recv: stop at the first refusal and report how many went in
        }
        return i;
    }

    /** The client's first send on every QP. */
    void sendFirst() throws PingpongFailure {
        for (int q = 0; q < pending.length; q++) {
            postSend(q);
            pending[q] |= Pingpong.SEND_WRID;
        }
    }

    /**
     * Runs until -n receives and sends completed; returns when the timed part began (the start, or
     * when both counts passed {@code warmup}).
     */
    long run(int routsAtStart, int warmup) throws PingpongFailure {
        routs = routsAtStart;
        warmupLeft = warmup;
        timedFrom = System.nanoTime();
        while (rcnt < iters || scnt < iters) {
            step();
        }
        return timedFrom;
    }

    /** One turn of the C tools' loop: wait for completions, then handle each. */
    private void step() throws PingpongFailure {
        int ne = waiter.next(wc, rcnt, scnt);
        for (int i = 0; i < ne; i++) {
            try {
                complete(wc[i]);
            } catch (PingpongFailure f) {
                // ibv_rc_pingpong's parse_single_wc reports, then its caller adds a line
                throw t == Transport.RC ? f.then("parse WC failed " + ne) : f;
            }
        }
    }

    private void complete(WorkCompletion w) throws PingpongFailure {
        if (!w.isSuccess()) {
            completionFailed = true;
            throw new PingpongFailure(String.format(Locale.ROOT, "Failed status %s (%d) for wr_id %d",
                    w.status().description(), w.status().value(), (int) w.wrId()));
        }
        int q = t == Transport.SRQ ? findQp(w.qpNum()) : 0;
        int id = (int) w.wrId();
        if (id == Pingpong.SEND_WRID) {
            ++scnt;
        } else if (id == Pingpong.RECV_WRID) {
            received();
        } else {
            throw new PingpongFailure("Completion for unknown wr_id " + id);
        }
        pending[q] &= ~id;
        if (warmupLeft > 0 && rcnt >= warmupLeft && scnt >= warmupLeft) {
            timedFrom = System.nanoTime(); // the warm-up exchanges are done: time from here
            warmupLeft = 0;
        }
        if (scnt < iters && pending[q] == 0) {
            postSend(q);
            pending[q] = Pingpong.RECV_WRID | Pingpong.SEND_WRID;
        }
    }

    /** A receive completed: refill the queue when it runs low, as the C tools, then count it. */
    private void received() throws PingpongFailure {
        if (--routs <= refillAt) {
            routs += postRecv(rxDepth - routs);
            if (routs < rxDepth) {
                throw new PingpongFailure("Couldn't post receive (" + routs + ")");
            }
        }
        ++rcnt;
    }

    private void postSend(int q) throws PingpongFailure {
        try {
            qps.get(q).postSend(sendWr);
        } catch (VerbsException e) {
            throw PingpongFailure.of("Couldn't post send", e);
        }
    }

    private int findQp(int qpn) throws PingpongFailure {
        for (int i = 0; i < qps.size(); i++) {
            if (qps.get(i).qpn() == qpn) {
                return i;
            }
        }
        throw new PingpongFailure(String.format(Locale.ROOT, "Couldn't find QPN %06x", qpn));
    }
}
