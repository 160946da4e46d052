// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.util.concurrent.atomic.AtomicLong;
import org.rdma4j.tools.cli.Spin;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.RecvWorkRequest;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.VerbsException;
import org.rdma4j.verbs.WorkCompletion;

/**
 * The measured loops' state and steps, with perftest's counters, signaling and address cycling, and the
 * bandwidth loops ({@code run_iter_bw}, {@code run_iter_bw_server}); the latency loops are {@link
 * LatencyLoops}, send_bw -b's is {@link BiSendLoop}. Everything they touch is allocated before the run:
 * work requests, completion slots and timestamp arrays; a loop allocates only when it fails. Timestamps
 * are {@link System#nanoTime()} less a base taken before the run (so 0 means "not recorded"). Every
 * wait gives up after the exchange timeout without progress. One thread.
 */
final class Loops {
    static final int CTX_POLL_BATCH = 16;

    final PerfParams p;
    final PerfResources r;
    private final long base = System.nanoTime() - 1;
    private final long stallNs;
    /** The pacing of every busy wait (spin, yield, stall limit), reused from wait to wait. */
    final Spin spin;
    /** Per QP, the work request posted (the head of its list with -l). */
    final SendWorkRequest[] wr;
    /** Per QP, its -l list of {@code postList} work requests, chained from {@link #wr} (one without -l). */
    private final SendWorkRequest[][] lists;
    final RecvWorkRequest[] rwr;
    final WorkCompletion[] wc = WorkCompletion.array(CTX_POLL_BATCH);
    final long[] scnt;
    final long[] ccnt;
    final long[] myAddr;
    final long[] remAddr;
    final long[] sendAddr;
    final long[] recvAddr;
    long[] tposted;
    long[] tcompleted;
    /** Samples counted in a -D run's sampling window (perftest's iters after a duration run). */
    long durationIters;
    volatile DurationClock clock;
    /** Work done so far, for the progress bar (iterations, or elapsed ns in a -D run). */
    final AtomicLong progress = new AtomicLong();

    Loops(PerfParams p, PerfResources r) {
        this.p = p;
        this.r = r;
        this.stallNs = p.exchangeTimeoutS * 1_000_000_000L;
        this.spin = new Spin(stallNs);
        int q = p.numQps;
        wr = new SendWorkRequest[q];
        rwr = new RecvWorkRequest[q];
        lists = new SendWorkRequest[q][p.postList];
        for (int i = 0; i < q; i++) {
            for (int j = 0; j < p.postList; j++) {
                lists[i][j] = new SendWorkRequest();
            }
            wr[i] = lists[i][0];
            rwr[i] = new RecvWorkRequest();
        }
        scnt = new long[q];
        ccnt = new long[q];
        myAddr = new long[q];
        remAddr = new long[q];
        sendAddr = new long[q];
        recvAddr = new long[q];
        int n = p.isDuration() ? 1 : (int) Math.min(Integer.MAX_VALUE - 8, (long) p.iters * q);
        tposted = new long[Math.max(1, n)];
        tcompleted = new long[Math.max(1, n)];
    }

    long now() {
        return System.nanoTime() - base;
    }

    /**
     * ctx_set_send_reg_wqes for the current size: one work request per QP, aimed at the peer's area;
     * with -l a list of {@code postList} chained ones per QP, each the next message in the cycle
     * buffer, every cq_mod-th signaled, posted whole with its addresses fixed (as perftest does).
     */
    void setSendWqes(PerfDest[] remote) {
        long size = p.size;
        boolean cycle = size <= p.cycleBuffer / 2;
        for (int i = 0; i < p.numQps; i++) {
            sendAddr[i] = r.sendAddress(i);
            myAddr[i] = sendAddr[i];
            remAddr[i] = remote[i].vaddr();
            SendWorkRequest[] list = lists[i];
            long local = sendAddr[i];
            long far = remAddr[i];
            for (int j = 0; j < list.length; j++) {
                if (j > 0 && cycle) {
                    local = nextAddr(local, j - 1, myAddr[i], size);
                    far = nextAddr(far, j - 1, remAddr[i], size);
                }
                SendWorkRequest w = list[j];
                w.clear();
                w.wrId(i);
                w.sge(local, (int) size, r.mr.lkey());
                switch (p.verb()) {
                    case WRITE -> w.write(far, remote[i].rkey());
                    case READ -> w.read(far, remote[i].rkey());
                    case ATOMIC -> {
                        if (p.atomicType == PerfParams.AtomicType.FETCH_AND_ADD) {
                            w.fetchAdd(far, remote[i].rkey(), PerfParams.ATOMIC_ADD_VALUE);
                        } else {
                            w.compareAndSwap(far, remote[i].rkey(), 0, PerfParams.ATOMIC_SWAP_VALUE);
                        }
                    }
                    case SEND -> {
                        w.send();
                        if (p.connection == Connection.UD) {
                            w.ud(r.ahs[i], remote[i].qpn(), PerfParams.QKEY);
                        }
                    }
                }
                boolean signaled = list.length == 1 ? p.cqMod == 1 : (j + 1) % p.cqMod == 0;
                int flags = signaled ? SendFlag.SIGNALED : 0;
                if ((p.verb() == Verb.SEND || p.verb() == Verb.WRITE) && size <= p.inlineSize) {
                    flags |= SendFlag.INLINE;
                }
                w.flags(flags);
                w.next(j + 1 < list.length ? list[j + 1] : null);
            }
            scnt[i] = 0;
            ccnt[i] = 0;
        }
    }

    /** ctx_set_recv_wqes: posts rx_depth receives per QP (cycling through the receive area in BW tests). */
    void setRecvWqes() throws PerfFailure {
        long size = p.size;
        int perQp = p.useSrq ? p.rxDepth / p.numQps : p.rxDepth;
        boolean ud = p.connection == Connection.UD;
        long len = ud ? size + PerfParams.UD_ADDITION : size;
        for (int i = 0; i < p.numQps; i++) {
            long start = r.recvAddress(i) + (ud ? p.cacheLine - PerfParams.UD_ADDITION : 0);
            recvAddr[i] = start;
            RecvWorkRequest w = rwr[i];
            w.clear();
            w.wrId(i);
            w.sge(start, (int) len, r.mr.lkey());
            long cur = start;
            for (int j = 0; j < perQp; j++) {
                postRecv(i);
                if (p.isBw() && size <= p.cycleBuffer / 2) {
                    cur = nextAddr(cur, j, start, size);
                    w.setSge(0, cur, (int) len, r.mr.lkey());
                }
            }
            w.setSge(0, start, (int) len, r.mr.lkey());
        }
    }

    /** increase_loc_addr / increase_rem_addr: the next message's address, wrapping in the cycle buffer. */
    long nextAddr(long addr, long count, long prim, long size) {
        long inc = PerfParams.inc(size, p.cacheLine);
        long next = addr + inc;
        if ((count + 1) % (p.cycleBuffer / inc) == 0) {
            next = prim;
        }
        return next;
    }

    void postRecv(int i) throws PerfFailure {
        try {
            if (r.srq != null) {
                r.srq.postRecv(rwr[i]);
            } else {
                r.qps[i].postRecv(rwr[i]);
            }
        } catch (VerbsException e) {
            throw PerfFailure.of("Couldn't post recv Qp = " + i, e);
        }
    }

    void postSend(int i, long count) throws PerfFailure {
        try {
            r.qps[i].postSend(wr[i]);
        } catch (VerbsException e) {
            throw PerfFailure.of(String.format("Couldn't post send: qp %d scnt=%d", i, count), e);
        }
    }

    int poll(CompletionQueue cq, int max) throws PerfFailure {
        try {
            return cq.poll(wc, max);
        } catch (VerbsException e) {
            throw PerfFailure.of("poll CQ failed -1", e);
        }
    }

    /** ctx_notify_events: waits for the CQ's event (bounded), acknowledges it and re-arms. */
    void notifyEvents() throws PerfFailure {
        try {
            CompletionQueue cq = r.channel.getEvent(stallNs / 1_000_000);
            if (cq == null) {
                throw new PerfFailure("Couldn't get CQ event",
                        "rdma4j: no completion event for " + p.exchangeTimeoutS + " s");
            }
            cq.ackEvents(1);
            cq.reqNotify(false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PerfFailure("Couldn't get CQ event", "rdma4j: interrupted");
        } catch (VerbsException e) {
            throw PerfFailure.of("Couldn't request CQ notification", e);
        }
    }

    PerfFailure stalled(String what) {
        return new PerfFailure(" Completion timeout",
                "rdma4j: no " + what + " for " + p.exchangeTimeoutS + " s (the peer stopped or packets are lost)");
    }

    void checkSendWc(WorkCompletion w, long s, long c) throws PerfFailure {
        if (!w.isSuccess()) {
            throw new PerfFailure(" Completion with error at client",
                    String.format(" Failed status %d: wr_id %d syndrom 0x%x", w.status().value(), (int) w.wrId(),
                            w.vendorErr()),
                    String.format("scnt=%d, ccnt=%d", s, c),
                    "rdma4j: " + w.status().description());
        }
    }

    void checkRecvWc(WorkCompletion w, long rcnt) throws PerfFailure {
        if (!w.isSuccess()) {
            throw new PerfFailure(" Completion with error at server",
                    String.format(" Failed status %d: wr_id %d syndrom 0x%x", w.status().value(), (int) w.wrId(),
                            w.vendorErr()),
                    String.format(" rcnt=%d", rcnt), "rdma4j: " + w.status().description());
        }
    }

    void startClock() {
        if (p.isDuration()) {
            clock = new DurationClock(now(), p.duration, p.margin);
            durationIters = 0;
            clockCountdown = 0;
        }
    }

    /**
     * Calls of {@link #clockState} that share one clock read in a loop that does not block. perftest's
     * -D reads a state its SIGALRM handler sets; here the loops poll the clock, and a read
     * ({@code clock_gettime}, 25-40 ns under kvm-clock) on every post was 18 % of an in-process 8-byte
     * write_bw: one read per 64 calls ends a run at most 64 posts late (microseconds) and counts the
     * samples and times the window at the same reads, so the rate stays consistent. With -e every call
     * reads (each iteration waits for an event anyway).
     */
    static final int CLOCK_READ_EVERY = 64;
    private int clockCountdown;
    private int clockLast;

    int clockState() {
        if (clock == null) {
            return DurationClock.SAMPLE;
        }
        if (--clockCountdown > 0) {
            return clockLast;
        }
        clockCountdown = p.useEvent ? 1 : CLOCK_READ_EVERY;
        return clockLast = clock.state(now());
    }

    /** run_iter_bw: keep tx_depth messages in flight per QP, a completion every cq_mod of them. */
    void bw() throws PerfFailure {
        int q = p.numQps;
        boolean dur = p.isDuration();
        long iters = dur ? Long.MAX_VALUE : p.iters;
        // as perftest: a duration run has iters = 0, so only the clock ends it
        long totIters = dur ? 0 : (long) p.iters * q;
        long totS = 0;
        long totC = 0;
        long size = p.size;
        boolean cycle = size <= p.cycleBuffer / 2;
        boolean noPeak = p.noPeak || dur;
        int list = p.postList; // -l: messages per post
        startClock();
        if (!dur && noPeak) {
            tposted[0] = now();
        }
        Spin wait = spin.begin();
        while (totS < totIters || totC < totIters || (dur && clockState() != DurationClock.END)) {
            for (int i = 0; i < q; i++) {
                SendWorkRequest w = wr[i];
                while ((scnt[i] < iters) && (scnt[i] - ccnt[i] + list) <= p.txDepth) {
                    if (list == 1 && p.cqMod > 1 && scnt[i] % p.cqMod == 0 && !(!dur && scnt[i] == iters - 1)) {
                        w.flags(w.sendFlags() & ~SendFlag.SIGNALED);
                    }
                    if (!noPeak) {
                        tposted[(int) totS] = now();
                    }
                    if (dur && clockState() == DurationClock.END) {
                        break;
                    }
                    postSend(i, scnt[i]);
                    if (cycle && list == 1) {
                        long n = scnt[i];
                        long a = nextAddr(sendAddr[i], n, myAddr[i], size);
                        sendAddr[i] = a;
                        w.setSge(0, a, (int) size, r.mr.lkey());
                        if (p.verb() != Verb.SEND) {
                            w.rdma(nextAddr(w.remoteAddr(), n, remAddr[i], size), w.rkey());
                        }
                    }
                    scnt[i] += list;
                    totS += list;
                    if (list == 1 && (scnt[i] % p.cqMod == p.cqMod - 1 || (!dur && scnt[i] == iters - 1))) {
                        w.flags(w.sendFlags() | SendFlag.SIGNALED);
                    }
                }
                if (dur && clockState() == DurationClock.END) {
                    break;
                }
            }
            if (totC < totIters || (dur && totC < totS)) {
                if (p.useEvent) {
                    notifyEvents();
                }
                int ne = poll(r.sendCq, CTX_POLL_BATCH);
                if (ne > 0) {
                    wait.begin();
                    for (int k = 0; k < ne; k++) {
                        WorkCompletion c = wc[k];
                        checkSendWc(c, totS, totC);
                        int id = (int) c.wrId();
                        ccnt[id] += p.cqMod;
                        totC += p.cqMod;
                        if (!noPeak) {
                            if (totC > totIters) {
                                tcompleted[(int) (totIters - 1)] = now();
                            } else {
                                tcompleted[(int) (totC - 1)] = now();
                            }
                        }
                        if (dur && clockState() == DurationClock.SAMPLE) {
                            durationIters += p.cqMod;
                        }
                    }
                    progress.lazySet(dur ? now() : totC);
                } else if (wait.idle()) {
                    throw stalled("send completion");
                }
            } else if (dur && clockState() != DurationClock.END) {
                Thread.onSpinWait();
            }
        }
        if (noPeak && !dur) {
            tcompleted[0] = now();
        }
        if (dur) {
            tposted[0] = clock.sampleStart;
            tcompleted[0] = clock.sampleEnd;
        }
    }

    /**
     * run_iter_bw_server: receives and reposts (cycling through the receive area) until every message
     * is in. As perftest's check_alive, a sender that stops (UD and UC drop what finds no receive)
     * ends the run after the exchange timeout with what arrived, reported with a warning.
     */
    long bwServer(java.io.PrintWriter err) throws PerfFailure {
        int q = p.numQps;
        boolean dur = p.isDuration();
        long iters = dur ? Long.MAX_VALUE : p.iters;
        long totIters = dur ? 0 : (long) p.iters * q;
        long[] rcntQp = new long[q];
        long[] postedQp = new long[q];
        int perQp = p.useSrq ? p.rxDepth / p.numQps : p.rxDepth;
        for (int i = 0; i < q; i++) {
            postedQp[i] = perQp;
        }
        long size = p.size;
        boolean ud = p.connection == Connection.UD;
        long len = ud ? size + PerfParams.UD_ADDITION : size;
        boolean cycle = len <= p.cycleBuffer / 2;
        long rc = 0;
        boolean firstRx = true;
        Spin wait = spin.begin();
        while (rc < totIters || (dur && (clock == null || clockState() != DurationClock.END))) {
            if (p.useEvent) {
                notifyEvents();
            }
            int ne = poll(r.recvCq, CTX_POLL_BATCH);
            if (ne > 0) {
                if (firstRx) {
                    if (dur) {
                        startClock();
                    } else {
                        tposted[0] = now();
                    }
                    firstRx = false;
                }
                wait.begin();
                for (int k = 0; k < ne; k++) {
                    WorkCompletion c = wc[k];
                    int id = (int) c.wrId();
                    checkRecvWc(c, rcntQp[id]);
                    rcntQp[id]++;
                    rc++;
                    if (dur && clockState() == DurationClock.SAMPLE) {
                        durationIters++;
                    }
                    if (dur || postedQp[id] + 1 <= iters) {
                        postRecv(id);
                        postedQp[id]++;
                        if (cycle) {
                            long a = nextAddr(recvAddr[id], postedQp[id], r.recvAddress(id)
                                    + (ud ? p.cacheLine - PerfParams.UD_ADDITION : 0), size);
                            recvAddr[id] = a;
                            rwr[id].setSge(0, a, (int) len, r.mr.lkey());
                        }
                    }
                }
                progress.lazySet(dur ? now() : rc);
            } else if (wait.idle()) {
                if (rc == 0 && !dur) {
                    throw stalled("SEND from the peer");
                }
                err.printf(" Did not get Message for %d Seconds, exiting..%n Total Received=%d, Total Iters Required=%d%n",
                        p.exchangeTimeoutS, rc, totIters);
                break;
            }
        }
        if (!dur) {
            tcompleted[0] = now();
        } else {
            if (clock == null) {
                throw stalled("SEND from the peer");
            }
            tposted[0] = clock.sampleStart;
            tcompleted[0] = clock.sampleEnd;
        }
        return rc;
    }
}
