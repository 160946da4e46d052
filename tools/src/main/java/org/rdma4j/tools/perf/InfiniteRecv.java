// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import org.rdma4j.verbs.WorkCompletion;

/**
 * send_bw --run_infinitely's receiver (perftest's run_iter_bw_infinitely_server): takes every
 * receive completion and posts that receive again (cycling through the receive area), so the
 * rx_depth receives {@link Loops#setRecvWqes} posted once stay posted for the whole run; nothing is
 * measured or printed. perftest's server never ends; this one ends when the sender has stopped
 * sending and starts the closing exchange (the bytes wait on the exchange connection; with -R,
 * whose messages travel on a QP, it runs until stopped, as perftest). Allocation-free once made.
 */
final class InfiniteRecv {
    /** How often, while no completion arrives, the exchange connection is looked at. */
    private static final long PEER_CHECK_NS = 1_000_000;

    private final Loops l;
    /** Per QP, receives posted so far: where the next one lands in the cycle. */
    private final long[] posted;

    InfiniteRecv(Loops l) {
        this.l = l;
        PerfParams p = l.p;
        posted = new long[p.numQps];
        java.util.Arrays.fill(posted, p.useSrq ? p.rxDepth / p.numQps : p.rxDepth);
    }

    /** Receives until the peer starts the closing exchange on {@code comm}; how many arrived. */
    long run(Comm comm) throws PerfFailure {
        PerfParams p = l.p;
        boolean ud = p.connection == Connection.UD;
        long size = p.size;
        int len = (int) (ud ? size + PerfParams.UD_ADDITION : size);
        boolean cycle = len <= p.cycleBuffer / 2;
        long skew = ud ? p.cacheLine - PerfParams.UD_ADDITION : 0;
        long rc = 0;
        long lastCheck = l.now();
        while (true) {
            int ne = l.poll(l.r.recvCq, Loops.CTX_POLL_BATCH);
            if (ne > 0) {
                for (int k = 0; k < ne; k++) {
                    WorkCompletion c = l.wc[k];
                    int id = (int) c.wrId();
                    l.checkRecvWc(c, rc);
                    rc++;
                    l.postRecv(id);
                    posted[id]++;
                    if (cycle) {
                        long a = l.nextAddr(l.recvAddr[id], posted[id], l.r.recvAddress(id) + skew, size);
                        l.recvAddr[id] = a;
                        l.rwr[id].setSge(0, a, len, l.r.mr.lkey());
                    }
                }
                l.progress.lazySet(l.now());
            } else if (l.now() - lastCheck >= PEER_CHECK_NS) {
                lastCheck = l.now();
                if (comm.peerWaiting()) {
                    return rc;
                }
            } else {
                Thread.onSpinWait();
            }
        }
    }
}
