// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.tools.perf;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import org.rdma4j.tools.cli.Spin;
import org.rdma4j.verbs.CompletionQueue;
import org.rdma4j.verbs.SendFlag;
import org.rdma4j.verbs.SendWorkRequest;

/**
 * The latency tests' measured loops, one per perftest function ({@code run_iter_lat_write},
 * {@code run_iter_lat}, {@code run_iter_lat_send}), on the work requests, completion slots, counters and
 * timestamp arrays of a {@link Loops}: a sample is a post's timestamp in {@code tposted}. Allocation-free
 * once started; every wait gives up after the exchange timeout without progress. Stateless; one thread.
 */
final class LatencyLoops {
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    private LatencyLoops() {
    }

    /** run_iter_lat_write: ping-pong of RDMA WRITEs, each side spinning on the last byte of its buffer. */
    static void write(Loops l) throws PerfFailure {
        PerfParams p = l.p;
        PerfResources r = l.r;
        long size = p.size;
        SendWorkRequest w = l.wr[0];
        int flags = SendFlag.SIGNALED | (size <= p.inlineSize ? SendFlag.INLINE : 0);
        w.flags(flags);
        w.setSge(0, l.sendAddr[0], (int) size, r.mr.lkey());
        long postOff = size - 1;
        long pollOff = p.numQps * r.area + size - 1;
        var seg = r.buf;
        boolean dur = p.isDuration();
        long iters = dur ? Long.MAX_VALUE : p.iters;
        long s = 0;
        long c = 0;
        long rc = 0;
        l.startClock();
        CompletionQueue cq = r.sendCq;
        while (s < iters || c < iters || rc < iters) {
            if ((rc < iters) && !(s < 1 && p.server)) {
                rc++;
                byte want = (byte) rc;
                Spin wait = l.spin.begin();
                while ((byte) BYTE.getVolatile(seg, pollOff) != want) {
                    if (wait.idle()) {
                        throw l.stalled("RDMA WRITE from the peer");
                    }
                    if ((wait.polls() & 15) == 0) {
                        // give a device that receives on the polling thread its chance
                        if (l.poll(cq, 1) > 0) {
                            l.checkSendWc(l.wc[0], s, c);
                            c++;
                        }
                        if ((wait.polls() & 1023) == 0 && dur && l.clockState() == DurationClock.END) {
                            break;
                        }
                    }
                }
            }
            if (dur && l.clockState() == DurationClock.END) {
                break;
            }
            if (s < iters) {
                long t = l.now();
                if (!dur) {
                    l.tposted[(int) s] = t;
                }
                seg.set(ValueLayout.JAVA_BYTE, postOff, (byte) ++s);
                l.postSend(0, s);
                l.progress.lazySet(s);
            }
            if (c < s) {
                Spin wait = l.spin.begin();
                int ne;
                while ((ne = l.poll(cq, 1)) == 0) {
                    if (wait.idle()) {
                        throw l.stalled("send completion");
                    }
                }
                l.checkSendWc(l.wc[0], s, c);
                c += ne;
                if (dur && l.clockState() == DurationClock.SAMPLE) {
                    l.durationIters++;
                }
            }
        }
    }

    /** run_iter_lat: READ or ATOMIC round trips from the client, one at a time. */
    static void readAtomic(Loops l) throws PerfFailure {
        PerfParams p = l.p;
        PerfResources r = l.r;
        SendWorkRequest w = l.wr[0];
        w.flags(SendFlag.SIGNALED);
        w.setSge(0, l.sendAddr[0], (int) p.size, r.mr.lkey());
        boolean dur = p.isDuration();
        long iters = dur ? Long.MAX_VALUE : p.iters;
        long s = 0;
        l.startClock();
        CompletionQueue cq = r.sendCq;
        while (s < iters) {
            if (dur && l.clockState() == DurationClock.END) {
                break;
            }
            long t = l.now();
            if (!dur) {
                l.tposted[(int) s] = t;
            }
            s++;
            l.postSend(0, s);
            l.progress.lazySet(s);
            if (p.useEvent) {
                l.notifyEvents();
            }
            Spin wait = l.spin.begin();
            int ne;
            do {
                ne = l.poll(cq, 1);
                if (ne > 0) {
                    l.checkSendWc(l.wc[0], s, s);
                    if (dur && l.clockState() == DurationClock.SAMPLE) {
                        l.durationIters++;
                    }
                } else if (wait.idle()) {
                    throw l.stalled("completion");
                }
            } while (!p.useEvent && ne == 0);
        }
    }

    /** run_iter_lat_send: SEND ping-pong; the client sends first. */
    static void send(Loops l) throws PerfFailure {
        PerfParams p = l.p;
        PerfResources r = l.r;
        SendWorkRequest w = l.wr[0];
        int baseFlags = p.size <= p.inlineSize ? SendFlag.INLINE : 0;
        w.flags(baseFlags);
        w.setSge(0, l.sendAddr[0], (int) p.size, r.mr.lkey());
        boolean dur = p.isDuration();
        long iters = dur ? Long.MAX_VALUE : p.iters;
        int sizePerQp = p.useSrq ? p.rxDepth / p.numQps : p.rxDepth;
        long s = 0;
        long rc = 0;
        boolean firstRx = true;
        if (!dur) {
            l.startClock();
        }
        while (s < iters || rc < iters) {
            if (rc < iters && !(s < 1 && p.isClient())) {
                if (p.useEvent) {
                    l.notifyEvents();
                }
                Spin wait = l.spin.begin();
                int ne;
                do {
                    ne = l.poll(r.recvCq, 1);
                    if (dur && l.clock != null && l.clockState() == DurationClock.END) {
                        break;
                    }
                    if (ne > 0) {
                        if (firstRx) {
                            if (dur) {
                                l.startClock();
                            }
                            firstRx = false;
                        }
                        l.checkRecvWc(l.wc[0], rc);
                        rc++;
                        if (dur && l.clockState() == DurationClock.SAMPLE) {
                            l.durationIters++;
                        }
                        if (dur || rc + sizePerQp <= iters) {
                            l.postRecv((int) l.wc[0].wrId());
                        }
                    } else {
                        if (wait.idle()) {
                            throw l.stalled("SEND from the peer");
                        }
                        if ((wait.polls() & 1023) == 0 && dur && l.clock == null && p.isClient()) {
                            // never reached: the client sends first
                            break;
                        }
                    }
                } while (!p.useEvent && ne == 0);
            }
            if (dur && l.clock == null && p.isClient() && s == 0) {
                l.startClock();
            }
            if (dur && l.clock != null && l.clockState() == DurationClock.END) {
                break;
            }
            if (s < iters) {
                long t = l.now();
                if (!dur) {
                    l.tposted[(int) s] = t;
                }
                s++;
                boolean poll = false;
                if (s % p.cqMod == 0 || (!dur && s == iters)) {
                    poll = true;
                    w.flags(baseFlags | SendFlag.SIGNALED);
                }
                l.postSend(0, s);
                l.progress.lazySet(s);
                if (poll) {
                    if (p.useEvent) {
                        l.notifyEvents();
                    }
                    Spin wait = l.spin.begin();
                    int ne;
                    do {
                        ne = l.poll(r.sendCq, 1);
                        if (ne == 0 && wait.idle()) {
                            throw l.stalled("send completion");
                        }
                    } while (!p.useEvent && ne == 0);
                    if (ne > 0) {
                        l.checkSendWc(l.wc[0], s, s);
                    }
                    w.flags(baseFlags);
                }
            }
        }
    }
}
