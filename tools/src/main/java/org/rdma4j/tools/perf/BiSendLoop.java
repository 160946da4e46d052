// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import org.rdma4j.tools.cli.Spin;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;
import org.rdma4j.verbs.WorkCompletion;

/**
 * send_bw -b: perftest's {@code run_iter_bi} over RC, both sides sending and receiving at once. Each
 * side posts SENDs as tx depth allows, reposts every receive that completes (cycling through the
 * receive area) and polls both CQs. As in perftest the server starts sending on its first receive, so
 * it does not send before the client is in the test; a -D run counts the messages received in the
 * sample window. RC only (perftest needs receive credits for UC and UD, which rdma4j does not send).
 * Allocation-free once started; one thread.
 */
final class BiSendLoop {
    private final Loops l;
    private final long[] postedQp;

    BiSendLoop(Loops l) {
        this.l = l;
        this.postedQp = new long[l.p.numQps];
    }

    /** One measured run of the current size (the send and receive work requests set). */
    void run() throws PerfFailure {
        PerfParams p = l.p;
        int q = p.numQps;
        boolean dur = p.isDuration();
        long iters = dur ? Long.MAX_VALUE : p.iters;
        long totIters = dur ? 0 : (long) p.iters * q;
        long totS = 0;
        long totC = 0;
        long totR = 0;
        long size = p.size;
        boolean cycle = size <= p.cycleBuffer / 2;
        boolean noPeak = p.noPeak || dur;
        int list = p.postList;
        java.util.Arrays.fill(postedQp, p.useSrq ? p.rxDepth / q : p.rxDepth);
        boolean sending = p.isClient(); // the server sends once the client's first message is in
        if (sending) {
            l.startClock();
        }
        if (!dur && noPeak) {
            l.tposted[0] = l.now();
        }
        Spin wait = l.spin.begin();
        while (totC < totIters || totR < totIters
                || (dur && (l.clock == null || l.clockState() != DurationClock.END))) {
            boolean progressed = false;
            for (int i = 0; sending && i < q; i++) {
                SendWorkRequest w = l.wr[i];
                while (l.scnt[i] < iters && (l.scnt[i] - l.ccnt[i] + list) <= p.txDepth) {
                    if (list == 1 && p.cqMod > 1 && l.scnt[i] % p.cqMod == 0 && !(!dur && l.scnt[i] == iters - 1)) {
                        w.flags(w.sendFlags() & ~SendFlag.SIGNALED);
                    }
                    if (dur && l.clockState() == DurationClock.END) {
                        break;
                    }
                    if (!noPeak) {
                        l.tposted[(int) totS] = l.now();
                    }
                    l.postSend(i, l.scnt[i]);
                    if (cycle && list == 1) {
                        long a = l.nextAddr(l.sendAddr[i], l.scnt[i], l.myAddr[i], size);
                        l.sendAddr[i] = a;
                        w.setSge(0, a, (int) size, l.r.mr.lkey());
                    }
                    l.scnt[i] += list;
                    totS += list;
                    progressed = true;
                    if (list == 1 && (l.scnt[i] % p.cqMod == p.cqMod - 1 || (!dur && l.scnt[i] == iters - 1))) {
                        w.flags(w.sendFlags() | SendFlag.SIGNALED);
                    }
                }
            }
            int ne = l.poll(l.r.recvCq, Loops.CTX_POLL_BATCH);
            if (ne > 0 && !sending) {
                sending = true;
                l.startClock();
            }
            for (int k = 0; k < ne; k++) {
                WorkCompletion c = l.wc[k];
                int id = (int) c.wrId();
                l.checkRecvWc(c, totR);
                totR++;
                if (dur && l.clockState() == DurationClock.SAMPLE) {
                    l.durationIters++;
                }
                if (dur || postedQp[id] + 1 <= iters) {
                    l.postRecv(id);
                    postedQp[id]++;
                    if (cycle) {
                        long a = l.nextAddr(l.recvAddr[id], postedQp[id], l.r.recvAddress(id), size);
                        l.recvAddr[id] = a;
                        l.rwr[id].setSge(0, a, (int) size, l.r.mr.lkey());
                    }
                }
                progressed = true;
            }
            if (totC < totS) {
                ne = l.poll(l.r.sendCq, Loops.CTX_POLL_BATCH);
                for (int k = 0; k < ne; k++) {
                    WorkCompletion c = l.wc[k];
                    l.checkSendWc(c, totS, totC);
                    l.ccnt[(int) c.wrId()] += p.cqMod;
                    totC += p.cqMod;
                    if (!noPeak) {
                        l.tcompleted[(int) (Math.min(totC, totIters) - 1)] = l.now();
                    }
                    progressed = true;
                }
            }
            if (progressed) {
                wait.begin();
                l.progress.lazySet(dur ? l.now() : totR);
            } else if (dur && totC >= totS && l.clock != null && l.clockState() == DurationClock.END) {
                break;
            } else if (wait.idle()) {
                throw l.stalled(totR == 0 ? "SEND from the peer" : "send or receive completion");
            }
        }
        if (noPeak && !dur) {
            l.tcompleted[0] = l.now();
        }
        if (dur) {
            l.tposted[0] = l.clock.sampleStart;
            l.tcompleted[0] = l.clock.sampleEnd;
        }
    }
}
